import { canSafelyRemove, isHealthy, type ControlPlaneMachine } from './control-plane-machine.js';
import { checkRetry, type RemediationPolicy } from './remediation.js';
import { failureDomainForNewMachine, remediationOrder, selectMachineToDelete } from './selection.js';

export interface PlanInput {
  desiredReplicas: number;
  /** The workload API answered at least once (`status.initialization.controlPlaneInitialized`). */
  initialized: boolean;
  /** `rollout.strategy.rollingUpdate.maxSurge`: 1 surges a new machine first, 0 deletes an old one first. */
  maxSurge: 0 | 1;
  machines: readonly ControlPlaneMachine[];
  /** Names of the cluster's failure domains suitable for control plane machines. */
  failureDomains: readonly string[];
  remediation: RemediationPolicy;
  now: number;
  /**
   * How out-of-date machines change (docs/in-place-updates.md): replaced (the default, and `Never`), updated in
   * place one at a time, blocked (`Required` and not possible in place), or waiting for the bootstrap provider.
   */
  inPlace?: InPlaceVerdict;
}

export type InPlaceVerdict =
  /** Update in place; `machines`, when given, are the out-of-date machines the bootstrap provider said yes for. */
  | { kind: 'apply'; machines?: readonly string[] }
  | { kind: 'replace' }
  | { kind: 'blocked'; reason: string }
  | { kind: 'waiting'; reason: string };

export type CreateReason = 'initialize' | 'scale-up' | 'rollout';
export type DeleteReason = 'scale-down' | 'rollout';

/** The one step to take now; the next reconcile, triggered by its effect, plans the next. */
export type PlanAction =
  | { type: 'create'; reason: CreateReason; initServer: boolean; failureDomain?: string }
  | { type: 'delete'; reason: DeleteReason; machine: string }
  | { type: 'remediate'; machine: string; retryCount: number }
  | { type: 'update'; machine: string }
  | { type: 'wait'; message: string; retryAt?: number }
  | { type: 'none' };

export interface Plan {
  action: PlanAction;
  /** Why an unhealthy machine is left alone, when one is (for the Remediating condition). */
  remediationBlocked?: string;
  /** Why a Required in-place rollout cannot go on (for the RollingOut condition). */
  inPlaceBlocked?: string;
}

const names = (machines: readonly ControlPlaneMachine[]) => machines.map((m) => m.name).join(', ');

/**
 * Decides the next step for a K3s control plane, one machine at a time, as upstream KCP does: wait while a
 * machine is being deleted; remediate an unhealthy machine when etcd keeps its quorum without it; create
 * the init machine, then (once initialized) one machine at a time while every machine is Ready; roll out
 * out-of-date machines by surging one new machine and then deleting one old (or the reverse with
 * maxSurge 0, when that is quorum-safe); scale down one at a time, never below a healthy majority.
 */
export function planControlPlane(input: PlanInput): Plan {
  const live = input.machines.filter((m) => !m.deleting);
  const deleting = input.machines.filter((m) => m.deleting);
  if (deleting.length > 0) {
    return { action: { type: 'wait', message: `Waiting for machine(s) ${names(deleting)} to be deleted` } };
  }

  const remediation = planRemediation(input, live);
  if (remediation.action.type !== 'none') return remediation;
  const remediationBlocked = remediation.remediationBlocked;
  const withNote = (action: PlanAction): Plan => ({
    action,
    ...(remediationBlocked && { remediationBlocked }),
  });

  if (!input.initialized) {
    if (live.length === 0 && input.desiredReplicas > 0) {
      return withNote(create(input, 'initialize', true));
    }
    return withNote({ type: 'wait', message: 'Waiting for the control plane to be initialized' });
  }

  const outdated = live.filter((m) => !m.upToDate);
  // A failed update for an earlier spec is not running: that machine is updated again, to the current spec.
  const updating = live.filter((m) => m.updating && !m.updateStale);
  if (updating.length > 0) return withNote(waitForUpdates(updating));
  const verdict = input.inPlace ?? { kind: 'replace' };
  if (outdated.length > 0 && verdict.kind !== 'replace' && live.length === input.desiredReplicas) {
    const plan = withNote(planInPlace(input, live, outdated, verdict));
    return verdict.kind === 'blocked' ? { ...plan, inPlaceBlocked: verdict.reason } : plan;
  }
  if (outdated.length > 0) return withNote(planRollout(input, live, outdated));
  if (live.length < input.desiredReplicas) return withNote(scaleUp(input, live, 'scale-up'));
  if (live.length > input.desiredReplicas) return withNote(scaleDown(input, live, live, 'scale-down'));
  return withNote({ type: 'none' });
}

function create(input: PlanInput, reason: CreateReason, initServer: boolean): PlanAction {
  const failureDomain = failureDomainForNewMachine(input.failureDomains, input.machines);
  return { type: 'create', reason, initServer, ...(failureDomain && { failureDomain }) };
}

/** Joining is safe only while every existing machine is Ready (upstream's preflight checks). */
function scaleUp(input: PlanInput, live: readonly ControlPlaneMachine[], reason: CreateReason): PlanAction {
  const notReady = live.filter((m) => !isHealthy(m));
  if (notReady.length > 0) {
    return {
      type: 'wait',
      message: `Waiting for machine(s) ${names(notReady)} to be Ready before adding one`,
    };
  }
  return create(input, reason, false);
}

function scaleDown(
  input: PlanInput,
  live: readonly ControlPlaneMachine[],
  candidates: readonly ControlPlaneMachine[],
  reason: DeleteReason,
): PlanAction {
  const victim = selectMachineToDelete(live, candidates);
  if (!victim) return { type: 'none' };
  const othersNotReady = live.filter((m) => m.name !== victim.name && !isHealthy(m));
  if (othersNotReady.length > 0) {
    return {
      type: 'wait',
      message: `Waiting for machine(s) ${names(othersNotReady)} to be Ready before removing ${victim.name}`,
    };
  }
  if (!canSafelyRemove(input.machines, victim.name, input.desiredReplicas)) {
    return {
      type: 'wait',
      message: `Removing ${victim.name} would leave fewer healthy machines than etcd quorum`,
    };
  }
  return { type: 'delete', reason, machine: victim.name };
}

function planRollout(
  input: PlanInput,
  live: readonly ControlPlaneMachine[],
  outdated: readonly ControlPlaneMachine[],
): PlanAction {
  if (input.maxSurge === 0 && live.length >= input.desiredReplicas) {
    const deleteFirst = scaleDown(input, live, outdated, 'rollout');
    // Deleting first is only for control planes large enough to lose one member; smaller ones surge.
    if (deleteFirst.type === 'delete' || live.length > input.desiredReplicas) return deleteFirst;
  }
  if (live.length <= input.desiredReplicas) return scaleUp(input, live, 'rollout');
  return scaleDown(input, live, outdated, 'rollout');
}

/** One update at a time: nothing else moves while one runs, and a failed one halts the rollout there. */
function waitForUpdates(updating: readonly ControlPlaneMachine[]): PlanAction {
  const failed = updating.find((m) => m.updateFailed);
  if (failed) {
    return { type: 'wait', message: `Rollout halted: the in-place update of machine ${failed.name} failed: ${failed.updateFailed}` };
  }
  return { type: 'wait', message: `Waiting for the in-place update of machine(s) ${names(updating)}` };
}

/**
 * The next machine to update in place, oldest first, when the others are healthy and etcd keeps its quorum while
 * it restarts (a single machine is updated anyway: there is no other to keep the API up).
 */
function planInPlace(
  input: PlanInput,
  live: readonly ControlPlaneMachine[],
  outdated: readonly ControlPlaneMachine[],
  verdict: Exclude<InPlaceVerdict, { kind: 'replace' }>,
): PlanAction {
  if (verdict.kind !== 'apply') return { type: 'wait', message: verdict.reason };
  // Each machine was asked about on its own: one the provider refused is not updated in place.
  const able = verdict.machines ? outdated.filter((m) => verdict.machines!.includes(m.name)) : outdated;
  if (able.length === 0) return { type: 'wait', message: 'No out-of-date machine can be updated in place' };
  // A machine whose update failed for an earlier spec is down already: it goes first, or the rollout would wait
  // for it to be Ready before touching any other machine, and it never would be.
  const candidate = [...able].sort(
    (a, b) =>
      Number(b.updateStale === true) - Number(a.updateStale === true) ||
      a.createdAt - b.createdAt ||
      (a.name < b.name ? -1 : 1),
  )[0]!;
  const othersNotReady = live.filter((m) => m.name !== candidate.name && !isHealthy(m));
  if (othersNotReady.length > 0) {
    return { type: 'wait', message: `Waiting for machine(s) ${names(othersNotReady)} to be Ready before updating ${candidate.name}` };
  }
  if (live.length > 1 && !canSafelyRemove(input.machines, candidate.name, input.desiredReplicas)) {
    return { type: 'wait', message: `Updating ${candidate.name} would leave fewer healthy machines than etcd quorum` };
  }
  return { type: 'update', machine: candidate.name };
}

function planRemediation(input: PlanInput, live: readonly ControlPlaneMachine[]): Plan {
  const unhealthy = remediationOrder(live);
  const machine = unhealthy[0];
  if (!machine) return { action: { type: 'none' } };
  const blocked = (message: string): Plan => ({ action: { type: 'none' }, remediationBlocked: message });

  if (input.initialized) {
    if (live.length <= 1) {
      return blocked(`Machine ${machine.name} cannot be remediated: it is the only control plane machine`);
    }
    if (!canSafelyRemove(input.machines, machine.name, input.desiredReplicas)) {
      return blocked(`Machine ${machine.name} cannot be remediated: removing it would lose etcd quorum`);
    }
  }
  // Not initialized: the machine failed while initializing the cluster; replacing it retries the init.
  const retry = checkRetry(machine, input.remediation, input.now);
  if (!retry.allowed) {
    if (retry.reason === 'RemediationDeferred') {
      return {
        action: {
          type: 'wait',
          message: retry.message,
          ...(retry.retryAt !== undefined && { retryAt: retry.retryAt }),
        },
        remediationBlocked: retry.message,
      };
    }
    return blocked(retry.message);
  }
  return { action: { type: 'remediate', machine: machine.name, retryCount: retry.retryCount } };
}
