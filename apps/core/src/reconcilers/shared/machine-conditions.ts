import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  getCondition,
  type Condition,
  type ConditionInput,
  type Machine,
} from '@capstan/api';
import { needsOwnerRemediation } from './machine-state.js';

// Summaries of one condition over many Machines, as upstream's conditions.NewAggregateCondition: False if any
// Machine reports False, else Unknown if any is Unknown or silent, else True; the message names the Machines.

/** Machines named in an aggregate message before the rest are only counted. */
const NAMED_MACHINES = 3;

export interface MachineVerdict {
  status: ConditionStatus;
  /** Why, when not True (the Machine's condition message or reason). */
  detail?: string;
}

export interface AggregateOptions {
  type: string;
  reasons: { true: string; false: string; unknown: string };
  observedGeneration?: number;
}

/** Aggregates a per-machine verdict; `machines` must not be empty (callers report NoReplicas themselves). */
export function aggregateMachines(
  machines: readonly Machine[],
  verdict: (machine: Machine) => MachineVerdict,
  options: AggregateOptions,
): ConditionInput {
  const bad: { name: string; detail: string }[] = [];
  const unknown: { name: string; detail: string }[] = [];
  for (const machine of machines) {
    const v = verdict(machine);
    const name = machine.metadata.name ?? '?';
    if (v.status === ConditionStatus.False) bad.push({ name, detail: v.detail ?? '' });
    else if (v.status === ConditionStatus.Unknown) unknown.push({ name, detail: v.detail ?? '' });
  }
  const generation =
    options.observedGeneration === undefined ? {} : { observedGeneration: options.observedGeneration };
  if (bad.length > 0) {
    return {
      type: options.type,
      status: ConditionStatus.False,
      reason: options.reasons.false,
      message: describe(bad, unknown),
      ...generation,
    };
  }
  if (unknown.length > 0) {
    return {
      type: options.type,
      status: ConditionStatus.Unknown,
      reason: options.reasons.unknown,
      message: describe(unknown, []),
      ...generation,
    };
  }
  return { type: options.type, status: ConditionStatus.True, reason: options.reasons.true, ...generation };
}

/** A machine condition as a verdict: a missing condition is Unknown. */
export function conditionVerdict(machine: Machine, type: string): MachineVerdict {
  const condition = getCondition(machine.status?.conditions, type);
  if (!condition) return { status: ConditionStatus.Unknown, detail: `${type} condition not yet reported` };
  return {
    status: condition.status as ConditionStatus,
    detail: condition.message || condition.reason,
  };
}

function describe(
  first: { name: string; detail: string }[],
  then: { name: string; detail: string }[],
): string {
  const groups = new Map<string, string[]>();
  // By name: the informer lists Machines in no fixed order, and a message that only reorders is a status write.
  for (const { name, detail } of [...byName(first), ...byName(then)]) {
    const names = groups.get(detail) ?? [];
    names.push(name);
    groups.set(detail, names);
  }
  const lines: string[] = [];
  let shown = 0;
  let hidden = 0;
  for (const [detail, names] of groups) {
    if (shown >= NAMED_MACHINES) {
      hidden += names.length;
      continue;
    }
    const listed = names.slice(0, NAMED_MACHINES - shown);
    shown += listed.length;
    hidden += names.length - listed.length;
    const label = listed.length === 1 ? 'Machine' : 'Machines';
    lines.push(`* ${label} ${listed.join(', ')}: ${detail.replace(/\n/g, ' ')}`.trimEnd());
  }
  if (hidden > 0) lines.push(`And ${hidden} Machine${hidden === 1 ? '' : 's'} more`);
  return lines.join('\n');
}

function byName<T extends { name: string }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// The conditions MachineSets and MachineDeployments both report about their Machines.

/** Their types: conditions of MachineSets and MachineDeployments that their controllers own. */
export const MACHINE_SUMMARY_CONDITIONS = [
  ConditionType.ScalingUp,
  ConditionType.ScalingDown,
  ConditionType.MachinesReady,
  ConditionType.MachinesUpToDate,
  ConditionType.Remediating,
  ConditionType.Deleting,
] as const;

export function machinesReadyCondition(machines: readonly Machine[]): ConditionInput {
  if (machines.length === 0) {
    return {
      type: ConditionType.MachinesReady,
      status: ConditionStatus.True,
      reason: ConditionReason.NoReplicas,
    };
  }
  return aggregateMachines(machines, (m) => conditionVerdict(m, ConditionType.Ready), {
    type: ConditionType.MachinesReady,
    reasons: {
      true: ConditionReason.Ready,
      false: ConditionReason.NotReady,
      unknown: ConditionReason.ReadyUnknown,
    },
  });
}

export function machinesUpToDateCondition(
  machines: readonly Machine[],
  isUpToDate: (machine: Machine) => boolean,
): ConditionInput {
  if (machines.length === 0) {
    return {
      type: ConditionType.MachinesUpToDate,
      status: ConditionStatus.True,
      reason: ConditionReason.NoReplicas,
    };
  }
  return aggregateMachines(
    machines,
    (m) =>
      isUpToDate(m)
        ? { status: ConditionStatus.True }
        : { status: ConditionStatus.False, detail: 'Machine does not run the current template' },
    {
      type: ConditionType.MachinesUpToDate,
      reasons: {
        true: ConditionReason.UpToDate,
        false: ConditionReason.NotUpToDate,
        unknown: ConditionReason.UpToDateUnknown,
      },
    },
  );
}

/** True while Machines wait for their owner to remediate them; the message names them and why. */
export function remediatingCondition(machines: readonly Machine[]): ConditionInput {
  const toRemediate = machines.filter(needsOwnerRemediation);
  if (toRemediate.length === 0) {
    return {
      type: ConditionType.Remediating,
      status: ConditionStatus.False,
      reason: ConditionReason.NotRemediating,
    };
  }
  const summary = aggregateMachines(toRemediate, (m) => conditionVerdict(m, ConditionType.OwnerRemediated), {
    type: ConditionType.Remediating,
    reasons: {
      true: ConditionReason.Remediating,
      false: ConditionReason.Remediating,
      unknown: ConditionReason.Remediating,
    },
  });
  return { ...summary, status: ConditionStatus.True, reason: ConditionReason.Remediating };
}

export function scalingUpCondition(current: number, desired: number, blockedBy?: string): ConditionInput {
  if (current >= desired) {
    return {
      type: ConditionType.ScalingUp,
      status: ConditionStatus.False,
      reason: ConditionReason.NotScalingUp,
    };
  }
  const message = `Scaling up from ${current} to ${desired} replicas`;
  return {
    type: ConditionType.ScalingUp,
    status: ConditionStatus.True,
    reason: ConditionReason.ScalingUp,
    message: blockedBy ? `${message}${BLOCKED_BECAUSE}${blockedBy}` : message,
  };
}

const BLOCKED_BECAUSE = ' is blocked because ';

/** What blocks an object's scale-up, as its ScalingUp condition (written by scalingUpCondition) says. */
export function scaleUpBlockerOf(conditions: readonly Condition[] | undefined): string | undefined {
  const scalingUp = getCondition(conditions, ConditionType.ScalingUp);
  if (scalingUp?.status !== ConditionStatus.True) return undefined;
  const at = scalingUp.message?.indexOf(BLOCKED_BECAUSE) ?? -1;
  return at < 0 ? undefined : scalingUp.message!.slice(at + BLOCKED_BECAUSE.length);
}

export function scalingDownCondition(current: number, desired: number): ConditionInput {
  if (current <= desired) {
    return {
      type: ConditionType.ScalingDown,
      status: ConditionStatus.False,
      reason: ConditionReason.NotScalingDown,
    };
  }
  return {
    type: ConditionType.ScalingDown,
    status: ConditionStatus.True,
    reason: ConditionReason.ScalingDown,
    message: `Scaling down from ${current} to ${desired} replicas`,
  };
}
