import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type SimCluster,
  type SimClusterStatus,
  type SimMachine,
} from '@capstan/api';
import {
  addFinalizer,
  BY_CLUSTER_NAME,
  clusterIndexValue,
  hasFinalizer,
  isBeingDeleted,
  removeFinalizer,
  type Informer,
  type ReconcileContext,
  type ReconcileResult,
} from '@capstan/kube';
import type { ServiceContext } from '@capstan/provider-kit';
import {
  isPaused,
  isSimError,
  PortAllocator,
  SimConditionReason,
  SimEventReason,
  type SimClusterOptions,
  applyStatusIfChanged,
  handoffEventBase,
  pausedStatus,
} from '@capstan/sim';
import { notReadyStatus, provisionedStatus } from './simcluster.status.js';

export const SIM_CLUSTER_CONTROLLER = 'simcluster';

const WAIT_FOR_MACHINES_MS = 5_000;
const RETRY_ALLOCATION_MS = 30_000;

export interface SimClusterReconcilerDeps {
  context: ServiceContext;
  options: SimClusterOptions;
  simClusters: Informer<SimCluster>;
  clusters: Informer<Cluster>;
  simMachines: Informer<SimMachine>;
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
 * `failureDomains`, `Ready`) and publishes `infrastructure-cluster.provisioned`. Deletion waits until no
 * SimMachine of the cluster is left, then frees the endpoint and publishes `infrastructure-cluster.deleted`.
 */
export class SimClusterReconciler {
  private readonly allocator: PortAllocator;
  /** `<uid>:<generation>` already announced by this process (NATS dedups a repeat of the same version). */
  private readonly announced = new Set<string>();

  constructor(private readonly deps: SimClusterReconcilerDeps) {
    this.allocator = new PortAllocator(deps.options.portRange, deps.options.endpointHost);
  }

  private get resources() {
    return this.deps.context.client.resource<SimCluster>(RESOURCES.SimCluster);
  }

  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult | void> {
    let simCluster = this.deps.simClusters.get(key);
    if (!simCluster) return;
    const namespace = simCluster.metadata!.namespace!;
    const clusterName = clusterNameOf(simCluster);
    const cluster = clusterName ? this.deps.clusters.getByName(namespace, clusterName) : undefined;

    if (isPaused(simCluster, cluster)) {
      await this.writeStatus(simCluster, pausedStatus(simCluster));
      return;
    }
    if (isBeingDeleted(simCluster)) return this.reconcileDelete(simCluster, clusterName, rc);
    if (!clusterName) {
      await this.writeStatus(
        simCluster,
        notReadyStatus(
          simCluster,
          SimConditionReason.WaitingForCluster,
          'waiting for a Cluster to reference this SimCluster',
          new Date(),
        ),
      );
      return;
    }
    simCluster = await addFinalizer(this.resources, simCluster, FINALIZERS.simCluster);

    let endpoint = simCluster.spec?.controlPlaneEndpoint;
    if (!endpoint?.host || !endpoint.port) {
      let port: number;
      try {
        port = await this.allocator.allocate(this.portsInUse());
      } catch (error) {
        if (!isSimError(error, 'NoFreePort')) throw error;
        await this.writeStatus(
          simCluster,
          notReadyStatus(simCluster, SimConditionReason.NoFreePort, error.message, new Date()),
        );
        return { requeueAfter: RETRY_ALLOCATION_MS };
      }
      endpoint = { host: this.deps.options.endpointHost, port };
      // Conditional on the version read: two reconciles must never record different ports.
      simCluster = await this.resources.mergePatch(
        { namespace, name: simCluster.metadata!.name! },
        {
          metadata: { resourceVersion: simCluster.metadata?.resourceVersion },
          spec: { controlPlaneEndpoint: endpoint },
        },
      );
      rc.log.info({ endpoint }, 'control plane endpoint allocated');
      void this.deps.context.recorder(SIM_CLUSTER_CONTROLLER).event(simCluster, {
        type: 'Normal',
        reason: SimEventReason.EndpointAllocated,
        action: 'Allocate',
        note: `control plane endpoint ${endpoint.host}:${endpoint.port}`,
      });
    }

    simCluster = await this.writeStatus(simCluster, provisionedStatus(simCluster, endpoint, new Date()));
    await this.announceProvisioned(simCluster, clusterName);
  }

  private async reconcileDelete(
    simCluster: SimCluster,
    clusterName: string | undefined,
    rc: ReconcileContext,
  ): Promise<ReconcileResult | void> {
    if (!hasFinalizer(simCluster, FINALIZERS.simCluster)) return;
    const namespace = simCluster.metadata!.namespace!;
    const machines = clusterName
      ? this.deps.simMachines.byIndex(BY_CLUSTER_NAME, clusterIndexValue(namespace, clusterName))
      : [];
    if (machines.length > 0) {
      await this.writeStatus(
        simCluster,
        notReadyStatus(
          simCluster,
          SimConditionReason.WaitingForMachinesDeletion,
          `${machines.length} SimMachine(s) of the cluster still use the endpoint`,
          new Date(),
        ),
      );
      return { requeueAfter: WAIT_FOR_MACHINES_MS };
    }
    const port = simCluster.spec?.controlPlaneEndpoint?.port;
    if (clusterName) {
      await this.deps.context.publisher.publish(
        'infrastructure-cluster.deleted',
        handoffEventBase(simCluster, RESOURCES.SimCluster.kind, clusterName),
      );
    }
    await removeFinalizer(this.resources, simCluster, FINALIZERS.simCluster);
    if (port !== undefined) this.allocator.release(port);
    this.announced.forEach(
      (id) => id.startsWith(`${simCluster.metadata!.uid}:`) && this.announced.delete(id),
    );
    rc.log.info({ port }, 'SimCluster deleted; endpoint released');
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

  private writeStatus(simCluster: SimCluster, status: SimClusterStatus): Promise<SimCluster> {
    return applyStatusIfChanged(this.resources, simCluster, status);
  }

  private async announceProvisioned(simCluster: SimCluster, clusterName: string): Promise<void> {
    const id = `${simCluster.metadata!.uid}:${simCluster.metadata?.generation ?? 0}`;
    if (this.announced.has(id)) return;
    const failureDomains = simCluster.status?.failureDomains ?? [];
    await this.deps.context.publisher.publish('infrastructure-cluster.provisioned', {
      ...handoffEventBase(simCluster, RESOURCES.SimCluster.kind, clusterName),
      controlPlaneEndpoint: simCluster.spec!.controlPlaneEndpoint!,
      ...(failureDomains.length > 0 && { failureDomains }),
    });
    this.announced.add(id);
  }
}
