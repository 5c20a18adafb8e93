import {
  FINALIZERS,
  RESOURCES,
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
import { type EventRecorder, type Informer, isNotFound, type KubeClient, OwnWrites, type ReconcileContext, type ReconcileResult } from '@capstan/kube';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { GuardedWriter } from '../../external/guarded-writes.js';
import { observe, type ExternalObservation } from '../../external/observation.js';
import { type LifecycleEvent, type LifecyclePublisher } from '../../handoff/lifecycle-publisher.js';
import { WorkloadClusterUnavailableError, type WorkloadClusters } from '../../remote/workload-clusters.js';
import { nextDeletionStep } from './cluster.deletion.js';
import { clusterEvent, clusterTransitions } from './cluster.events.js';
import { computeClusterStatus, endpointToCopy, type ClusterObservation } from './cluster.status.js';
import { reconcileEnvelope } from './reconcile-envelope.js';
import { pausedBecause, withPausedCondition } from './paused.js';

/** How long to wait before looking again for a referenced object that does not exist (upstream externalReadyWait is 30 s). */
export const MISSING_REFERENCE_REQUEUE_MS = 10_000;
/** How often deletion of provider objects is checked: the core does not watch them. */
export const DELETION_POLL_MS = 2_000;

export interface ClusterReconcilerDeps {
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  machineSets: Informer<MachineSet>;
  machineDeployments: Informer<MachineDeployment>;
  client: KubeClient;
  external: ExternalObjects;
  workloads: WorkloadClusters;
  lifecycle: LifecyclePublisher;
  recorder: EventRecorder;
  /** Versions of Clusters this controller wrote (their watch events need no reconcile). */
  ownWrites?: OwnWrites;
}

interface ExternalReads {
  infrastructure?: ExternalRead;
  controlPlane?: ExternalRead;
}

/**
 * The Cluster controller (upstream core/reconcilers/cluster): finalizer, ownership and cluster-name label on
 * the infrastructure and control plane objects, contract fields copied onto the Cluster, conditions,
 * phases, replica counters, and deletion of everything the Cluster holds, in order.
 */
export class ClusterReconciler {
  readonly reconcile: (key: string, rc: ReconcileContext) => Promise<ReconcileResult | undefined>;
  private readonly write: GuardedWriter<Cluster>;

  constructor(private readonly deps: ClusterReconcilerDeps) {
    this.write = new GuardedWriter(deps.client.resource<Cluster>(RESOURCES.Cluster), deps.ownWrites);
    this.reconcile = reconcileEnvelope(
      { cache: deps.clusters, lifecycle: deps.lifecycle, ownWrites: deps.ownWrites },
      (obj, key, rc) => this.reconcileCluster(obj, key, rc),
    );
  }

  private async reconcileCluster(
    cluster: Cluster,
    key: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    const paused = pausedBecause(cluster, cluster);
    if (paused) {
      await this.write.status(cluster, {
        ...cluster.status,
        conditions: withPausedCondition(cluster.status?.conditions, paused, cluster.metadata?.generation),
      });
      return undefined;
    }
    if (cluster.metadata?.deletionTimestamp) return this.reconcileDelete(cluster, key, rc);

    let current = await this.write.metadata(cluster, { finalizer: FINALIZERS.cluster });
    const reads = await this.readReferences(current);
    for (const [read, ref] of [
      [reads.infrastructure, current.spec?.infrastructureRef],
      [reads.controlPlane, current.spec?.controlPlaneRef],
    ] as const) {
      if (read?.state === 'found' && ref) {
        await this.deps.external.ensureOwnership(read, {
          owner: current,
          controller: false,
          clusterName: current.metadata!.name!,
        });
      }
    }
    const observation = this.observation(current, reads);
    const endpoint = endpointToCopy(observation);
    if (endpoint) {
      current = await this.write.specFields(current, { controlPlaneEndpoint: endpoint });
      observation.cluster = current;
      rc.log.info({ host: endpoint.host, port: endpoint.port }, 'control plane endpoint copied');
    }
    observation.remote = await this.probeWorkloadCluster(observation);
    const status = computeClusterStatus(observation);
    await this.writeStatusAndPublish(current, status, key);

    if (reads.infrastructure?.state === 'invalid' || reads.controlPlane?.state === 'invalid') {
      rc.log.warn('a reference names a kind the core cannot use: retrying with backoff');
      return { requeue: true };
    }
    if (reads.infrastructure?.state === 'notFound' || reads.controlPlane?.state === 'notFound') {
      return { requeueAfter: MISSING_REFERENCE_REQUEUE_MS };
    }
    // A workload cluster still connecting is not polled: its connection reports when it is up.
    return undefined;
  }

  private async reconcileDelete(
    cluster: Cluster,
    key: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
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
    const written = await this.writeStatusAndPublish(cluster, computeClusterStatus(observation), key);
    if (!step.done) {
      rc.log.debug({ reason: step.reason }, step.message);
      return step.pollExternal ? { requeueAfter: DELETION_POLL_MS } : undefined;
    }
    await this.deps.lifecycle.publish(key, [clusterEvent('cluster.deleted', written)]);
    try {
      await this.write.removeFinalizer(written, FINALIZERS.cluster);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    rc.log.info('cluster deleted: finalizer removed');
    this.record(written, 'Deleted', 'Everything the Cluster held is deleted');
    return undefined;
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

  /** Writes what changed and publishes the milestones the write made true. */
  private async writeStatusAndPublish(
    cluster: Cluster,
    status: ClusterStatus,
    key: string,
  ): Promise<Cluster> {
    const written = await this.write.status(cluster, status);
    const milestones = clusterTransitions(cluster.status, status);
    if (milestones.length === 0) return written;
    const events: LifecycleEvent[] = milestones.map((name) => clusterEvent(name, written));
    await this.deps.lifecycle.publish(key, events);
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
