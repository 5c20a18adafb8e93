import {
  ConditionType,
  FINALIZERS,
  LABELS,
  RESOURCES,
  getCondition,
  type Cluster,
  type Condition,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { defineController, watch } from '@capstan/provider-kit';
import { type ExternalObjects } from '../../external/external-objects.js';
import { ownerKeysOf } from '../../external/reference-index.js';
import { CLUSTER_CONTROLLER } from '../../handoff/controller-names.js';
import { type WorkloadClusters } from '../../remote/workload-clusters.js';
import { DESCENDANT_BATCH_MS } from '../shared/requeue-delays.js';
import { ClusterReconciler, clusterKeyOf } from './cluster.reconciler.js';
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

export interface ClusterControllerDeps {
  external: ExternalObjects;
  workloads: WorkloadClusters;
}

/**
 * The Cluster controller: woken by its Clusters, by descendants (Machines, MachineSets, MachineDeployments) whose
 * counted fields change, batched so a burst reconciles each Cluster once, by its provider objects (in watch mode),
 * and by its workload cluster's connection.
 */
export function clusterController(deps: ClusterControllerDeps) {
  return defineController<Cluster>({
    name: CLUSTER_CONTROLLER,
    for: RESOURCES.Cluster,
    conditions: { owned: CLUSTER_OWN_CONDITIONS },
    finalizer: FINALIZERS.cluster,
    wire: (kit) => {
      const machines = kit.informer<Machine>(RESOURCES.Machine);
      return {
        reconciler: new ClusterReconciler({
          ...deps,
          clusters: kit.primary,
          machines,
          machineSets: kit.informer<MachineSet>(RESOURCES.MachineSet),
          machineDeployments: kit.informer<MachineDeployment>(RESOURCES.MachineDeployment),
          client: kit.context.client,
          recorder: kit.recorder,
        }),
        watches: [
          watch<Machine>(RESOURCES.Machine, {
            map: keysOf,
            fingerprint: machineFingerprint,
            batchMs: DESCENDANT_BATCH_MS,
          }),
          watch<MachineSet>(RESOURCES.MachineSet, {
            map: keysOf,
            fingerprint: scalableFingerprint,
            batchMs: DESCENDANT_BATCH_MS,
          }),
          watch<MachineDeployment>(RESOURCES.MachineDeployment, {
            map: keysOf,
            fingerprint: scalableFingerprint,
            batchMs: DESCENDANT_BATCH_MS,
          }),
        ],
        sources: [
          (wake) => deps.workloads.onClusterChange((namespace, name) => wake(`${namespace}/${name}`)),
          (wake) =>
            deps.external.onChange((object) => {
              for (const key of ownerKeysOf(object, { clusters: kit.primary, machines }).clusters) wake(key);
            }),
        ],
      };
    },
  });
}
