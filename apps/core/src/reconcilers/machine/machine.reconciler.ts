import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  readBootstrapConfig,
  readInfrastructureMachine,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
  type MachineStatus,
} from '@capstan/api';
import { type EventRecorder, getControllerOf, type Informer, isNotFound, type KubeClient, OwnWrites, type ReconcileContext, type ReconcileResult, setOwnerReference } from '@capstan/kube';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { GuardedWriter } from '../../external/guarded-writes.js';
import { observe } from '../../external/observation.js';
import { type LifecyclePublisher } from '../../handoff/lifecycle-publisher.js';
import { type WorkloadClusters } from '../../remote/workload-clusters.js';
import { MISSING_REFERENCE_REQUEUE_MS } from '../cluster/cluster.reconciler.js';
import { reconcileEnvelope } from '../cluster/reconcile-envelope.js';
import { pausedBecause, withPausedCondition } from '../cluster/paused.js';
import { nextMachineDeletionStep } from './machine.deletion.js';
import { machineEvent, machineTransitions } from './machine.events.js';
import { lookUpNode, syncNode, type NodeLookup } from './machine.node.js';
import { availableIn, computeMachineStatus, type MachineObservation } from './machine.status.js';

export interface MachineReconcilerDeps {
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  client: KubeClient;
  external: ExternalObjects;
  workloads: WorkloadClusters;
  lifecycle: LifecyclePublisher;
  recorder: EventRecorder;
  /** Versions of Machines this controller wrote (their watch events need no reconcile). */
  ownWrites?: OwnWrites;
  now?: () => Date;
}

interface ExternalReads {
  bootstrap?: ExternalRead;
  infrastructure?: ExternalRead;
}

/**
 * The Machine controller (upstream core/reconcilers/machine): finalizer, labels and ownership, the bootstrap
 * and infrastructure contract fields copied onto the Machine, its Node found by providerID, conditions and
 * phases, and deletion with hooks, drain, provider object and Node deletion.
 */
export class MachineReconciler {
  readonly reconcile: (key: string, rc: ReconcileContext) => Promise<ReconcileResult | undefined>;
  private readonly write: GuardedWriter<Machine>;
  private readonly now: () => Date;

  constructor(private readonly deps: MachineReconcilerDeps) {
    this.write = new GuardedWriter(deps.client.resource<Machine>(RESOURCES.Machine), deps.ownWrites);
    this.reconcile = reconcileEnvelope(
      { cache: deps.machines, lifecycle: deps.lifecycle, ownWrites: deps.ownWrites },
      (obj, key, rc) => this.reconcileMachine(obj, key, rc),
    );
    this.now = deps.now ?? (() => new Date());
  }

  private async reconcileMachine(
    machine: Machine,
    key: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    const namespace = machine.metadata!.namespace!;
    const cluster = this.deps.clusters.getByName(namespace, machine.spec.clusterName);
    const paused = pausedBecause(cluster, machine);
    if (paused) {
      await this.write.status(machine, {
        ...machine.status,
        conditions: withPausedCondition(machine.status?.conditions, paused, machine.metadata?.generation),
      });
      return undefined;
    }
    if (machine.metadata?.deletionTimestamp) return this.reconcileDelete(machine, cluster, key, rc);

    let current = await this.write.metadata(machine, {
      finalizer: FINALIZERS.machine,
      labels: { [LABELS.clusterName]: machine.spec.clusterName },
      ownerReferences: standaloneOwners(machine, cluster),
    });
    const reads = await this.readReferences(current);
    for (const read of [reads.bootstrap, reads.infrastructure]) {
      if (read?.state === 'found') {
        await this.deps.external.ensureOwnership(read, {
          owner: current,
          controller: true,
          clusterName: current.spec.clusterName,
        });
      }
    }
    const observation = this.observation(current, reads);
    current = await this.copySpecFields(current, observation, rc);
    observation.machine = current;

    const lookup = await lookUpNode(current, cluster, this.deps.workloads);
    observation.node = lookup.observation;
    if (lookup.observation.state === 'found' && lookup.access) {
      await syncNode(lookup.access, lookup.observation.node, current);
    }
    const now = this.now();
    const status = computeMachineStatus(observation, now);
    await this.writeStatusAndPublish(current, status, key);

    if (reads.bootstrap?.state === 'invalid' || reads.infrastructure?.state === 'invalid') {
      rc.log.warn('a reference names a kind the core cannot use: retrying with backoff');
      return { requeue: true };
    }
    if (reads.bootstrap?.state === 'notFound' || reads.infrastructure?.state === 'notFound') {
      return { requeueAfter: MISSING_REFERENCE_REQUEUE_MS };
    }
    // A workload cluster that does not answer yet is not polled: its connection reports when it is up.
    const wait = availableIn(current, status, now);
    return wait === undefined ? undefined : { requeueAfter: wait + 100 };
  }

  private async reconcileDelete(
    machine: Machine,
    cluster: Cluster | undefined,
    key: string,
    rc: ReconcileContext,
  ): Promise<ReconcileResult | undefined> {
    const reads = await this.readReferences(machine);
    const observation = this.observation(machine, reads);
    const lookup: NodeLookup = await lookUpNode(machine, cluster, this.deps.workloads);
    observation.node = lookup.observation;
    const now = this.now();
    const step = await nextMachineDeletionStep(
      { machine, cluster, node: lookup, bootstrap: reads.bootstrap, infrastructure: reads.infrastructure },
      { external: this.deps.external, log: rc.log, now },
    );
    observation.deleting = { reason: step.reason, message: step.message };
    const status = computeMachineStatus(observation, now);
    if (step.deletion && Object.keys(step.deletion).length > 0) status.deletion = step.deletion;
    const written = await this.writeStatusAndPublish(machine, status, key);
    if (!step.done) {
      rc.log.debug({ reason: step.reason }, step.message);
      return step.requeueAfter ? { requeueAfter: step.requeueAfter } : undefined;
    }
    await this.deps.lifecycle.publish(key, [machineEvent('machine.deleted', written)]);
    try {
      await this.write.removeFinalizer(written, FINALIZERS.machine);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    rc.log.info('machine deleted: finalizer removed');
    return undefined;
  }

  /** `spec.bootstrap.dataSecretName`, `spec.providerID` and (when unset) `spec.failureDomain`, from the provider objects. */
  private async copySpecFields(
    machine: Machine,
    observation: MachineObservation,
    rc: ReconcileContext,
  ): Promise<Machine> {
    const fields: Record<string, unknown> = {};
    const { bootstrap, infrastructure } = observation;
    if (
      bootstrap.state === 'found' &&
      bootstrap.contract.dataSecretCreated &&
      bootstrap.contract.dataSecretName &&
      machine.spec.bootstrap?.dataSecretName !== bootstrap.contract.dataSecretName
    ) {
      fields['bootstrap'] = { ...machine.spec.bootstrap, dataSecretName: bootstrap.contract.dataSecretName };
    }
    if (infrastructure.state === 'found' && infrastructure.contract.provisioned) {
      const { providerID, failureDomain } = infrastructure.contract;
      // providerID is fixed once set (the API server refuses a change); a provider reporting another one is ignored.
      if (providerID && !machine.spec.providerID) fields['providerID'] = providerID;
      if (failureDomain && !machine.spec.failureDomain) fields['failureDomain'] = failureDomain;
    }
    if (Object.keys(fields).length === 0) return machine;
    rc.log.info({ fields: Object.keys(fields) }, 'contract fields copied onto the machine');
    return this.write.specFields(machine, fields);
  }

  private async readReferences(machine: Machine): Promise<ExternalReads> {
    const namespace = machine.metadata!.namespace!;
    const read = (ref: ContractVersionedObjectReference | undefined) =>
      ref?.name ? this.deps.external.read(namespace, ref) : Promise.resolve(undefined);
    const [bootstrap, infrastructure] = await Promise.all([
      read(machine.spec.bootstrap?.configRef),
      read(machine.spec.infrastructureRef),
    ]);
    return { bootstrap, infrastructure };
  }

  private observation(machine: Machine, reads: ExternalReads): MachineObservation {
    return {
      machine,
      bootstrap: observe(reads.bootstrap, machine.spec.bootstrap?.configRef, readBootstrapConfig),
      infrastructure: observe(
        reads.infrastructure,
        machine.spec.infrastructureRef,
        readInfrastructureMachine,
      ),
      node: { state: 'waiting', message: 'Node not looked up yet' },
    };
  }

  private async writeStatusAndPublish(
    machine: Machine,
    status: MachineStatus,
    key: string,
  ): Promise<Machine> {
    const written = await this.write.status(machine, status);
    const milestones = machineTransitions(machine.status, status, written);
    if (milestones.length === 0) return written;
    await this.deps.lifecycle.publish(
      key,
      milestones.map((name) => machineEvent(name, written)),
    );
    if (milestones.includes('machine.running')) {
      void this.deps.recorder
        .event(written, {
          type: 'Normal',
          reason: 'Running',
          action: 'Reconcile',
          note: `Node ${written.status?.nodeRef?.name} joined`,
        })
        .catch(() => undefined);
    }
    return written;
  }
}

/**
 * The owner references a stand-alone Machine should have: the Cluster as a plain owner (upstream
 * reconcileMachineOwnerAndLabels). A Machine controlled by a MachineSet or control plane keeps its owners.
 */
function standaloneOwners(machine: Machine, cluster: Cluster | undefined): V1OwnerReference[] {
  const owners = machine.metadata?.ownerReferences ?? [];
  if (!cluster || getControllerOf(machine)) return owners;
  const copy: KubernetesObject = {
    metadata: { namespace: machine.metadata?.namespace, ownerReferences: structuredClone(owners) },
  };
  setOwnerReference(cluster, copy);
  return copy.metadata!.ownerReferences!;
}
