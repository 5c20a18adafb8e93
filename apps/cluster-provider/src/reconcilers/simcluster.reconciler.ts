import {
  ConditionType,
  LABELS,
  type Cluster,
  type SimCluster,
  type SimClusterStatus,
  type SimMachine,
} from '@capstan/api';
import {
  BY_CLUSTER_NAME,
  clusterIndexValue,
  type EventRecorder,
  type Informer,
  type ReconcileResult,
} from '@capstan/kube';
import { type DeletionResult, type ReconcilerParts, type ReconcileScope } from '@capstan/provider-kit';
import {
  isSimError,
  PortAllocator,
  SimConditionReason,
  SimEventReason,
  type SimClusterOptions,
} from '@capstan/sim';
import { becameProvisioned, deletedEvent, provisionedEvent } from './simcluster.handoff.js';
import { notReadyStatus, provisionedStatus } from './simcluster.status.js';

export const SIM_CLUSTER_CONTROLLER = 'simcluster';

/** The conditions this controller writes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const SIM_CLUSTER_CONDITIONS = [ConditionType.Ready] as const;

const WAIT_FOR_MACHINES_MS = 5_000;
const RETRY_ALLOCATION_MS = 30_000;

export interface SimClusterReconcilerDeps {
  options: SimClusterOptions;
  simClusters: Informer<SimCluster>;
  clusters: Informer<Cluster>;
  simMachines: Informer<SimMachine>;
  recorder: EventRecorder;
}

/** The Cluster a SimCluster belongs to: its cluster-name label, else its owner reference to a Cluster. */
export function clusterNameOf(simCluster: SimCluster): string | undefined {
  return (
    simCluster.metadata?.labels?.[LABELS.clusterName] ??
    simCluster.metadata?.ownerReferences?.find(
      (ref) => ref.kind === 'Cluster' && ref.apiVersion.startsWith('cluster.x-k8s.io/'),
    )?.name
  );
}

/**
 * SimCluster: allocates the control plane endpoint (a free port on the endpoint host, recorded in
 * `spec.controlPlaneEndpoint` so it never changes), reports the v1beta2 contract (`initialization.provisioned`,
 * `failureDomains`, `Ready`) and announces `infrastructure-cluster.provisioned`. Deletion waits until no
 * SimMachine of the cluster is left, then frees the endpoint and announces `infrastructure-cluster.deleted`.
 * Pausing, the finalizer, the writes and the hand-off events' delivery are the reconciler kit's (simClusterController).
 */
export class SimClusterReconciler implements ReconcilerParts<SimCluster> {
  private readonly allocator: PortAllocator;

  constructor(private readonly deps: SimClusterReconcilerDeps) {
    this.allocator = new PortAllocator(deps.options.portRange, deps.options.endpointHost);
  }

  clusterOf(simCluster: SimCluster): Cluster | undefined {
    const name = clusterNameOf(simCluster);
    return name ? this.deps.clusters.getByName(simCluster.metadata!.namespace!, name) : undefined;
  }

  async reconcileNormal(scope: ReconcileScope<SimCluster>): Promise<ReconcileResult | void> {
    const now = new Date();
    const clusterName = clusterNameOf(scope.obj);
    if (!clusterName) {
      const waiting = 'waiting for a Cluster to reference this SimCluster';
      report(scope, notReadyStatus(scope.obj, SimConditionReason.WaitingForCluster, waiting, now));
      return;
    }
    let endpoint = scope.obj.spec?.controlPlaneEndpoint;
    let allocated: number | undefined;
    if (!endpoint?.host || !endpoint.port) {
      try {
        allocated = await this.allocator.allocate(this.portsInUse());
      } catch (error) {
        if (!isSimError(error, 'NoFreePort')) throw error;
        report(scope, notReadyStatus(scope.obj, SimConditionReason.NoFreePort, error.message, now));
        return { requeueAfter: RETRY_ALLOCATION_MS };
      }
      endpoint = { host: this.deps.options.endpointHost, port: allocated };
      // Written conditional on the version read (the patch helper's guard): two reconciles never record two ports.
      scope.obj.spec = { ...scope.obj.spec, controlPlaneEndpoint: endpoint };
    }
    report(scope, provisionedStatus(scope.obj, endpoint, now));
    if (allocated === undefined && !becameProvisioned(scope.original, scope.obj)) return;

    // What follows names the version written, so the write comes first.
    let written: SimCluster;
    try {
      written = await scope.patchNow();
    } catch (error) {
      if (allocated !== undefined) this.allocator.release(allocated);
      throw error;
    }
    if (allocated !== undefined) {
      this.allocator.recorded(allocated);
      scope.rc.log.info({ endpoint }, 'control plane endpoint allocated');
      void this.deps.recorder.event(written, {
        type: 'Normal',
        reason: SimEventReason.EndpointAllocated,
        action: 'Allocate',
        note: `control plane endpoint ${endpoint.host}:${endpoint.port}`,
      });
    }
    if (becameProvisioned(scope.original, written)) scope.announce(provisionedEvent(written, clusterName));
  }

  async reconcileDelete(scope: ReconcileScope<SimCluster>): Promise<DeletionResult> {
    const simCluster = scope.obj;
    const clusterName = clusterNameOf(simCluster);
    const machines = clusterName
      ? this.deps.simMachines.byIndex(
          BY_CLUSTER_NAME,
          clusterIndexValue(simCluster.metadata!.namespace!, clusterName),
        )
      : [];
    if (machines.length > 0) {
      const why = `${machines.length} SimMachine(s) of the cluster still use the endpoint`;
      report(
        scope,
        notReadyStatus(simCluster, SimConditionReason.WaitingForMachinesDeletion, why, new Date()),
      );
      return { requeueAfter: WAIT_FOR_MACHINES_MS };
    }
    if (clusterName) scope.announce(deletedEvent(simCluster, clusterName));
    const port = simCluster.spec?.controlPlaneEndpoint?.port;
    // Only this process's reservation goes: the port stays in use while the SimCluster is cached (portsInUse).
    if (port !== undefined) this.allocator.release(port);
    scope.rc.log.info({ port }, 'SimCluster deleted; endpoint released');
    return { done: true };
  }

  private portsInUse(): Set<number> {
    return new Set(
      this.deps.simClusters
        .list()
        .map((sc) => sc.spec?.controlPlaneEndpoint)
        .filter((ep) => ep?.host === this.deps.options.endpointHost && ep.port !== undefined)
        .map((ep) => ep!.port),
    );
  }
}

/** Sets the status the reconcile computed, stamped with the generation it was computed from. */
function report(scope: ReconcileScope<SimCluster>, status: SimClusterStatus): void {
  const generation = scope.obj.metadata?.generation;
  scope.obj.status = { ...status, ...(generation !== undefined && { observedGeneration: generation }) };
}
