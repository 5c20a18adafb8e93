import { type V1Node } from '@kubernetes/client-node';
import { ANNOTATIONS, type Cluster, type Machine } from '@capstan/api';
import { BY_PROVIDER_ID, type Controller, deepEqual, OwnWrites, type WatchEvent } from '@capstan/kube';
import { type ServiceContext } from '@capstan/provider-kit';
import { MACHINE_CONTROLLER } from '../../handoff/controller-names.js';
import { onRelevantChange, worthReconciling } from '../shared/object-changes.js';
import { DESCENDANT_BATCH_MS } from '../shared/requeue-delays.js';
import { MachineReconciler, type MachineReconcilerDeps } from './machine.reconciler.js';
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
 * Which Machine changes start a reconcile: those worth it (not the controller's own status), and also the own write
 * that first sets spec.providerID. A Node registered after the reconcile looked for it but before the Machine cache
 * holds the providerID maps to no Machine (the Node watch finds Machines by that index), so without this reconcile
 * the Machine would wait for the resync to see its Node.
 */
export function machineWorthReconciling(ownWrites: OwnWrites): (event: WatchEvent<Machine>) => boolean {
  const worth = worthReconciling<Machine>(ownWrites, MACHINE_OWN_CONDITIONS);
  return (event) =>
    worth(event) ||
    (event.type === 'update' && event.oldObject?.spec?.providerID !== event.object.spec?.providerID);
}

/** Registers the Machine controller and the watches mapping Clusters and Nodes to Machines. */
export function registerMachineController(
  context: ServiceContext,
  deps: Omit<MachineReconcilerDeps, 'recorder' | 'client' | 'ownWrites' | 'outbox'>,
): Controller<Machine> {
  const ownWrites = new OwnWrites();
  const reconciler = new MachineReconciler({
    ...deps,
    ownWrites,
    outbox: context.outbox,
    client: context.client,
    recorder: context.recorder(MACHINE_CONTROLLER),
  });
  const controller = context.addController<Machine>({
    name: MACHINE_CONTROLLER,
    for: deps.machines,
    reconcile: reconciler.reconcile,
    // A change of a condition the controller does not own (HealthCheckSucceeded, UpToDate) is worth a reconcile.
    predicate: machineWorthReconciling(ownWrites),
    maxConcurrentReconciles: context.options.concurrency,
    resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
  });
  const machinesOf = (namespace: string | undefined, clusterName: string | undefined) =>
    deps.machines
      .list(namespace)
      .filter((m) => m.spec?.clusterName === clusterName)
      .map((m) => `${m.metadata!.namespace}/${m.metadata!.name}`);

  // Cluster-wide changes come in bursts (infrastructure provisioned, control plane initialized, kubeconfig written):
  // each Machine of the Cluster is reconciled once for a burst.
  const later = (key: string) => controller.enqueueAfter(key, DESCENDANT_BATCH_MS);
  deps.clusters.addEventHandler(
    onRelevantChange(clusterFingerprint, (c) => machinesOf(c.metadata?.namespace, c.metadata?.name), later),
  );
  deps.workloads.onClusterChange((namespace, cluster) => {
    for (const key of machinesOf(namespace, cluster)) later(key);
  });
  deps.workloads.onNodeChange((node, previous) => {
    if (previous && deepEqual(nodeFingerprint(previous), nodeFingerprint(node))) return;
    const providerID = node.spec?.providerID ?? previous?.spec?.providerID;
    if (!providerID) return;
    for (const machine of deps.machines.byIndex(BY_PROVIDER_ID, providerID)) {
      controller.enqueue(`${machine.metadata!.namespace}/${machine.metadata!.name}`);
    }
  });
  return controller;
}
