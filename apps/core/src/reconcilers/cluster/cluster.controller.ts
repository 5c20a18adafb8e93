import {
  ConditionType,
  LABELS,
  getCondition,
  type Cluster,
  type Condition,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { type Controller, OwnWrites } from '@capstan/kube';
import { type ServiceContext } from '@capstan/provider-kit';
import { CLUSTER_CONTROLLER } from '../../handoff/controller-names.js';
import { onRelevantChange, worthReconciling } from '../shared/object-changes.js';
import { DESCENDANT_BATCH_MS } from '../shared/requeue-delays.js';
import { ClusterReconciler, clusterKeyOf, type ClusterReconcilerDeps } from './cluster.reconciler.js';
import { CLUSTER_OWN_CONDITIONS } from './cluster.status.js';

const conditionStatus = (obj: { status?: { conditions?: Condition[] } }, type: string) => {
  const c = getCondition(obj.status?.conditions, type);
  return c ? `${c.status}:${c.message}` : undefined;
};

/** What the Cluster reads of a Machine: phase, node, readiness counters, role, ownership, deletion. */
const machineFingerprint = (m: Machine) => [
  m.status?.phase,
  m.status?.nodeRef?.name,
  conditionStatus(m, ConditionType.Ready),
  conditionStatus(m, ConditionType.Available),
  conditionStatus(m, ConditionType.UpToDate),
  m.metadata?.labels?.[LABELS.controlPlane],
  m.metadata?.ownerReferences?.map((r) => r.uid),
  m.metadata?.deletionTimestamp,
];

/** What the Cluster reads of a MachineSet or MachineDeployment: desired and counted replicas, availability. */
const scalableFingerprint = (o: MachineSet | MachineDeployment) => [
  o.spec?.replicas,
  o.status?.replicas,
  o.status?.readyReplicas,
  o.status?.availableReplicas,
  o.status?.upToDateReplicas,
  conditionStatus(o, ConditionType.Available),
  o.metadata?.ownerReferences?.map((r) => r.uid),
  o.metadata?.deletionTimestamp,
];

const keysOf = (obj: { metadata?: { namespace?: string }; spec?: { clusterName?: string } }) => {
  const key = clusterKeyOf(obj);
  return key ? [key] : [];
};

/** Registers the Cluster controller and the watches that map descendants and workload connections to Clusters. */
export function registerClusterController(
  context: ServiceContext,
  deps: Omit<ClusterReconcilerDeps, 'recorder' | 'client' | 'ownWrites' | 'outbox'>,
): Controller<Cluster> {
  const ownWrites = new OwnWrites();
  const reconciler = new ClusterReconciler({
    ...deps,
    ownWrites,
    outbox: context.outbox,
    client: context.client,
    recorder: context.recorder(CLUSTER_CONTROLLER),
  });
  const controller = context.addController<Cluster>({
    name: CLUSTER_CONTROLLER,
    for: deps.clusters,
    reconcile: reconciler.reconcile,
    // A change of a condition the controller does not own is someone else's, and worth a reconcile.
    predicate: worthReconciling(ownWrites, CLUSTER_OWN_CONDITIONS),
    maxConcurrentReconciles: context.options.concurrency,
    resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
  });
  const later = (key: string) => controller.enqueueAfter(key, DESCENDANT_BATCH_MS);
  deps.machines.addEventHandler(onRelevantChange(machineFingerprint, keysOf, later));
  deps.machineSets.addEventHandler(onRelevantChange(scalableFingerprint, keysOf, later));
  deps.machineDeployments.addEventHandler(onRelevantChange(scalableFingerprint, keysOf, later));
  deps.workloads.onClusterChange((namespace, name) => controller.enqueue(`${namespace}/${name}`));
  return controller;
}
