import {
  ConditionReason,
  ConditionStatus,
  type Machine,
  type MachineAddress,
  type SimCluster,
  type SimMachine,
} from '@capstan/api';
import type { ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import type { KubeClient, ReconcileResult } from '@capstan/kube';
import type { ReconcileScope } from '@capstan/provider-kit';
import {
  machineAddresses,
  simProviderID,
  SimConditionReason,
  type NodeAgentStatus,
  type SimClusterRef,
  type SimRuntime,
} from '@capstan/sim';
import { readBootstrapData, type BootstrapDataResult } from './bootstrap-data.js';
import {
  applyInstalled,
  bringUpServer,
  isServerRole,
  runHost,
  startNode,
  writeSentinel,
  type MachineHost,
  type ServerOutcome,
} from './machine-host.js';
import {
  nextStatus,
  nodeCondition,
  nodeDeletedByFault,
  provisionedReady,
  waiting,
  type SimMachineObservation,
} from './simmachine.status.js';

// The phases of a SimMachine reconcile, after upstream's machine_controller_phases.go. Provisioning runs
// prerequisites -> boot delay -> bootstrap data -> server -> host; a provisioned machine keeps its host running.
// A phase hands what it found to the next one, or halts: the status says why, and when to look again. Each phase
// only changes the draft (`scope.obj`): the reconciler kit writes it once, when the reconcile ends.

export const RETRY_MISSING_DATA_MS = 5_000;
/** Server machines check their cluster's API this often (a crash of a started one is noticed at once). */
export const SERVER_HEALTH_PERIOD_MS = 30_000;

type ConditionFields = SimMachineObservation['ready'];

/** Where a phase stops the reconcile: what the status reports, and when to look at the machine again. */
export interface Halt {
  halt: SimMachineObservation;
  requeueAfter?: number;
}

/** What the phases of one reconcile work with. */
export interface MachineScope {
  scope: ReconcileScope<SimMachine>;
  /** The owning Machine: only an owned SimMachine gets as far as the phases. */
  machine: Machine;
  /** The cluster as its machines see it, once its SimCluster is provisioned. */
  cluster: SimClusterRef | undefined;
  now: Date;
}

/** What the phases keep across the reconciles of one provider run (a restart starts again from the objects). */
export interface MachinePhaseDeps {
  client: KubeClient;
  runtime: SimRuntime;
  provisioningJitter: number;
  /** When a booting machine is up (uid -> epoch ms); a restart starts the boot again, as a rebooting host would. */
  bootAt: Map<string, number>;
  /** Parsed bootstrap data of provisioned machines (uid -> data), read once per provider run. */
  plans: Map<string, ParsedK3sBootstrap>;
  /** Whether another server machine of the cluster is provisioned and staying (its API server must stay). */
  otherServersProvisioned(simMachine: SimMachine): boolean;
  /** The cluster's other server machines that are staying (provisioned or not). */
  otherServers(simMachine: SimMachine): SimMachine[];
  /** Reconciles the machine again: its node agent saw a change. */
  enqueue(simMachine: SimMachine): void;
  random?: () => number;
}

const isHalt = (found: object): found is Halt => 'halt' in found;

/** Provisions a machine that is not provisioned yet, one phase after the other. */
export async function provision(ms: MachineScope, deps: MachinePhaseDeps): Promise<ReconcileResult | void> {
  const ready = prerequisites(ms.scope.obj, ms.machine, ms.cluster);
  if (isHalt(ready)) return halt(ms, ready);
  const booted = reconcileBoot(ms, deps);
  if (booted) return halt(ms, booted);
  const parsed = await reconcileBootstrapData(ms, deps, ready.secretName);
  if (isHalt(parsed)) return halt(ms, parsed);
  const host = hostOf(ms.scope.obj, ready.cluster, parsed);
  const server = await reconcileServer(deps, host);
  if (isHalt(server)) return halt(ms, server);
  report(ms, await reconcileHost(ms, deps, host, server.apiServer));
  return server.apiServer ? { requeueAfter: SERVER_HEALTH_PERIOD_MS } : undefined;
}

/** A provisioned machine: its server and node run (again, after a provider restart) and its status follows them. */
export async function keepRunning(ms: MachineScope, deps: MachinePhaseDeps): Promise<ReconcileResult | void> {
  const uid = ms.scope.obj.metadata!.uid!;
  // Kept until the provisioned status is read back: a write that failed must not start the boot delay again.
  deps.bootAt.delete(uid);
  const parsed = deps.plans.get(uid) ?? (await reloadPlan(ms, deps));
  if (isHalt(parsed)) return halt(ms, parsed);
  if (!ms.cluster) {
    const node = waiting(SimConditionReason.WaitingForAPIServer, 'the SimCluster is not provisioned');
    return halt(ms, { halt: { ready: provisionedReady('provisioned'), node } });
  }
  const simMachine = ms.scope.obj;
  const host = hostOf(simMachine, ms.cluster, parsed);
  let apiServer: ConditionFields | undefined;
  if (isServerRole(parsed)) {
    const outcome = await bringUpServer(deps.runtime, host, {
      firstBoot: false,
      otherServersProvisioned: true,
      otherServers: deps.otherServers(simMachine),
    });
    if (!outcome.ok) ms.scope.rc.log.warn({ reason: outcome.reason }, outcome.message);
    apiServer = restartVerdict(outcome);
  }
  const agent = startNode(deps.runtime, host, {
    deletedByFault: nodeDeletedByFault(simMachine),
    onChange: () => deps.enqueue(simMachine),
  });
  await runHost(deps.runtime, host, { firstBoot: false, onInstall: () => deps.enqueue(simMachine) });
  const installed = await applyInstalled(deps.runtime, host);
  if (installed?.restarted) ms.scope.rc.log.info({ version: installed.version }, 'K3s reinstalled: API server restarted');
  report(ms, {
    ready: provisionedReady(`booted as K3s ${parsed.role} ${installed?.version ?? parsed.version}`),
    apiServer,
    node: nodeCondition(agent.status),
  });
  return apiServer ? { requeueAfter: SERVER_HEALTH_PERIOD_MS } : undefined;
}

/**
 * Phase 1: what provisioning needs before it starts: no injected failure, a provisioned SimCluster, and a Machine
 * that names its bootstrap data.
 */
export function prerequisites(
  simMachine: SimMachine,
  machine: Machine,
  cluster: SimClusterRef | undefined,
): Halt | { cluster: SimClusterRef; secretName: string } {
  const failure = simMachine.spec?.failProvisioning;
  if (failure) return { halt: { ready: waiting(SimConditionReason.ProvisioningFailed, failure) } };
  if (!cluster) {
    const why = 'waiting for the SimCluster to be provisioned';
    return { halt: { ready: waiting(ConditionReason.WaitingForClusterInfrastructureReady, why) } };
  }
  const secretName = machine.spec?.bootstrap?.dataSecretName;
  if (!secretName) {
    const why = "waiting for the Machine's bootstrap data secret";
    return { halt: { ready: waiting(ConditionReason.WaitingForBootstrapData, why) } };
  }
  return { cluster, secretName };
}

/** Phase 2: the machine boots its provisioning delay (plus jitter) after it first got this far. */
function reconcileBoot(ms: MachineScope, deps: MachinePhaseDeps): Halt | undefined {
  const uid = ms.scope.obj.metadata!.uid!;
  const schedule = bootSchedule(ms.scope.obj, {
    now: ms.now.getTime(),
    bootAt: deps.bootAt.get(uid),
    jitter: deps.provisioningJitter,
    random: deps.random ?? Math.random,
  });
  deps.bootAt.set(uid, schedule.bootAt);
  return schedule.halt;
}

/** When the machine is up (`bootAt`, kept for later reconciles), and while it is not, what it reports. */
export function bootSchedule(
  simMachine: SimMachine,
  clock: { now: number; bootAt: number | undefined; jitter: number; random: () => number },
): { bootAt: number; halt?: Halt } {
  const delaySeconds = simMachine.spec?.provisioningDelaySeconds ?? 0;
  const bootAt = clock.bootAt ?? clock.now + delaySeconds * 1000 * (1 + clock.random() * clock.jitter);
  if (clock.now >= bootAt) return { bootAt };
  const why = `booting (provisioning delay ${delaySeconds} s plus jitter)`;
  return {
    bootAt,
    halt: { halt: { ready: waiting(SimConditionReason.Booting, why) }, requeueAfter: bootAt - clock.now },
  };
}

/** Phase 3: the bootstrap data, read as a host reads it. */
async function reconcileBootstrapData(
  ms: MachineScope,
  deps: MachinePhaseDeps,
  secretName: string,
): Promise<Halt | ParsedK3sBootstrap> {
  return bootstrapDataVerdict(
    await readBootstrapData(deps.client, ms.scope.obj.metadata!.namespace!, secretName),
  );
}

/** What the bootstrap data as read means: run it, wait for it, or fail on it. */
export function bootstrapDataVerdict(data: BootstrapDataResult): Halt | ParsedK3sBootstrap {
  if (data.kind === 'missing') {
    return {
      halt: { ready: waiting(ConditionReason.WaitingForBootstrapData, data.message) },
      requeueAfter: RETRY_MISSING_DATA_MS,
    };
  }
  return data.kind === 'invalid' ? invalidBootstrap(data.message) : data.parsed;
}

/**
 * Bootstrap data the host cannot run: provisioning fails (announced once, see simmachine.handoff). The boot time
 * stays: reading the same data again on a resync must not show the machine booting again.
 */
export function invalidBootstrap(message: string): Halt {
  return {
    halt: {
      ready: waiting(SimConditionReason.BootstrapDataInvalid, message),
      bootstrap: waiting(SimConditionReason.BootstrapFailed, message),
    },
  };
}

/** Phase 4: a server's first boot brings its cluster's API up (or joins it); agents have nothing to do here. */
async function reconcileServer(
  deps: MachinePhaseDeps,
  host: MachineHost,
): Promise<Halt | { apiServer?: ConditionFields }> {
  if (!isServerRole(host.parsed)) return {};
  const outcome = await bringUpServer(deps.runtime, host, {
    firstBoot: true,
    otherServersProvisioned: deps.otherServersProvisioned(host.machine),
    otherServers: deps.otherServers(host.machine),
  });
  return firstBootVerdict(outcome);
}

/** What a server's first boot came to: its cluster API answers, it waits (and retries), or its data is invalid. */
export function firstBootVerdict(outcome: ServerOutcome): Halt | { apiServer: ConditionFields } {
  if (outcome.ok) return { apiServer: apiServerRunning(outcome.api.url) };
  if (outcome.invalidData) return invalidBootstrap(outcome.message);
  return { halt: { ready: waiting(outcome.reason, outcome.message) }, requeueAfter: outcome.retryMs };
}

/** A provisioned server's API after a check (or a restart): it answers, or why not. */
export function restartVerdict(outcome: ServerOutcome): ConditionFields {
  return outcome.ok
    ? apiServerRunning(outcome.api.url)
    : { status: ConditionStatus.False, reason: outcome.reason, message: outcome.message };
}

const apiServerRunning = (url: string): ConditionFields => ({
  status: ConditionStatus.True,
  reason: SimConditionReason.APIServerRunning,
  message: `the cluster API answers at ${url}`,
});

/** Phase 5: the host has run its bootstrap data: files and sentinel written, provider ID recorded, node started. */
async function reconcileHost(
  ms: MachineScope,
  deps: MachinePhaseDeps,
  host: MachineHost,
  apiServer: ConditionFields | undefined,
): Promise<SimMachineObservation> {
  const simMachine = ms.scope.obj;
  const namespace = simMachine.metadata!.namespace!;
  const name = simMachine.metadata!.name!;
  deps.plans.set(simMachine.metadata!.uid!, host.parsed);
  const sentinel = writeSentinel(deps.runtime, namespace, name);
  if (simMachine.spec?.providerID !== host.providerID) {
    simMachine.spec = { ...simMachine.spec, providerID: host.providerID };
  }
  const agent = startNode(deps.runtime, host, {
    deletedByFault: false,
    onChange: () => deps.enqueue(simMachine),
  });
  await runHost(deps.runtime, host, { firstBoot: true, onInstall: () => deps.enqueue(simMachine) });
  return provisionedObservation({
    parsed: host.parsed,
    sentinel,
    apiServer,
    node: agent.status,
    addresses: machineAddresses({ namespace, name }, agent.identity.name),
    failureDomain: ms.machine.spec?.failureDomain,
  });
}

/** What a machine whose host ran its bootstrap data reports: the contract fields and its conditions. */
export function provisionedObservation(host: {
  parsed: Pick<ParsedK3sBootstrap, 'role' | 'version'>;
  sentinel: string;
  apiServer?: ConditionFields;
  node: NodeAgentStatus;
  addresses: readonly MachineAddress[];
  failureDomain?: string;
}): SimMachineObservation {
  return {
    ready: provisionedReady(`booted as K3s ${host.parsed.role} ${host.parsed.version}`),
    bootstrap: {
      status: ConditionStatus.True,
      reason: SimConditionReason.BootstrapExecSucceeded,
      message: `bootstrap data ran; sentinel written at ${host.sentinel}`,
    },
    apiServer: host.apiServer,
    node: nodeCondition(host.node),
    provisioned: true,
    addresses: [...host.addresses],
    ...(host.failureDomain && { failureDomain: host.failureDomain }),
  };
}

/** The plan of a provisioned machine this provider run has not read yet (after a restart). */
async function reloadPlan(ms: MachineScope, deps: MachinePhaseDeps): Promise<Halt | ParsedK3sBootstrap> {
  const secretName = ms.machine.spec?.bootstrap?.dataSecretName;
  const data = secretName
    ? await readBootstrapData(deps.client, ms.scope.obj.metadata!.namespace!, secretName)
    : undefined;
  const plan = reloadVerdict(data);
  if (!isHalt(plan)) deps.plans.set(ms.scope.obj.metadata!.uid!, plan);
  return plan;
}

/** A provisioned machine without its bootstrap data cannot start its host again: it stays provisioned, nodeless. */
export function reloadVerdict(data: BootstrapDataResult | undefined): Halt | ParsedK3sBootstrap {
  if (data?.kind === 'parsed') return data.parsed;
  const why = `the host cannot start again: ${data?.message ?? 'the Machine names no bootstrap data secret'}`;
  return {
    halt: {
      ready: provisionedReady('provisioned'),
      node: waiting(SimConditionReason.NodeRegistrationFailed, why),
    },
    requeueAfter: RETRY_MISSING_DATA_MS,
  };
}

/** The cluster as its machines see it, once its SimCluster is provisioned and has an endpoint. */
export function clusterRefOf(
  clusterName: string | undefined,
  simCluster: SimCluster | undefined,
): SimClusterRef | undefined {
  const endpoint = simCluster?.spec?.controlPlaneEndpoint;
  if (!clusterName || !simCluster?.status?.initialization?.provisioned || !endpoint?.host || !endpoint.port) {
    return undefined;
  }
  return {
    namespace: simCluster.metadata!.namespace!,
    clusterName,
    mode: simCluster.spec?.mode ?? 'dedicated',
    endpoint: { host: endpoint.host, port: endpoint.port },
  };
}

/** The simulated host of a machine: its provider ID is the one recorded, else `sim://<namespace>/<name>`. */
export function hostOf(
  simMachine: SimMachine,
  cluster: SimClusterRef,
  parsed: ParsedK3sBootstrap,
): MachineHost {
  return {
    machine: simMachine,
    providerID:
      simMachine.spec?.providerID ??
      simProviderID(simMachine.metadata!.namespace!, simMachine.metadata!.name!),
    cluster,
    parsed,
  };
}

function halt(ms: MachineScope, found: Halt): ReconcileResult | undefined {
  report(ms, found.halt);
  return found.requeueAfter === undefined ? undefined : { requeueAfter: found.requeueAfter };
}

/** Sets what the reconcile observed on the draft (the kit writes it). */
export function report(ms: Pick<MachineScope, 'scope' | 'now'>, observed: SimMachineObservation): void {
  ms.scope.obj.status = nextStatus(ms.scope.obj, observed, ms.now);
}
