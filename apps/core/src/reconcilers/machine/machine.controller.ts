import { type V1Node } from '@kubernetes/client-node';
import { ANNOTATIONS, FINALIZERS, RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { BY_PROVIDER_ID, deepEqual, objectKey, type WatchEvent } from '@capstan/kube';
import { clusterChildren, defineController, watch } from '@capstan/provider-kit';
import { type ExternalObjects } from '../../external/external-objects.js';
import { ownerKeysOf } from '../../external/reference-index.js';
import { MACHINE_CONTROLLER } from '../../handoff/controller-names.js';
import { type WorkloadClusters } from '../../remote/workload-clusters.js';
import { DESCENDANT_BATCH_MS } from '../shared/requeue-delays.js';
import { MachineReconciler } from './machine.reconciler.js';
import { MACHINE_OWN_CONDITIONS } from './machine.status.js';

/** What a Machine reads of its Cluster: pausing, infrastructure and control plane progress, deletion. */
const clusterFingerprint = (c: Cluster) => [
  c.spec?.paused,
  c.metadata?.annotations?.[ANNOTATIONS.paused],
  c.status?.initialization?.infrastructureProvisioned,
  c.status?.initialization?.controlPlaneInitialized,
  c.metadata?.deletionTimestamp,
];

/**
 * What a Machine reads of its Node: identity, health conditions, info, volumes. The annotations, labels and taints
 * the core itself writes are left out, so its own node writes do not come back as reconciles; a change someone
 * else makes to them is put right on the next resync.
 */
const nodeFingerprint = (n: V1Node) => [
  n.spec?.providerID,
  n.metadata?.deletionTimestamp,
  (n.status?.conditions ?? [])
    .filter((c) => ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].includes(c.type))
    .map((c) => [c.type, c.status, c.message]),
  n.status?.nodeInfo,
  n.status?.volumesAttached?.length ?? 0,
];

/**
 * The own write that first sets spec.providerID still needs a reconcile. A Node registered after the reconcile looked
 * for it but before the Machine cache holds the providerID maps to no Machine (the Node watch finds Machines by that
 * index), so without this reconcile the Machine would wait for the resync to see its Node.
 */
export const providerIdChanged = (event: WatchEvent<Machine>): boolean =>
  event.type === 'update' && event.oldObject?.spec?.providerID !== event.object.spec?.providerID;

export interface MachineControllerDeps {
  external: ExternalObjects;
  workloads: WorkloadClusters;
}

/**
 * The Machine controller: woken by its Machines (and the own write that sets a providerID), by its Cluster's
 * changes, batched so a cluster-wide burst reconciles each Machine once, by its Node (in the workload cluster), by its
 * provider objects (in watch mode), and by its workload cluster's connection.
 */
export function machineController(deps: MachineControllerDeps) {
  return defineController<Machine>({
    name: MACHINE_CONTROLLER,
    for: RESOURCES.Machine,
    conditions: { owned: MACHINE_OWN_CONDITIONS },
    finalizer: FINALIZERS.machine,
    reconcileOwnWrite: providerIdChanged,
    wire: (kit) => {
      const machines = kit.primary;
      const clusters = kit.informer<Cluster>(RESOURCES.Cluster);
      const machinesOf = clusterChildren(machines);
      return {
        reconciler: new MachineReconciler({
          ...deps,
          clusters,
          machines,
          client: kit.context.client,
          recorder: kit.recorder,
        }),
        watches: [
          // Cluster-wide changes come in bursts (infrastructure provisioned, control plane initialized, kubeconfig
          // written): each Machine of the Cluster is reconciled once for a burst.
          watch<Cluster>(clusters, {
            map: (c) => machinesOf(c.metadata?.namespace, c.metadata?.name),
            fingerprint: clusterFingerprint,
            batchMs: DESCENDANT_BATCH_MS,
          }),
        ],
        sources: [
          (wake) =>
            deps.workloads.onClusterChange((namespace, cluster) => {
              for (const key of machinesOf(namespace, cluster)) wake(key, DESCENDANT_BATCH_MS);
            }),
          (wake) =>
            deps.workloads.onNodeChange((node, previous) => {
              if (previous && deepEqual(nodeFingerprint(previous), nodeFingerprint(node))) return;
              const providerID = node.spec?.providerID ?? previous?.spec?.providerID;
              if (!providerID) return;
              for (const machine of machines.byIndex(BY_PROVIDER_ID, providerID)) wake(objectKey(machine));
            }),
          (wake) =>
            deps.external.onChange((object) => {
              for (const key of ownerKeysOf(object, { clusters, machines }).machines) wake(key);
            }),
        ],
      };
    },
  });
}
