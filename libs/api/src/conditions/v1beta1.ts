import { ConditionStatus } from '../constants/conditions.js';
import { arrayAt, isRecord, valueAt } from '../contract/unstructured.js';
import type { V1Beta1Condition } from '../types/deprecated-status.js';
import { toRFC3339 } from './conditions.js';

// The v1beta1 conditions upstream's core still writes under status.deprecated.v1beta1 (clusterv1.Condition: a
// severity, no observedGeneration), with the semantics of upstream's util/conditions/deprecated/v1beta1: Ready
// first then sorted by type, lastTransitionTime kept while status, reason, severity and message stay the same,
// mirror, summary and aggregate merged by (status, severity) groups.

/** v1beta1 condition types the core sets (upstream api/core/v1beta2/v1beta1_condition_consts.go). */
export const V1Beta1ConditionType = {
  Ready: 'Ready',
  InfrastructureReady: 'InfrastructureReady',
  ControlPlaneInitialized: 'ControlPlaneInitialized',
  ControlPlaneReady: 'ControlPlaneReady',
  BootstrapReady: 'BootstrapReady',
  DrainingSucceeded: 'DrainingSucceeded',
  PreDrainDeleteHookSucceeded: 'PreDrainDeleteHookSucceeded',
  PreTerminateDeleteHookSucceeded: 'PreTerminateDeleteHookSucceeded',
  VolumeDetachSucceeded: 'VolumeDetachSucceeded',
  HealthCheckSucceeded: 'HealthCheckSucceeded',
  OwnerRemediated: 'OwnerRemediated',
  NodeHealthy: 'NodeHealthy',
  RemediationAllowed: 'RemediationAllowed',
  Available: 'Available',
  MachineSetReady: 'MachineSetReady',
  MachinesCreated: 'MachinesCreated',
  MachinesReady: 'MachinesReady',
  Resized: 'Resized',
} as const;

/** v1beta1 reasons the core sets (same file). */
export const V1Beta1Reason = {
  Deleting: 'Deleting',
  DeletionFailed: 'DeletionFailed',
  Deleted: 'Deleted',
  WaitingForInfrastructure: 'WaitingForInfrastructure',
  MissingNodeRef: 'MissingNodeRef',
  WaitingForControlPlaneProviderInitialized: 'WaitingForControlPlaneProviderInitialized',
  WaitingForControlPlane: 'WaitingForControlPlane',
  WaitingForDataSecret: 'WaitingForDataSecret',
  Draining: 'Draining',
  WaitingExternalHook: 'WaitingExternalHook',
  WaitingForVolumeDetach: 'WaitingForVolumeDetach',
  HasRemediateMachineAnnotation: 'HasRemediateMachineAnnotation',
  NodeStartupTimeout: 'NodeStartupTimeout',
  UnhealthyNode: 'UnhealthyNode',
  UnhealthyMachine: 'UnhealthyMachine',
  WaitingForRemediation: 'WaitingForRemediation',
  WaitingForNodeRef: 'WaitingForNodeRef',
  NodeProvisioning: 'NodeProvisioning',
  NodeNotFound: 'NodeNotFound',
  NodeConditionsFailed: 'NodeConditionsFailed',
  NodeInspectionFailed: 'NodeInspectionFailed',
  TooManyUnhealthy: 'TooManyUnhealthy',
  WaitingForMachineSet: 'WaitingForMachineSet',
  WaitingForAvailableMachines: 'WaitingForAvailableMachines',
  BootstrapTemplateCloningFailed: 'BootstrapTemplateCloningFailed',
  InfrastructureTemplateCloningFailed: 'InfrastructureTemplateCloningFailed',
  MachineCreationFailed: 'MachineCreationFailed',
  ScalingUp: 'ScalingUp',
  ScalingDown: 'ScalingDown',
} as const;

export const V1Beta1Severity = { Error: 'Error', Warning: 'Warning', Info: 'Info' } as const;
export type V1Beta1Severity = (typeof V1Beta1Severity)[keyof typeof V1Beta1Severity];

/** A v1beta1 condition as computed, before `setV1Beta1Condition` gives it its lastTransitionTime. */
export interface V1Beta1ConditionInput {
  type: string;
  status: string;
  /** Only with status False. */
  severity?: string;
  reason?: string;
  message?: string;
  /** Kept by a new condition (a mirrored one carries its source's); otherwise the setter decides. */
  lastTransitionTime?: string;
}

export function v1beta1True(type: string): V1Beta1ConditionInput {
  return { type, status: ConditionStatus.True };
}

export function v1beta1False(
  type: string,
  reason: string,
  severity: V1Beta1Severity,
  message = '',
): V1Beta1ConditionInput {
  return { type, status: ConditionStatus.False, reason, severity, message };
}

export function v1beta1Unknown(type: string, reason: string, message = ''): V1Beta1ConditionInput {
  return { type, status: ConditionStatus.Unknown, reason, message };
}

export function getV1Beta1Condition(
  conditions: readonly V1Beta1Condition[] | undefined,
  type: string,
): V1Beta1Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

const sameState = (a: V1Beta1ConditionInput, b: V1Beta1ConditionInput): boolean =>
  a.type === b.type &&
  a.status === b.status &&
  (a.reason ?? '') === (b.reason ?? '') &&
  (a.severity ?? '') === (b.severity ?? '') &&
  (a.message ?? '') === (b.message ?? '');

/** Upstream lexicographicLess: Ready first, then by type. */
function compareV1Beta1(a: V1Beta1Condition, b: V1Beta1Condition): number {
  if (a.type === b.type) return 0;
  if (a.type === V1Beta1ConditionType.Ready) return -1;
  if (b.type === V1Beta1ConditionType.Ready) return 1;
  return a.type < b.type ? -1 : 1;
}

/** The condition as stored: empty reason, severity and message left out (Go's omitempty). */
function stored(input: V1Beta1ConditionInput, lastTransitionTime: string): V1Beta1Condition {
  return {
    type: input.type,
    status: input.status,
    ...(input.severity ? { severity: input.severity } : {}),
    lastTransitionTime,
    ...(input.reason ? { reason: input.reason } : {}),
    ...(input.message ? { message: input.message } : {}),
  };
}

/**
 * A copy of `conditions` with `input` set (upstream v1beta1 conditions.Set): an existing condition keeps its
 * lastTransitionTime when status, reason, severity and message are unchanged; a new one keeps the time it carries
 * (a mirrored condition's) or gets `now`. Sorted Ready first, then by type. `undefined` changes nothing.
 */
export function setV1Beta1Condition(
  conditions: readonly V1Beta1Condition[] | undefined,
  input: V1Beta1ConditionInput | undefined,
  now: Date,
): V1Beta1Condition[] {
  const list = [...(conditions ?? [])];
  if (!input) return list;
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const time = previous
    ? sameState(previous, input)
      ? previous.lastTransitionTime
      : toRFC3339(now)
    : (input.lastTransitionTime ?? toRFC3339(now));
  const next = stored(input, time);
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list.sort(compareV1Beta1);
}

export function removeV1Beta1Condition(
  conditions: readonly V1Beta1Condition[] | undefined,
  type: string,
): V1Beta1Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/**
 * The v1beta1 conditions of an object read as JSON (upstream UnstructuredGetter): `status.deprecated.v1beta1.conditions`
 * where present, else `status.conditions` (a provider on the v1beta1 contract, or v1beta2 conditions read as far as
 * they go: no severity). Entries without a string type and status are skipped.
 */
export function readV1Beta1Conditions(obj: unknown): V1Beta1Condition[] {
  const deprecated = valueAt(obj, ['status', 'deprecated', 'v1beta1', 'conditions']);
  const raw = Array.isArray(deprecated) ? deprecated : (arrayAt(obj, ['status', 'conditions']) ?? []);
  const conditions: V1Beta1Condition[] = [];
  for (const item of raw) {
    if (!isRecord(item) || typeof item['type'] !== 'string' || typeof item['status'] !== 'string') continue;
    const text = (key: string) => (typeof item[key] === 'string' && item[key] !== '' ? { [key]: item[key] } : {});
    conditions.push({
      type: item['type'],
      status: item['status'],
      ...text('severity'),
      lastTransitionTime: typeof item['lastTransitionTime'] === 'string' ? item['lastTransitionTime'] : '',
      ...text('reason'),
      ...text('message'),
    });
  }
  return conditions;
}

export interface V1Beta1MirrorFallback {
  /** True: the target is True; false: False with the reason, severity and message below. */
  value: boolean;
  reason: string;
  severity: V1Beta1Severity;
  message?: string;
}

/**
 * The source's `Ready` as `target` (upstream v1beta1 conditions.SetMirror), or the fallback when the source reports
 * no Ready; undefined (nothing to set) without either.
 */
export function mirrorV1Beta1(
  source: readonly V1Beta1Condition[] | undefined,
  target: string,
  fallback?: V1Beta1MirrorFallback,
): V1Beta1ConditionInput | undefined {
  const ready = getV1Beta1Condition(source, V1Beta1ConditionType.Ready);
  if (ready) {
    const { lastTransitionTime, ...rest } = ready;
    return { ...rest, type: target, ...(lastTransitionTime ? { lastTransitionTime } : {}) };
  }
  if (!fallback) return undefined;
  return fallback.value
    ? v1beta1True(target)
    : v1beta1False(target, fallback.reason, fallback.severity, fallback.message);
}

/** A condition the merge looks at, with where it comes from (for `addSourceRef`) and its polarity. */
interface Localized {
  condition: V1Beta1Condition;
  negative: boolean;
  source?: { kind: string; name: string };
}

interface Group {
  status: string;
  severity: string;
  conditions: Localized[];
}

/** Upstream mergePriority: False Error, Warning, Info, then True, then Unknown; anything else last. */
function priority(group: Group): number {
  if (group.status === ConditionStatus.False) {
    const order: Record<string, number> = { Error: 0, Warning: 1, Info: 2 };
    return order[group.severity] ?? 99;
  }
  if (group.status === ConditionStatus.True) return 3;
  if (group.status === ConditionStatus.Unknown) return 4;
  return 99;
}

function groupsOf(conditions: readonly Localized[]): Group[] {
  const groups: Group[] = [];
  for (const localized of conditions) {
    const { status, severity = '' } = localized.condition;
    const groupStatus = !localized.negative
      ? status
      : status === ConditionStatus.False
        ? ConditionStatus.True
        : status === ConditionStatus.True
          ? ConditionStatus.False
          : status;
    const group = groups.find((g) => g.status === groupStatus && g.severity === severity);
    if (group) group.conditions.push(localized);
    else groups.push({ status: groupStatus, severity, conditions: [localized] });
  }
  groups.sort((a, b) => priority(a) - priority(b));
  const nameOf = (c: Localized) => c.source?.name ?? '';
  groups[0]?.conditions.sort(
    (a, b) => compareV1Beta1(a.condition, b.condition) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0),
  );
  return groups;
}

interface MergeOptions {
  /** The types in priority order: the first of them in the top group gives reason and message. */
  order?: readonly string[];
  /** A `N of M completed` message instead of the first condition's (M given). */
  stepCounter?: number;
  /** Reasons name their source: `reason @ Kind/name`. */
  addSourceRef?: boolean;
}

/** Upstream merge: the top (status, severity) group decides; True is plain, False keeps the group's severity. */
function merge(
  conditions: readonly Localized[],
  target: string,
  options: MergeOptions,
): V1Beta1ConditionInput | undefined {
  const groups = groupsOf(conditions);
  const top = groups[0];
  if (!top) return undefined;
  if (top.status === ConditionStatus.True) return v1beta1True(target);
  const first =
    top.conditions.length === 1
      ? top.conditions[0]!
      : ((options.order ?? [])
          .map((type) => top.conditions.find((c) => c.condition.type === type))
          .find((c) => c !== undefined) ?? top.conditions[0]!);
  let reason = first.condition.reason ?? '';
  if (options.addSourceRef && first.source && !reason.includes('@')) {
    reason = `${reason} @ ${first.source.kind}/${first.source.name}`;
  }
  const completed = groups.find((g) => g.status === ConditionStatus.True && g.severity === '');
  const message =
    options.stepCounter === undefined
      ? (first.condition.message ?? '')
      : `${completed?.conditions.length ?? 0} of ${options.stepCounter} completed`;
  if (top.status === ConditionStatus.False) {
    return { type: target, status: ConditionStatus.False, reason, severity: top.severity, message };
  }
  return v1beta1Unknown(target, reason, message);
}

export interface V1Beta1SummaryOptions {
  /** The conditions summarized, in priority order (upstream WithConditions). */
  conditions: readonly string[];
  /** Add a `N of M completed` message (upstream WithStepCounterIf)... */
  stepCounter?: boolean;
  /** ...but only while no condition but these is in scope, counting to their number (WithStepCounterIfOnly). */
  stepCounterIfOnly?: readonly string[];
}

/** `Ready` summarizing the object's other conditions (upstream v1beta1 conditions.SetSummary); undefined when none is set. */
export function summarizeV1Beta1(
  conditions: readonly V1Beta1Condition[] | undefined,
  options: V1Beta1SummaryOptions,
): V1Beta1ConditionInput | undefined {
  const inScope = (conditions ?? [])
    .filter((c) => c.type !== V1Beta1ConditionType.Ready && options.conditions.includes(c.type))
    .map((condition) => ({ condition, negative: false }));
  let stepCounter: number | undefined;
  if (options.stepCounter) {
    const only = options.stepCounterIfOnly;
    if (!only) stepCounter = options.conditions.length;
    else if (inScope.every((c) => only.includes(c.condition.type))) stepCounter = only.length;
  }
  return merge(inScope, V1Beta1ConditionType.Ready, { order: options.conditions, stepCounter });
}

/** One object whose `Ready` an aggregate looks at. */
export interface V1Beta1Source {
  kind: string;
  name: string;
  conditions: readonly V1Beta1Condition[] | undefined;
}

/**
 * `target` aggregating the sources' `Ready` (upstream v1beta1 conditions.SetAggregate with a step counter over all
 * sources and, with `addSourceRef`, `reason @ Kind/name`); undefined when no source reports Ready.
 */
export function aggregateV1Beta1(
  sources: readonly V1Beta1Source[],
  target: string,
  options: { addSourceRef?: boolean } = {},
): V1Beta1ConditionInput | undefined {
  const inScope: Localized[] = [];
  for (const source of sources) {
    const ready = getV1Beta1Condition(source.conditions, V1Beta1ConditionType.Ready);
    if (ready) inScope.push({ condition: ready, negative: false, source: { kind: source.kind, name: source.name } });
  }
  return merge(inScope, target, { stepCounter: sources.length, addSourceRef: options.addSourceRef });
}
