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
import { ClusterReconciler, clusterKeyOf, type ClusterReconcilerDeps } from './cluster.reconciler.js';
import { changedBeyondOwnStatus, onRelevantChange } from './object-changes.js';

/** Descendant changes are collected this long before the Cluster is reconciled once for all of them. */
export const DESCENDANT_BATCH_MS = 250;

/** Conditions the Cluster controller writes; a change of any other one is someone else's and worth a reconcile. */
const OWN_CONDITIONS = new Set<string>([
  ConditionType.Available,
  ConditionType.InfrastructureReady,
  ConditionType.ControlPlaneInitialized,
  ConditionType.ControlPlaneAvailable,
  ConditionType.WorkersAvailable,
  ConditionType.RemoteConnectionProbe,
  ConditionType.Deleting,
  ConditionType.Paused,
]);

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
  deps: Omit<ClusterReconcilerDeps, 'recorder' | 'client' | 'ownWrites'>,
): Controller<Cluster> {
  const ownWrites = new OwnWrites();
  const reconciler = new ClusterReconciler({
    ...deps,
    ownWrites,
    client: context.client,
    recorder: context.recorder(CLUSTER_CONTROLLER),
  });
  const controller = context.addController<Cluster>({
    name: CLUSTER_CONTROLLER,
    for: deps.clusters,
    reconcile: reconciler.reconcile,
    predicate: (event) =>
      event.type !== 'update' ||
      (!ownWrites.isOwn(event.object) &&
        changedBeyondOwnStatus(event.oldObject, event.object, OWN_CONDITIONS)),
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
