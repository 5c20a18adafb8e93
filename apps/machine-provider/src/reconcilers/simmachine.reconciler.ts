import {
  ConditionType,
  INFRASTRUCTURE_GROUP,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type SimCluster,
  type SimMachine,
} from '@capstan/api';
import {
  BY_CLUSTER_NAME,
  clusterIndexValue,
  getControllerOf,
  isBeingDeleted,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ReconcileResult,
} from '@capstan/kube';
import { type DeletionResult, type ReconcilerParts, type ReconcileScope } from '@capstan/provider-kit';
import {
  clusterKeyOf,
  hostnameOf,
  nodeNameOf,
  SimConditionReason,
  SimConditionType,
  SimEventReason,
  type SimMachineOptions,
  type SimRuntime,
} from '@capstan/sim';
import type { ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { isServerRole } from './machine-host.js';
import {
  deletedEvent,
  hasTransitions,
  machineTransitions,
  transitionEvents,
  type MachineOwnerNames,
} from './simmachine.handoff.js';
import { clusterRefOf, keepRunning, provision, report, type MachinePhaseDeps } from './simmachine.phases.js';
import { isServerMachine, waiting } from './simmachine.status.js';

export const SIM_MACHINE_CONTROLLER = 'simmachine';

/** The conditions this controller writes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const SIM_MACHINE_CONDITIONS = [
  ConditionType.Ready,
  SimConditionType.BootstrapExecSucceeded,
  SimConditionType.APIServerHealthy,
  SimConditionType.NodeRunning,
] as const;

export interface SimMachineReconcilerDeps {
  client: KubeClient;
  recorder: EventRecorder;
  /** Reconciles a SimMachine again soon (its boot time has come). */
  enqueue: (key: string) => void;
  options: SimMachineOptions;
  runtime: SimRuntime;
  simMachines: Informer<SimMachine>;
  machines: Informer<Machine>;
  clusters: Informer<Cluster>;
  simClusters: Informer<SimCluster>;
}

interface Owners {
  machine?: Machine;
  clusterName?: string;
  cluster?: Cluster;
  simCluster?: SimCluster;
}

/**
 * SimMachine: waits for its Machine's bootstrap data, boots after the (jittered) provisioning delay, runs the
 * bootstrap data as a host would (a server brings its cluster's API up, every machine registers a Node and
 * keeps it fresh), reports the v1beta2 contract (`spec.providerID`, `status.addresses`,
 * `status.initialization.provisioned`, `Ready`) and announces the hand-off events. What runs is derived from
 * the objects on every reconcile, so a restarted provider brings back the API servers and nodes. The phases are
 * in simmachine.phases.ts; pausing, the finalizer, the writes and the hand-off events' delivery are the reconciler
 * kit's (simMachineController).
 */
export class SimMachineReconciler implements ReconcilerParts<SimMachine> {
  private readonly bootAt = new Map<string, number>();
  private readonly plans = new Map<string, ParsedK3sBootstrap>();
  private readonly phases: MachinePhaseDeps;

  constructor(private readonly deps: SimMachineReconcilerDeps) {
    this.phases = {
      client: deps.client,
      runtime: deps.runtime,
      provisioningJitter: deps.options.provisioningJitter,
      bootAt: this.bootAt,
      plans: this.plans,
      otherServersProvisioned: (simMachine) =>
        this.otherServersProvisioned(simMachine, this.owners(simMachine).clusterName),
      otherServers: (simMachine) => this.otherServers(simMachine, this.owners(simMachine).clusterName),
      enqueue: (simMachine) => deps.enqueue(`${simMachine.metadata!.namespace}/${simMachine.metadata!.name}`),
    };
  }

  clusterOf(simMachine: SimMachine): Cluster | undefined {
    return this.owners(simMachine).cluster;
  }

  /** Gone without our finalizer (forced): the host goes too, its Node is the core's to delete. */
  async forget(key: string): Promise<void> {
    await this.deps.runtime.removeNodeAgent(key, { deleteNode: false });
    await this.deps.runtime.machineAgents.remove(key);
  }

  async reconcileNormal(scope: ReconcileScope<SimMachine>): Promise<ReconcileResult | void> {
    const owners = this.owners(scope.obj);
    const now = new Date();
    if (!owners.machine) {
      const why = 'waiting for a Machine to own this SimMachine';
      report({ scope, now }, { ready: waiting(SimConditionReason.WaitingForMachineOwner, why) });
      return;
    }
    const ms = {
      scope,
      machine: owners.machine,
      cluster: clusterRefOf(owners.clusterName, owners.simCluster),
      now,
    };
    const result = scope.obj.status?.initialization?.provisioned
      ? await keepRunning(ms, this.phases)
      : await provision(ms, this.phases);
    await this.announceTransitions(scope, {
      clusterName: owners.clusterName,
      machineName: owners.machine.metadata!.name,
    });
    return result;
  }

  /**
   * Announces what this reconcile's status write changes: hand-off events (published by the kit after the write)
   * and Kubernetes Events. They name the version written, so the write comes first.
   */
  private async announceTransitions(
    scope: ReconcileScope<SimMachine>,
    owners: MachineOwnerNames,
  ): Promise<void> {
    if (!hasTransitions(machineTransitions(scope.original, scope.obj))) return;
    const written = await scope.patchNow();
    const transitions = machineTransitions(scope.original, written);
    scope.announce(...transitionEvents(written, transitions, owners));
    const recorder = this.deps.recorder;
    if (transitions.provisioned) {
      const role = this.plans.get(written.metadata!.uid!)?.role;
      scope.rc.log.info({ role, providerID: written.spec?.providerID }, 'machine provisioned');
      void recorder.event(written, {
        type: 'Normal',
        reason: SimEventReason.MachineProvisioned,
        action: 'Provision',
        note: `booted as K3s ${role}; provider ID ${written.spec?.providerID}`,
      });
    }
    if (transitions.failed) {
      void recorder.event(written, {
        type: 'Warning',
        reason: SimEventReason.ProvisioningFailed,
        action: 'Provision',
        note: transitions.failed.message,
      });
    }
    if (transitions.fault !== undefined) {
      void recorder.event(written, {
        type: 'Warning',
        reason: SimEventReason.FaultInjected,
        action: 'InjectFault',
        note: transitions.fault,
      });
    }
  }

  async reconcileDelete(scope: ReconcileScope<SimMachine>): Promise<DeletionResult> {
    const simMachine = scope.obj;
    const owners = this.owners(simMachine);
    const namespace = simMachine.metadata!.namespace!;
    const name = simMachine.metadata!.name!;
    const uid = simMachine.metadata!.uid!;
    await this.deps.runtime.removeNodeAgent(`${namespace}/${name}`, { deleteNode: true });
    await this.deps.runtime.machineAgents.remove(`${namespace}/${name}`);
    const parsed = this.plans.get(uid);
    const server = parsed ? isServerRole(parsed) : isServerMachine(simMachine);
    const lastServer =
      server && owners.clusterName && !this.otherServersProvisioned(simMachine, owners.clusterName);
    if (server && owners.clusterName && !lastServer) {
      // K3s removes a deleted server's etcd member: the others keep quorum without it.
      await this.deps.runtime.removeEtcdMember(
        clusterKeyOf(namespace, owners.clusterName),
        parsed ? nodeNameOf(parsed, name) : hostnameOf(name),
      );
    }
    if (lastServer) {
      // The last server of the cluster: its API server stops and the cluster's data goes with it.
      await this.deps.runtime.releaseClusterApi(clusterKeyOf(namespace, owners.clusterName!));
      void this.deps.recorder.event(simMachine, {
        type: 'Normal',
        reason: SimEventReason.APIServerStopped,
        action: 'Delete',
        note: `the last server of cluster ${owners.clusterName} is gone; its API server stopped`,
      });
    }
    this.deps.runtime.stateDir.remove(this.deps.runtime.stateDir.machineDir(namespace, name));
    this.deps.runtime.stateDir.remove(this.deps.runtime.stateDir.machineRecordsDir(namespace, name));
    const deleted = deletedEvent(simMachine, {
      clusterName: owners.clusterName,
      machineName: owners.machine?.metadata?.name,
    });
    if (deleted) scope.announce(deleted);
    this.bootAt.delete(uid);
    this.plans.delete(uid);
    scope.rc.log.info({ server }, 'machine host removed');
    return { done: true };
  }

  private owners(simMachine: SimMachine): Owners {
    const namespace = simMachine.metadata!.namespace!;
    const ref =
      getControllerOf(simMachine) ?? simMachine.metadata?.ownerReferences?.find((r) => r.kind === 'Machine');
    const machine = ref?.kind === 'Machine' ? this.deps.machines.getByName(namespace, ref.name) : undefined;
    const clusterName = simMachine.metadata?.labels?.[LABELS.clusterName] ?? machine?.spec?.clusterName;
    const cluster = clusterName ? this.deps.clusters.getByName(namespace, clusterName) : undefined;
    const infra = cluster?.spec?.infrastructureRef;
    const simCluster =
      infra?.apiGroup === INFRASTRUCTURE_GROUP && infra.kind === RESOURCES.SimCluster.kind
        ? this.deps.simClusters.getByName(namespace, infra.name)
        : undefined;
    return { machine, clusterName, cluster, simCluster };
  }

  /** Whether another server machine of the cluster is provisioned and staying (its API server must stay). */
  private otherServersProvisioned(simMachine: SimMachine, clusterName: string | undefined): boolean {
    return this.otherServers(simMachine, clusterName).some((other) => other.status?.initialization?.provisioned === true);
  }

  /** The cluster's other server machines that are not being deleted. */
  private otherServers(simMachine: SimMachine, clusterName: string | undefined): SimMachine[] {
    if (!clusterName) return [];
    return this.deps.simMachines
      .byIndex(BY_CLUSTER_NAME, clusterIndexValue(simMachine.metadata!.namespace, clusterName))
      .filter((other) => {
        const plan = this.plans.get(other.metadata!.uid!);
        return (
          other.metadata?.uid !== simMachine.metadata?.uid &&
          !isBeingDeleted(other) &&
          (plan ? isServerRole(plan) : isServerMachine(other))
        );
      });
  }

}
