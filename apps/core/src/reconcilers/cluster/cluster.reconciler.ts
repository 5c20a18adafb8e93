import {
  readControlPlane,
  readInfrastructureCluster,
  type Cluster,
  type ClusterStatus,
  type ControlPlaneContract,
  type ContractVersionedObjectReference,
  type InfrastructureClusterContract,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { type EventRecorder, type Informer, type KubeClient, type ReconcileResult } from '@capstan/kube';
import { type DeletionResult, type ReconcilerParts, type ReconcileScope } from '@capstan/provider-kit';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { observe, type ExternalObservation } from '../../external/observation.js';
import { WorkloadClusterUnavailableError, type WorkloadClusters } from '../../remote/workload-clusters.js';
import { DELETION_POLL_MS, MISSING_REFERENCE_REQUEUE_MS } from '../shared/requeue-delays.js';
import { nextDeletionStep } from './cluster.deletion.js';
import { clusterEvent, clusterTransitions } from './cluster.events.js';
import { computeClusterStatus, endpointToCopy, type ClusterObservation } from './cluster.status.js';

export interface ClusterReconcilerDeps {
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  machineSets: Informer<MachineSet>;
  machineDeployments: Informer<MachineDeployment>;
  client: KubeClient;
  external: ExternalObjects;
  workloads: WorkloadClusters;
  recorder: EventRecorder;
}

interface ExternalReads {
  infrastructure?: ExternalRead;
  controlPlane?: ExternalRead;
}

/**
 * The Cluster controller (upstream core/reconcilers/cluster): finalizer, ownership and cluster-name label on
 * the infrastructure and control plane objects, contract fields copied onto the Cluster, conditions,
 * phases, replica counters, and deletion of everything the Cluster holds, in order. Reading, pausing, the
 * finalizer, writing and the lifecycle events' delivery are the reconciler kit's (see clusterController).
 */
export class ClusterReconciler implements ReconcilerParts<Cluster> {
  constructor(private readonly deps: ClusterReconcilerDeps) {}

  clusterOf(cluster: Cluster): Cluster {
    return cluster;
  }

  async reconcileNormal(scope: ReconcileScope<Cluster>): Promise<ReconcileResult | undefined> {
    const cluster = scope.obj;
    const reads = await this.readReferences(cluster);
    for (const [read, ref] of [
      [reads.infrastructure, cluster.spec?.infrastructureRef],
      [reads.controlPlane, cluster.spec?.controlPlaneRef],
    ] as const) {
      if (read?.state === 'found' && ref) {
        await this.deps.external.ensureOwnership(read, {
          owner: cluster,
          controller: false,
          clusterName: cluster.metadata!.name!,
        });
      }
    }
    const observation = this.observation(cluster, reads);
    const endpoint = endpointToCopy(observation);
    if (endpoint) {
      cluster.spec = { ...cluster.spec, controlPlaneEndpoint: endpoint };
      scope.rc.log.info({ host: endpoint.host, port: endpoint.port }, 'control plane endpoint copied');
    }
    observation.remote = await this.probeWorkloadCluster(observation);
    await this.writeAndAnnounce(scope, computeClusterStatus(observation));

    if (reads.infrastructure?.state === 'invalid' || reads.controlPlane?.state === 'invalid') {
      scope.rc.log.warn('a reference names a kind the core cannot use: retrying with backoff');
      return { requeue: true };
    }
    if (reads.infrastructure?.state === 'notFound' || reads.controlPlane?.state === 'notFound') {
      return { requeueAfter: MISSING_REFERENCE_REQUEUE_MS };
    }
    // A workload cluster still connecting is not polled: its connection reports when it is up.
    return undefined;
  }

  async reconcileDelete(scope: ReconcileScope<Cluster>): Promise<DeletionResult | undefined> {
    const cluster = scope.obj;
    const reads = await this.readReferences(cluster);
    const observation = this.observation(cluster, reads);
    const step = await nextDeletionStep(
      {
        cluster,
        machines: observation.machines,
        machineSets: observation.machineSets,
        machineDeployments: observation.machineDeployments,
        infrastructure: reads.infrastructure,
        controlPlane: reads.controlPlane,
      },
      { client: this.deps.client, external: this.deps.external },
    );
    observation.deleting = { reason: step.reason, message: step.message };
    const written = await this.writeAndAnnounce(scope, computeClusterStatus(observation));
    if (!step.done) {
      scope.rc.log.debug({ reason: step.reason }, step.message);
      return step.pollExternal ? { requeueAfter: DELETION_POLL_MS } : undefined;
    }
    // The kit removes the finalizer, then publishes.
    scope.announce(clusterEvent('cluster.deleted', written));
    this.record(written, 'Deleted', 'Everything the Cluster held is deleted');
    return { done: true };
  }

  private async readReferences(cluster: Cluster): Promise<ExternalReads> {
    const namespace = cluster.metadata!.namespace!;
    const read = (ref: ContractVersionedObjectReference | undefined) =>
      ref ? this.deps.external.read(namespace, ref) : Promise.resolve(undefined);
    const [infrastructure, controlPlane] = await Promise.all([
      read(cluster.spec?.infrastructureRef),
      read(cluster.spec?.controlPlaneRef),
    ]);
    return { infrastructure, controlPlane };
  }

  private observation(cluster: Cluster, reads: ExternalReads): ClusterObservation {
    const namespace = cluster.metadata?.namespace;
    const name = cluster.metadata?.name;
    const ofCluster = <T extends { spec?: { clusterName?: string } }>(items: T[]) =>
      items.filter((item) => item.spec?.clusterName === name);
    const infrastructure: ExternalObservation<InfrastructureClusterContract> = observe(
      reads.infrastructure,
      cluster.spec?.infrastructureRef,
      readInfrastructureCluster,
    );
    const controlPlane: ExternalObservation<ControlPlaneContract> = observe(
      reads.controlPlane,
      cluster.spec?.controlPlaneRef,
      readControlPlane,
    );
    return {
      cluster,
      infrastructure,
      controlPlane,
      machines: ofCluster(this.deps.machines.list(namespace)),
      machineSets: ofCluster(this.deps.machineSets.list(namespace)),
      machineDeployments: ofCluster(this.deps.machineDeployments.list(namespace)),
      remote: { state: 'NoKubeconfig' },
    };
  }

  /** Connects to the workload cluster once its control plane is initialized, for RemoteConnectionProbe. */
  private async probeWorkloadCluster(observation: ClusterObservation): Promise<ClusterObservation['remote']> {
    const namespace = observation.cluster.metadata!.namespace!;
    const name = observation.cluster.metadata!.name!;
    if (!computeClusterStatus(observation).initialization?.controlPlaneInitialized)
      return { state: 'NoKubeconfig' };
    try {
      await this.deps.workloads.access(namespace, name);
    } catch (error) {
      if (!(error instanceof WorkloadClusterUnavailableError)) throw error;
    }
    return this.deps.workloads.probe(namespace, name);
  }

  /**
   * Writes the status at once, so that the milestones it makes true are announced with the Cluster as written
   * (its resourceVersion is part of their message id); the kit publishes them after its final write.
   */
  private async writeAndAnnounce(scope: ReconcileScope<Cluster>, status: ClusterStatus): Promise<Cluster> {
    const before = scope.obj.status;
    scope.obj.status = status;
    const written = await scope.patchNow();
    const milestones = clusterTransitions(before, status);
    scope.announce(...milestones.map((name) => clusterEvent(name, written)));
    if (milestones.includes('cluster.provisioned'))
      this.record(written, 'Provisioned', 'Infrastructure provisioned and control plane endpoint set');
    if (milestones.includes('cluster.available')) this.record(written, 'Available', 'Cluster is Available');
    return written;
  }

  private record(cluster: Cluster, reason: string, note: string): void {
    void this.deps.recorder
      .event(cluster, { type: 'Normal', reason, action: 'Reconcile', note })
      .catch(() => undefined);
  }
}

/** `namespace/name` of the Cluster an object of the cluster belongs to. */
export function clusterKeyOf(obj: {
  metadata?: { namespace?: string };
  spec?: { clusterName?: string };
}): string | undefined {
  const name = obj.spec?.clusterName;
  return name ? `${obj.metadata?.namespace}/${name}` : undefined;
}
