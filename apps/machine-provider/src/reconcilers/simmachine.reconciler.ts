import {
  ConditionReason,
  ConditionStatus,
  FINALIZERS,
  INFRASTRUCTURE_GROUP,
  LABELS,
  RESOURCES,
  type Cluster,
  type Condition,
  type Machine,
  type SimCluster,
  type SimMachine,
  type SimMachineStatus,
} from '@capstan/api';
import {
  addFinalizer,
  BY_CLUSTER_NAME,
  clusterIndexValue,
  getControllerOf,
  hasFinalizer,
  isBeingDeleted,
  removeFinalizer,
  type Informer,
  type ReconcileContext,
  type ReconcileResult,
} from '@capstan/kube';
import type { ServiceContext } from '@capstan/provider-kit';
import {
  clusterKeyOf,
  isPaused,
  machineAddresses,
  simProviderID,
  SimConditionReason,
  SimEventReason,
  type SimClusterRef,
  type SimMachineOptions,
  type SimRuntime,
  applyStatusIfChanged,
  handoffEventBase,
  pausedStatus,
} from '@capstan/sim';
import type { ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import { readBootstrapData } from './bootstrap-data.js';
import { bringUpServer, isServerRole, startNode, writeSentinel, type MachineHost } from './machine-host.js';
import {
  isServerMachine,
  nextStatus,
  nodeCondition,
  nodeDeletedByFault,
  provisionedReady,
  waiting,
  type SimMachineObservation,
} from './simmachine.status.js';

export const SIM_MACHINE_CONTROLLER = 'simmachine';

const RETRY_MISSING_DATA_MS = 5_000;
/** Server machines check their cluster's API this often (a crash of a started one is noticed at once). */
const SERVER_HEALTH_PERIOD_MS = 30_000;

export interface SimMachineReconcilerDeps {
  context: ServiceContext;
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
 * `status.initialization.provisioned`, `Ready`) and publishes the hand-off events. What runs is derived from
 * the objects on every reconcile, so a restarted provider brings back the API servers and nodes.
 */
export class SimMachineReconciler {
  /** When a booting machine is up (uid -> epoch ms); a restart starts the boot again, as a rebooting host would. */
  private readonly bootAt = new Map<string, number>();
  /** Parsed bootstrap data of provisioned machines (uid -> data), read once per provider run. */
  private readonly plans = new Map<string, ParsedK3sBootstrap>();
  /** `<uid>:<event>[:generation]` this process published (NATS dedups repeats of one resourceVersion). */
  private readonly announced = new Set<string>();

  constructor(private readonly deps: SimMachineReconcilerDeps) {}

  private get resources() {
    return this.deps.context.client.resource<SimMachine>(RESOURCES.SimMachine);
  }

  async reconcile(key: string, rc: ReconcileContext): Promise<ReconcileResult | void> {
    let simMachine = this.deps.simMachines.get(key);
    if (!simMachine) {
      // Gone without our finalizer (forced): the host goes too, its Node is the core's to delete.
      await this.deps.runtime.removeNodeAgent(key, { deleteNode: false });
      return;
    }
    const owners = this.owners(simMachine);
    if (isPaused(simMachine, owners.cluster)) {
      await this.writeStatus(simMachine, pausedStatus(simMachine));
      return;
    }
    if (isBeingDeleted(simMachine)) return this.reconcileDelete(simMachine, owners, rc);
    if (!owners.machine) {
      await this.writeStatus(
        simMachine,
        nextStatus(
          simMachine,
          {
            ready: waiting(
              SimConditionReason.WaitingForMachineOwner,
              'waiting for a Machine to own this SimMachine',
            ),
          },
          new Date(),
        ),
      );
      return;
    }
    simMachine = await addFinalizer(this.resources, simMachine, FINALIZERS.simMachine);
    return simMachine.status?.initialization?.provisioned
      ? this.keepRunning(simMachine, owners as Required<Pick<Owners, 'machine'>> & Owners, rc)
      : this.provision(simMachine, owners as Required<Pick<Owners, 'machine'>> & Owners, rc);
  }

  private async provision(
    simMachine: SimMachine,
    owners: Owners & { machine: Machine },
    rc: ReconcileContext,
  ): Promise<ReconcileResult | void> {
    const now = new Date();
    const status = (observed: SimMachineObservation) =>
      this.writeStatus(simMachine, nextStatus(simMachine, observed, now));
    const failure = simMachine.spec?.failProvisioning;
    if (failure) {
      simMachine = await status({ ready: waiting(SimConditionReason.ProvisioningFailed, failure) });
      await this.announceFailed(simMachine, owners, SimConditionReason.ProvisioningFailed, failure);
      return;
    }
    const cluster = this.clusterRef(owners);
    if (!cluster) {
      await status({
        ready: waiting(
          ConditionReason.WaitingForClusterInfrastructureReady,
          'waiting for the SimCluster to be provisioned',
        ),
      });
      return;
    }
    const secretName = owners.machine.spec?.bootstrap?.dataSecretName;
    if (!secretName) {
      await status({
        ready: waiting(
          ConditionReason.WaitingForBootstrapData,
          "waiting for the Machine's bootstrap data secret",
        ),
      });
      return;
    }
    const uid = simMachine.metadata!.uid!;
    let bootAt = this.bootAt.get(uid);
    if (bootAt === undefined) {
      const delayMs =
        (simMachine.spec?.provisioningDelaySeconds ?? 0) *
        1000 *
        (1 + Math.random() * this.deps.options.provisioningJitter);
      bootAt = now.getTime() + delayMs;
      this.bootAt.set(uid, bootAt);
    }
    if (now.getTime() < bootAt) {
      const left = bootAt - now.getTime();
      await status({
        ready: waiting(
          SimConditionReason.Booting,
          `booting (provisioning delay ${simMachine.spec?.provisioningDelaySeconds ?? 0} s plus jitter)`,
        ),
      });
      return { requeueAfter: left };
    }

    const data = await readBootstrapData(
      this.deps.context.client,
      simMachine.metadata!.namespace!,
      secretName,
    );
    if (data.kind === 'missing') {
      await status({ ready: waiting(ConditionReason.WaitingForBootstrapData, data.message) });
      return { requeueAfter: RETRY_MISSING_DATA_MS };
    }
    if (data.kind === 'invalid') return this.failBootstrap(simMachine, owners, data.message);
    const host = this.host(simMachine, cluster, data.parsed);
    let apiServer: SimMachineObservation['apiServer'];
    if (isServerRole(data.parsed)) {
      const outcome = await bringUpServer(this.deps.runtime, host, {
        firstBoot: true,
        otherServersProvisioned: this.otherServersProvisioned(simMachine, owners),
      });
      if (!outcome.ok) {
        if (outcome.invalidData) return this.failBootstrap(simMachine, owners, outcome.message);
        await status({ ready: waiting(outcome.reason, outcome.message) });
        return { requeueAfter: outcome.retryMs };
      }
      apiServer = {
        status: ConditionStatus.True,
        reason: SimConditionReason.APIServerRunning,
        message: `the cluster API answers at ${outcome.api.url}`,
      };
    }
    this.plans.set(uid, data.parsed);
    const sentinel = writeSentinel(
      this.deps.runtime,
      simMachine.metadata!.namespace!,
      simMachine.metadata!.name!,
    );
    if (simMachine.spec?.providerID !== host.providerID) {
      simMachine = await this.resources.mergePatch(
        { namespace: simMachine.metadata!.namespace!, name: simMachine.metadata!.name! },
        { spec: { providerID: host.providerID } },
      );
    }
    const agent = startNode(this.deps.runtime, host, {
      deletedByFault: false,
      onChange: () => this.enqueue(simMachine),
    });
    const nodeName = agent.identity.name;
    simMachine = await this.writeStatus(
      simMachine,
      nextStatus(
        simMachine,
        {
          ready: provisionedReady(`booted as K3s ${data.parsed.role} ${data.parsed.version}`),
          bootstrap: {
            status: ConditionStatus.True,
            reason: SimConditionReason.BootstrapExecSucceeded,
            message: `bootstrap data ran; sentinel written at ${sentinel}`,
          },
          apiServer,
          node: nodeCondition(agent.status),
          provisioned: true,
          addresses: [
            ...machineAddresses(
              { namespace: simMachine.metadata!.namespace!, name: simMachine.metadata!.name! },
              nodeName,
            ),
          ],
          ...(owners.machine.spec?.failureDomain && { failureDomain: owners.machine.spec.failureDomain }),
        },
        now,
      ),
    );
    this.bootAt.delete(uid);
    rc.log.info({ role: data.parsed.role, providerID: host.providerID }, 'machine provisioned');
    void this.deps.context.recorder(SIM_MACHINE_CONTROLLER).event(simMachine, {
      type: 'Normal',
      reason: SimEventReason.MachineProvisioned,
      action: 'Provision',
      note: `booted as K3s ${data.parsed.role}; provider ID ${host.providerID}`,
    });
    await this.announceProvisioned(simMachine, owners);
    return apiServer ? { requeueAfter: SERVER_HEALTH_PERIOD_MS } : undefined;
  }

  /** A provisioned machine: its server and node run (again, after a provider restart) and its status follows them. */
  private async keepRunning(
    simMachine: SimMachine,
    owners: Owners & { machine: Machine },
    rc: ReconcileContext,
  ): Promise<ReconcileResult | void> {
    const uid = simMachine.metadata!.uid!;
    const cluster = this.clusterRef(owners);
    let parsed = this.plans.get(uid);
    if (!parsed) {
      const secretName = owners.machine.spec?.bootstrap?.dataSecretName;
      const data = secretName
        ? await readBootstrapData(this.deps.context.client, simMachine.metadata!.namespace!, secretName)
        : undefined;
      if (data?.kind === 'parsed') {
        parsed = data.parsed;
        this.plans.set(uid, parsed);
      } else {
        await this.writeStatus(
          simMachine,
          nextStatus(
            simMachine,
            {
              ready: provisionedReady('provisioned'),
              node: waiting(
                SimConditionReason.NodeRegistrationFailed,
                `the host cannot start again: ${data?.message ?? 'the Machine names no bootstrap data secret'}`,
              ),
            },
            new Date(),
          ),
        );
        return { requeueAfter: RETRY_MISSING_DATA_MS };
      }
    }
    if (!cluster) {
      await this.writeStatus(
        simMachine,
        nextStatus(
          simMachine,
          {
            ready: provisionedReady('provisioned'),
            node: waiting(SimConditionReason.WaitingForAPIServer, 'the SimCluster is not provisioned'),
          },
          new Date(),
        ),
      );
      return;
    }
    const host = this.host(simMachine, cluster, parsed);
    let apiServer: SimMachineObservation['apiServer'];
    if (isServerRole(parsed)) {
      const outcome = await bringUpServer(this.deps.runtime, host, {
        firstBoot: false,
        otherServersProvisioned: true,
      });
      apiServer = outcome.ok
        ? {
            status: ConditionStatus.True,
            reason: SimConditionReason.APIServerRunning,
            message: `the cluster API answers at ${outcome.api.url}`,
          }
        : { status: ConditionStatus.False, reason: outcome.reason, message: outcome.message };
      if (!outcome.ok) rc.log.warn({ reason: outcome.reason }, outcome.message);
    }
    const agent = startNode(this.deps.runtime, host, {
      deletedByFault: nodeDeletedByFault(simMachine),
      onChange: () => this.enqueue(simMachine),
    });
    const before = simMachine.status?.conditions;
    simMachine = await this.writeStatus(
      simMachine,
      nextStatus(
        simMachine,
        {
          ready: provisionedReady(`booted as K3s ${parsed.role} ${parsed.version}`),
          apiServer,
          node: nodeCondition(agent.status),
        },
        new Date(),
      ),
    );
    this.recordFault(simMachine, before);
    await this.announceProvisioned(simMachine, owners);
    return apiServer ? { requeueAfter: SERVER_HEALTH_PERIOD_MS } : undefined;
  }

  private async reconcileDelete(simMachine: SimMachine, owners: Owners, rc: ReconcileContext): Promise<void> {
    if (!hasFinalizer(simMachine, FINALIZERS.simMachine)) return;
    const namespace = simMachine.metadata!.namespace!;
    const name = simMachine.metadata!.name!;
    const uid = simMachine.metadata!.uid!;
    const key = `${namespace}/${name}`;
    await this.deps.runtime.removeNodeAgent(key, { deleteNode: true });
    const parsed = this.plans.get(uid);
    const server = parsed ? isServerRole(parsed) : isServerMachine(simMachine);
    if (server && owners.clusterName && !this.otherServersProvisioned(simMachine, owners)) {
      // The last server of the cluster: its API server stops and the cluster's data goes with it.
      await this.deps.runtime.releaseClusterApi(clusterKeyOf(namespace, owners.clusterName));
      void this.deps.context.recorder(SIM_MACHINE_CONTROLLER).event(simMachine, {
        type: 'Normal',
        reason: SimEventReason.APIServerStopped,
        action: 'Delete',
        note: `the last server of cluster ${owners.clusterName} is gone; its API server stopped`,
      });
    }
    this.deps.runtime.stateDir.remove(this.deps.runtime.stateDir.machineDir(namespace, name));
    const clusterName = owners.clusterName;
    if (clusterName) {
      await this.deps.context.publisher.publish('infrastructure-machine.deleted', {
        ...handoffEventBase(simMachine, RESOURCES.SimMachine.kind, clusterName),
        ...(owners.machine && { machineName: owners.machine.metadata!.name! }),
      });
    }
    await removeFinalizer(this.resources, simMachine, FINALIZERS.simMachine);
    this.bootAt.delete(uid);
    this.plans.delete(uid);
    for (const id of this.announced) if (id.startsWith(`${uid}:`)) this.announced.delete(id);
    rc.log.info({ server }, 'machine deleted');
  }

  private async failBootstrap(
    simMachine: SimMachine,
    owners: Owners & { machine: Machine },
    message: string,
  ): Promise<void> {
    const updated = await this.writeStatus(
      simMachine,
      nextStatus(
        simMachine,
        {
          ready: waiting(SimConditionReason.BootstrapDataInvalid, message),
          bootstrap: waiting(SimConditionReason.BootstrapFailed, message),
        },
        new Date(),
      ),
    );
    // The boot time stays: reading the same data again on a resync must not show the machine booting again.
    await this.announceFailed(updated, owners, SimConditionReason.BootstrapDataInvalid, message);
  }

  private recordFault(simMachine: SimMachine, before: Condition[] | undefined): void {
    const reasonOf = (list: Condition[] | undefined) => list?.find((c) => c.type === 'NodeRunning')?.reason;
    const after = reasonOf(simMachine.status?.conditions);
    if (after === reasonOf(before)) return;
    if (
      after === SimConditionReason.NodeNotReadyInjected ||
      after === SimConditionReason.NodeDeletedInjected
    ) {
      void this.deps.context.recorder(SIM_MACHINE_CONTROLLER).event(simMachine, {
        type: 'Warning',
        reason: SimEventReason.FaultInjected,
        action: 'InjectFault',
        note: simMachine.status?.conditions?.find((c) => c.type === 'NodeRunning')?.message ?? after,
      });
    }
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

  /** The cluster as its machines see it, once its SimCluster is provisioned. */
  private clusterRef(owners: Owners): SimClusterRef | undefined {
    const endpoint = owners.simCluster?.spec?.controlPlaneEndpoint;
    if (
      !owners.clusterName ||
      !owners.simCluster?.status?.initialization?.provisioned ||
      !endpoint?.host ||
      !endpoint.port
    )
      return undefined;
    return {
      namespace: owners.simCluster.metadata!.namespace!,
      clusterName: owners.clusterName,
      mode: owners.simCluster.spec?.mode ?? 'dedicated',
      endpoint: { host: endpoint.host, port: endpoint.port },
    };
  }

  private host(simMachine: SimMachine, cluster: SimClusterRef, parsed: ParsedK3sBootstrap): MachineHost {
    return {
      machine: simMachine,
      providerID:
        simMachine.spec?.providerID ??
        simProviderID(simMachine.metadata!.namespace!, simMachine.metadata!.name!),
      cluster,
      parsed,
    };
  }

  /** Whether another server machine of the cluster is provisioned and staying (its API server must stay). */
  private otherServersProvisioned(simMachine: SimMachine, owners: Owners): boolean {
    if (!owners.clusterName) return false;
    return this.deps.simMachines
      .byIndex(BY_CLUSTER_NAME, clusterIndexValue(simMachine.metadata!.namespace, owners.clusterName))
      .some(
        (other) =>
          other.metadata?.uid !== simMachine.metadata?.uid &&
          !isBeingDeleted(other) &&
          other.status?.initialization?.provisioned === true &&
          (this.plans.has(other.metadata!.uid!)
            ? isServerRole(this.plans.get(other.metadata!.uid!)!)
            : isServerMachine(other)),
      );
  }

  private writeStatus(simMachine: SimMachine, status: SimMachineStatus): Promise<SimMachine> {
    return applyStatusIfChanged(this.resources, simMachine, status);
  }

  private enqueue(simMachine: SimMachine): void {
    this.deps.context.controllers.enqueue(
      SIM_MACHINE_CONTROLLER,
      `${simMachine.metadata!.namespace}/${simMachine.metadata!.name}`,
    );
  }

  private async announceProvisioned(
    simMachine: SimMachine,
    owners: Owners & { machine: Machine },
  ): Promise<void> {
    const id = `${simMachine.metadata!.uid}:provisioned`;
    if (this.announced.has(id) || !owners.clusterName || !simMachine.spec?.providerID) return;
    await this.deps.context.publisher.publish('infrastructure-machine.provisioned', {
      ...handoffEventBase(simMachine, RESOURCES.SimMachine.kind, owners.clusterName),
      machineName: owners.machine.metadata!.name!,
      providerID: simMachine.spec.providerID,
      ...(simMachine.status?.addresses && { addresses: simMachine.status.addresses }),
      ...(simMachine.status?.failureDomain && { failureDomain: simMachine.status.failureDomain }),
    });
    this.announced.add(id);
  }

  private async announceFailed(
    simMachine: SimMachine,
    owners: Owners & { machine: Machine },
    reason: string,
    message: string,
  ): Promise<void> {
    const id = `${simMachine.metadata!.uid}:failed:${simMachine.metadata?.generation ?? 0}`;
    if (this.announced.has(id) || !owners.clusterName) return;
    await this.deps.context.publisher.publish('infrastructure-machine.failed', {
      ...handoffEventBase(simMachine, RESOURCES.SimMachine.kind, owners.clusterName),
      machineName: owners.machine.metadata!.name!,
      reason,
      message: message.slice(0, 1024),
    });
    this.announced.add(id);
    void this.deps.context.recorder(SIM_MACHINE_CONTROLLER).event(simMachine, {
      type: 'Warning',
      reason: SimEventReason.ProvisioningFailed,
      action: 'Provision',
      note: message,
    });
  }
}
