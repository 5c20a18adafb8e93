import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  LABELS,
  setCondition,
  type Condition,
  type ConditionInput,
  type K3sControlPlaneStatus,
  type LastRemediationStatus,
  versionCounts,
} from '@capstan/api';
import { isHealthy, quorum, type ControlPlaneMachine } from './control-plane-machine.js';
import type { Plan } from './planner.js';

/** Everything one reconcile learned, from which the status follows. */
export interface StatusInputs {
  clusterName: string;
  desiredReplicas: number;
  generation?: number;
  /** Every Machine the control plane controls, deleting ones included. */
  machines: readonly ControlPlaneMachine[];
  initialized: boolean;
  /** Undefined while not yet checked (e.g. before the Cluster is known). */
  certificates?: { available: boolean; message?: string };
  /** The plan of this reconcile, for the messages of the scaling conditions. */
  plan?: Plan;
  /** Why nothing could be planned yet (e.g. the cluster infrastructure), shown on ScalingUp. */
  blockedBy?: string;
  deleting: boolean;
  lastRemediation?: LastRemediationStatus;
}

/** The scale subresource's selector: the cluster's control plane machines, as upstream KCP selects them. */
export function machineSelector(clusterName: string): string {
  return `${LABELS.clusterName}=${clusterName},${LABELS.controlPlane}`;
}

// By name: a message must not change with the order the cache lists Machines in.
const list = (machines: readonly ControlPlaneMachine[]) =>
  machines
    .map((m) => m.name)
    .sort()
    .join(', ');

function condition(
  type: string,
  good: boolean,
  reasons: [string, string],
  message = '',
): Omit<ConditionInput, 'observedGeneration'> {
  return {
    type,
    status: good ? ConditionStatus.True : ConditionStatus.False,
    reason: good ? reasons[0] : reasons[1],
    message,
  };
}

/** An activity (RollingOut, ScalingUp, ...): True with reason `<type>` while under way, else False with `Not<type>`. */
function activity(
  type: string,
  active: boolean,
  message: string,
): Omit<ConditionInput, 'observedGeneration'> {
  return condition(type, active, [type, `Not${type}`], active ? message : '');
}

/** What this reconcile is waiting for, as a second message line. */
function waitNote(inputs: StatusInputs): string {
  const action = inputs.plan?.action;
  const note = inputs.blockedBy ?? (action?.type === 'wait' ? action.message : undefined);
  return note ? `\n* ${note}` : '';
}

function conditionsFor(inputs: StatusInputs): Omit<ConditionInput, 'observedGeneration'>[] {
  const { machines, desiredReplicas: desired } = inputs;
  const live = machines.filter((m) => !m.deleting);
  const members = live.filter((m) => m.hasNode);
  const healthyMembers = members.filter(isHealthy);
  const available =
    inputs.initialized && healthyMembers.length >= 1 && healthyMembers.length >= quorum(members.length);
  const notReady = machines.filter((m) => !m.ready);
  const outdated = live.filter((m) => !m.upToDate);
  // A flagged machine being deleted is a remediation still in progress.
  const unhealthy = machines.filter((m) => m.needsRemediation);
  const result = [
    condition(
      ConditionType.Available,
      available,
      [ConditionReason.Available, ConditionReason.NotAvailable],
      available
        ? ''
        : !inputs.initialized
          ? 'Control plane not yet initialized'
          : `${healthyMembers.length} of ${members.length} control plane members healthy; etcd quorum needs ${quorum(members.length)}`,
    ),
    condition(
      ConditionType.Initialized,
      inputs.initialized,
      [ConditionReason.Initialized, ConditionReason.NotInitialized],
      inputs.initialized ? '' : 'Waiting for the workload API server to answer',
    ),
    machines.length === 0
      ? condition(ConditionType.MachinesReady, true, [ConditionReason.NoReplicas, ''])
      : condition(
          ConditionType.MachinesReady,
          notReady.length === 0,
          [ConditionReason.Ready, ConditionReason.NotReady],
          notReady.length === 0 ? '' : `Machine(s) not Ready: ${list(notReady)}`,
        ),
    live.length === 0
      ? condition(ConditionType.MachinesUpToDate, true, [ConditionReason.NoReplicas, ''])
      : condition(
          ConditionType.MachinesUpToDate,
          outdated.length === 0,
          [ConditionReason.UpToDate, ConditionReason.NotUpToDate],
          outdated.length === 0 ? '' : `Machine(s) not up to date: ${list(outdated)}`,
        ),
    inputs.plan?.inPlaceBlocked
      ? condition(
          ConditionType.RollingOut,
          true,
          [ConditionReason.InPlaceUpdateBlocked, ''],
          `* ${inputs.plan.inPlaceBlocked}`,
        )
      : activity(
          ConditionType.RollingOut,
          outdated.length > 0,
          [
            `Rolling out ${outdated.length} not up-to-date replica(s)`,
            ...[...new Set(outdated.flatMap((m) => m.outdatedReasons))].map((r) => `* ${r}`),
          ].join('\n') + waitNote(inputs),
        ),
    activity(
      ConditionType.ScalingUp,
      live.length < desired && !inputs.deleting,
      `Scaling up from ${live.length} to ${desired} replicas${waitNote(inputs)}`,
    ),
    activity(
      ConditionType.ScalingDown,
      machines.length > desired && !inputs.deleting,
      `Scaling down from ${machines.length} to ${desired} replicas${waitNote(inputs)}`,
    ),
    activity(
      ConditionType.Remediating,
      unhealthy.length > 0,
      [
        `Machine(s) flagged for remediation: ${list(unhealthy)}`,
        ...(inputs.plan?.remediationBlocked ? [`* ${inputs.plan.remediationBlocked}`] : []),
      ].join('\n'),
    ),
    activity(ConditionType.Deleting, inputs.deleting, `Deleting ${machines.length} machine(s)`),
  ];
  if (inputs.certificates) {
    result.push(
      condition(
        ConditionType.CertificatesAvailable,
        inputs.certificates.available,
        [ConditionReason.Available, ConditionReason.NotAvailable],
        inputs.certificates.message ?? '',
      ),
    );
  }
  return result;
}

/**
 * The v1beta2 control plane contract status: replica counters from the machines' conditions, versions,
 * the selector of the scale subresource, `initialization.controlPlaneInitialized` (never taken back), and
 * the conditions. Conditions of other owners (`Paused`, `ReconcileSucceeded`: the reconciler kit's) are kept.
 */
/** The status fields desiredControlPlaneStatus computes; every other field is another controller's. */
const COMPUTED_STATUS_FIELDS: ReadonlySet<string> = new Set<keyof K3sControlPlaneStatus>([
  'conditions',
  'selector',
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'upToDateReplicas',
  'versions',
  'version',
  'initialization',
  'lastRemediation',
  'observedGeneration',
]);

function writtenByOthers(current: K3sControlPlaneStatus | undefined): Partial<K3sControlPlaneStatus> {
  return Object.fromEntries(
    Object.entries(current ?? {}).filter(([field]) => !COMPUTED_STATUS_FIELDS.has(field)),
  ) as Partial<K3sControlPlaneStatus>;
}

export function desiredControlPlaneStatus(
  current: K3sControlPlaneStatus | undefined,
  inputs: StatusInputs,
  now: Date = new Date(),
): K3sControlPlaneStatus {
  const at = inputs.generation === undefined ? {} : { observedGeneration: inputs.generation };
  let conditions: Condition[] = current?.conditions ?? [];
  for (const input of conditionsFor(inputs)) conditions = setCondition(conditions, { ...input, ...at }, now);

  const { machines } = inputs;
  const versions = versionCounts(machines.map((m) => m.version));
  const initialized = inputs.initialized || current?.initialization?.controlPlaneInitialized === true;
  const lastRemediation = inputs.lastRemediation ?? current?.lastRemediation;
  return {
    conditions,
    selector: machineSelector(inputs.clusterName),
    replicas: machines.length,
    readyReplicas: machines.filter((m) => m.ready).length,
    availableReplicas: machines.filter((m) => m.available).length,
    upToDateReplicas: machines.filter((m) => m.upToDate).length,
    ...(versions.length > 0 && { versions, version: versions[0]!.version }),
    ...(initialized && { initialization: { controlPlaneInitialized: true } }),
    ...(lastRemediation && { lastRemediation }),
    // What other controllers write (the day-2 controller's operations, day2/): kept as they are.
    ...writtenByOthers(current),
    ...(inputs.generation !== undefined && { observedGeneration: inputs.generation }),
  };
}
