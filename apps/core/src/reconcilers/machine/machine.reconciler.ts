import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import {
  LABELS,
  readBootstrapConfig,
  readInfrastructureMachine,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
  type MachineStatus,
} from '@capstan/api';
import {
  deepEqual,
  getControllerOf,
  setOwnerReference,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ReconcileContext,
  type ReconcileResult,
} from '@capstan/kube';
import { type DeletionResult, type ReconcilerParts, type ReconcileScope } from '@capstan/provider-kit';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { observe } from '../../external/observation.js';
import { type WorkloadClusters } from '../../remote/workload-clusters.js';
import { MISSING_REFERENCE_REQUEUE_MS } from '../shared/requeue-delays.js';
import { nextMachineDeletionStep } from './machine.deletion.js';
import { machineEvent, machineTransitions } from './machine.events.js';
import { reconcileInPlaceUpdate } from './machine.in-place.js';
import { lookUpNode, syncNode } from './machine.node.js';
import { availableIn, computeMachineStatus, type MachineObservation } from './machine.status.js';

export interface MachineReconcilerDeps {
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  client: KubeClient;
  external: ExternalObjects;
  workloads: WorkloadClusters;
  recorder: EventRecorder;
  now?: () => Date;
}

interface ExternalReads {
  bootstrap?: ExternalRead;
  infrastructure?: ExternalRead;
}

/**
 * The Machine controller (upstream core/reconcilers/machine): finalizer, labels and ownership, the bootstrap
 * and infrastructure contract fields copied onto the Machine, its Node found by providerID, conditions and
 * phases, and deletion with hooks, drain, provider object and Node deletion. Reading, pausing, the finalizer,
 * writing and the lifecycle events' delivery are the reconciler kit's (see machineController).
 */
export class MachineReconciler implements ReconcilerParts<Machine> {
  readonly now: () => Date;

  constructor(private readonly deps: MachineReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  clusterOf(machine: Machine): Cluster | undefined {
    return this.deps.clusters.getByName(machine.metadata!.namespace!, machine.spec.clusterName);
  }

  async reconcileNormal(scope: ReconcileScope<Machine>): Promise<ReconcileResult | undefined> {
    const machine = scope.obj;
    const cluster = this.clusterOf(machine);
    machine.metadata!.labels = {
      ...machine.metadata!.labels,
      [LABELS.clusterName]: machine.spec.clusterName,
    };
    const owners = standaloneOwners(machine, cluster);
    if (!deepEqual(machine.metadata!.ownerReferences ?? [], owners))
      machine.metadata!.ownerReferences = owners;

    const reads = await this.readReferences(machine);
    for (const read of [reads.bootstrap, reads.infrastructure]) {
      if (read?.state === 'found') {
        await this.deps.external.ensureOwnership(read, {
          owner: machine,
          controller: true,
          clusterName: machine.spec.clusterName,
        });
      }
    }
    const observation = this.observation(machine, reads);
    this.copySpecFields(machine, observation, scope.rc);

    const lookup = await lookUpNode(machine, cluster, this.deps.workloads);
    observation.node = lookup.observation;
    if (lookup.observation.state === 'found' && lookup.access) {
      await syncNode(lookup.access, lookup.observation.node, machine);
    }
    const now = this.now();
    const inPlace = await reconcileInPlaceUpdate(scope, observation, lookup, now, scope.rc.log);
    observation.updating = inPlace.updating;
    const status = computeMachineStatus(observation, now);
    await this.writeAndAnnounce(scope, status);

    if (reads.bootstrap?.state === 'invalid' || reads.infrastructure?.state === 'invalid') {
      scope.rc.log.warn('a reference names a kind the core cannot use: retrying with backoff');
      return { requeue: true };
    }
    if (reads.bootstrap?.state === 'notFound' || reads.infrastructure?.state === 'notFound') {
      return { requeueAfter: MISSING_REFERENCE_REQUEUE_MS };
    }
    // A workload cluster that does not answer yet is not polled: its connection reports when it is up.
    const available = availableIn(machine, status, now);
    const waits = [available === undefined ? undefined : available + 100, inPlace.requeueAfter].filter(
      (ms): ms is number => ms !== undefined,
    );
    return waits.length === 0 ? undefined : { requeueAfter: Math.min(...waits) };
  }

  async reconcileDelete(scope: ReconcileScope<Machine>): Promise<DeletionResult | undefined> {
    const machine = scope.obj;
    const cluster = this.clusterOf(machine);
    const reads = await this.readReferences(machine);
    const observation = this.observation(machine, reads);
    const lookup = await lookUpNode(machine, cluster, this.deps.workloads);
    observation.node = lookup.observation;
    const now = this.now();
    const step = await nextMachineDeletionStep(
      {
        machine,
        cluster,
        node: lookup,
        bootstrap: reads.bootstrap,
        infrastructure: reads.infrastructure,
        activeControlPlaneMachines: this.activeControlPlaneMachines(machine),
      },
      { external: this.deps.external, log: scope.rc.log, now },
    );
    observation.deleting = { reason: step.reason, message: step.message, deletion: step.deletion };
    const status = computeMachineStatus(observation, now);
    const written = await this.writeAndAnnounce(scope, status);
    if (!step.done) {
      scope.rc.log.debug({ reason: step.reason }, step.message);
      return step.requeueAfter ? { requeueAfter: step.requeueAfter } : undefined;
    }
    // The kit removes the finalizer, then publishes.
    scope.announce(machineEvent('machine.deleted', written));
    return { done: true };
  }

  /** The cluster's control plane Machines that are not being deleted (upstream collections.ActiveMachines). */
  private activeControlPlaneMachines(machine: Machine): number {
    return this.deps.machines
      .list(machine.metadata!.namespace)
      .filter(
        (m) =>
          m.spec.clusterName === machine.spec.clusterName &&
          LABELS.controlPlane in (m.metadata?.labels ?? {}) &&
          !m.metadata?.deletionTimestamp &&
          m.metadata?.uid !== machine.metadata?.uid,
      ).length;
  }

  /** `spec.bootstrap.dataSecretName`, `spec.providerID` and (when unset) `spec.failureDomain`, from the provider objects. */
  private copySpecFields(machine: Machine, observation: MachineObservation, rc: ReconcileContext): void {
    const copied: string[] = [];
    const { bootstrap, infrastructure } = observation;
    if (
      bootstrap.state === 'found' &&
      bootstrap.contract.dataSecretCreated &&
      bootstrap.contract.dataSecretName &&
      machine.spec.bootstrap?.dataSecretName !== bootstrap.contract.dataSecretName
    ) {
      machine.spec.bootstrap = {
        ...machine.spec.bootstrap,
        dataSecretName: bootstrap.contract.dataSecretName,
      };
      copied.push('bootstrap');
    }
    if (infrastructure.state === 'found' && infrastructure.contract.provisioned) {
      const { providerID, failureDomain } = infrastructure.contract;
      // providerID is fixed once set (the API server refuses a change); a provider reporting another one is ignored.
      if (providerID && !machine.spec.providerID) {
        machine.spec.providerID = providerID;
        copied.push('providerID');
      }
      if (failureDomain && !machine.spec.failureDomain) {
        machine.spec.failureDomain = failureDomain;
        copied.push('failureDomain');
      }
    }
    if (copied.length > 0) rc.log.info({ fields: copied }, 'contract fields copied onto the machine');
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

  /**
   * Writes the status at once, so that the milestones it makes true are announced with the Machine as written
   * (its resourceVersion is part of their message id); the kit publishes them after its final write.
   */
  private async writeAndAnnounce(scope: ReconcileScope<Machine>, status: MachineStatus): Promise<Machine> {
    const before = scope.obj.status;
    scope.obj.status = status;
    const written = await scope.patchNow();
    const milestones = machineTransitions(before, status, written);
    scope.announce(...milestones.map((name) => machineEvent(name, written)));
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
