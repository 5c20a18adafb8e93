import { type V1Node } from '@kubernetes/client-node';
import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  ANNOTATIONS,
  V1Beta1ConditionType as T,
  V1Beta1Reason as R,
  V1Beta1Severity as S,
  getCondition,
  removeV1Beta1Condition,
  setV1Beta1Condition,
  summarizeV1Beta1,
  v1beta1False,
  v1beta1True,
  v1beta1Unknown,
  type MachineStatus,
  type MachineV1Beta1DeprecatedStatus,
  type V1Beta1Condition,
  type V1Beta1ConditionInput,
} from '@capstan/api';
import { mirrorReferenceV1Beta1, v1beta1Failure, type V1Beta1Failure } from '../../external/observation.js';
import { type MachineObservation } from './machine.status.js';

// The Machine's status.deprecated.v1beta1 as upstream's Machine controller still writes it (machine_controller.go,
// _phases.go, _noderef.go with util/conditions/deprecated/v1beta1): BootstrapReady, InfrastructureReady and NodeHealthy,
// the deletion conditions, HealthCheckSucceeded and OwnerRemediated in their v1beta1 form, Ready summarizing them,
// and failureReason / failureMessage. Where upstream leaves a condition alone (an error return), it is left alone.

/** The deletion steps of machine.deletion.ts in their order; the v1beta1 deletion conditions follow the step reached. */
const DELETION_STEPS: readonly string[] = [
  ConditionReason.WaitingForPreDrainHook,
  ConditionReason.DrainingNode,
  ConditionReason.WaitingForVolumeDetach,
  ConditionReason.WaitingForPreTerminateHook,
  ConditionReason.WaitingForInfrastructureDeletion,
  ConditionReason.WaitingForBootstrapDeletion,
  ConditionReason.DeletingNode,
  ConditionReason.DeletionCompleted,
];

/**
 * `status.deprecated.v1beta1` of the Machine, from the observation and the v1beta2 status just computed (its
 * HealthCheckSucceeded / OwnerRemediated, set by the health check and the owner, and `status.deletion`).
 */
export function computeMachineV1Beta1Status(
  observation: MachineObservation,
  status: MachineStatus,
  now: Date,
): MachineV1Beta1DeprecatedStatus {
  const { machine } = observation;
  const previous = machine.status?.deprecated?.v1beta1 ?? {};
  const deleting = !!machine.metadata?.deletionTimestamp;
  let conditions: V1Beta1Condition[] = [...(previous.conditions ?? [])];
  const set = (input: V1Beta1ConditionInput | undefined) => {
    conditions = setV1Beta1Condition(conditions, input, now);
  };
  const keepOrRemove = (type: string, input: V1Beta1ConditionInput | undefined | null) => {
    if (input === null) conditions = removeV1Beta1Condition(conditions, type);
    else set(input);
  };

  set(bootstrapReady(observation, deleting));
  set(infrastructureReady(observation, deleting));
  set(nodeHealthy(observation, deleting));
  keepOrRemove(T.HealthCheckSucceeded, healthCheckSucceeded(status));
  keepOrRemove(T.OwnerRemediated, ownerRemediated(status));
  for (const input of deletionConditions(observation, status, conditions, now)) set(input);
  set(
    summarizeV1Beta1(conditions, {
      conditions: [T.InfrastructureReady, T.BootstrapReady, T.HealthCheckSucceeded, T.OwnerRemediated, T.DrainingSucceeded],
      stepCounter: !deleting && !machine.spec.providerID,
      stepCounterIfOnly: [T.BootstrapReady, T.InfrastructureReady],
    }),
  );
  const failure = {
    ...v1beta1Failure(previous, observation.bootstrap, observation.infrastructure),
    ...infrastructureLost(observation, deleting),
  };
  return { ...(conditions.length > 0 ? { conditions } : {}), ...failure };
}

/** Upstream reconcileInfrastructure: the InfraMachine gone after provisioning is a terminal failure. */
function infrastructureLost(
  observation: MachineObservation,
  deleting: boolean,
): V1Beta1Failure {
  const { machine, infrastructure } = observation;
  if (deleting || infrastructure.state !== 'notFound') return {};
  if (machine.status?.initialization?.infrastructureProvisioned !== true) return {};
  const ref = machine.spec.infrastructureRef;
  return {
    failureReason: 'InvalidConfiguration',
    failureMessage: `Machine infrastructure resource ${ref.kind} ${machine.metadata?.namespace}/${ref.name} has been deleted after provisioning was completed`,
  };
}

/** Upstream reconcileBootstrap / reconcileDeleteBootstrap; nothing without a configRef. */
function bootstrapReady(observation: MachineObservation, deleting: boolean): V1Beta1ConditionInput | undefined {
  const { machine, bootstrap } = observation;
  if (bootstrap.state === 'found' && machine.spec.bootstrap?.dataSecretName) return v1beta1True(T.BootstrapReady);
  return mirrorReferenceV1Beta1(bootstrap, T.BootstrapReady, deleting, (contract) => ({
    value: contract.dataSecretCreated,
    reason: deleting ? R.Deleting : R.WaitingForDataSecret,
    severity: S.Info,
  }));
}

/** Upstream reconcileInfrastructure / reconcileDeleteInfrastructure. */
function infrastructureReady(observation: MachineObservation, deleting: boolean): V1Beta1ConditionInput | undefined {
  return mirrorReferenceV1Beta1(observation.infrastructure, T.InfrastructureReady, deleting, (contract) => ({
    value: contract.provisioned,
    reason: deleting ? R.Deleting : R.WaitingForInfrastructure,
    severity: S.Info,
  }));
}

/** Upstream reconcileNode; left alone while the workload cluster cannot be asked. */
function nodeHealthy(observation: MachineObservation, deleting: boolean): V1Beta1ConditionInput | undefined {
  const { machine, node, infrastructure } = observation;
  if (observation.deleting?.reason === ConditionReason.DeletingNode) {
    return v1beta1False(T.NodeHealthy, R.DeletionFailed, S.Warning);
  }
  if (!machine.spec.providerID) return v1beta1False(T.NodeHealthy, R.WaitingForNodeRef, S.Info);
  switch (node.state) {
    case 'waiting':
    case 'connectionDown':
      return undefined;
    case 'notFound':
      if (deleting) return undefined;
      if (machine.status?.nodeRef?.name) return v1beta1False(T.NodeHealthy, R.NodeNotFound, S.Error);
      return v1beta1False(
        T.NodeHealthy,
        R.NodeProvisioning,
        S.Warning,
        'Waiting for a node with matching ProviderID to exist',
      );
    case 'found': {
      if (infrastructure.state !== 'found' || infrastructure.deleting) {
        return v1beta1False(T.NodeHealthy, R.Deleting, S.Info);
      }
      const { status, message } = summarizeNode(node.node);
      if (status === ConditionStatus.False) return v1beta1False(T.NodeHealthy, R.NodeConditionsFailed, S.Warning, message);
      if (status === ConditionStatus.Unknown) return v1beta1Unknown(T.NodeHealthy, R.NodeConditionsFailed, message);
      return v1beta1True(T.NodeHealthy);
    }
  }
}

/**
 * Upstream summarizeNodeV1beta1Conditions: False when Ready is False or a pressure condition True, Unknown only when
 * all four are Unknown; the message lists the ones that are not good.
 */
export function summarizeNode(node: V1Node): { status: ConditionStatus; message: string } {
  let bad = 0;
  let unknown = 0;
  const messages: string[] = [];
  for (const condition of node.status?.conditions ?? []) {
    const good = { Ready: 'True', MemoryPressure: 'False', DiskPressure: 'False', PIDPressure: 'False' }[condition.type];
    if (good === undefined || condition.status === good) continue;
    messages.push(`Node condition ${condition.type} is ${condition.status}`);
    if (condition.status === ConditionStatus.Unknown) unknown++;
    else bad++;
  }
  const message = messages.join('. ');
  if (bad > 0) return { status: ConditionStatus.False, message };
  if (bad + unknown < 4) return { status: ConditionStatus.True, message };
  return { status: ConditionStatus.Unknown, message };
}

/** The v1beta1 reasons of HealthCheckSucceeded for the v1beta2 ones the health check sets (machinehealthcheck_targets.go). */
const HEALTH_CHECK_REASONS: Readonly<Record<string, string>> = {
  [ConditionReason.HasRemediateAnnotation]: R.HasRemediateMachineAnnotation,
  [ConditionReason.NodeDeleted]: R.NodeNotFound,
  [ConditionReason.NodeStartupTimeout]: R.NodeStartupTimeout,
  [ConditionReason.UnhealthyNode]: R.UnhealthyNode,
  [ConditionReason.UnhealthyMachine]: R.UnhealthyMachine,
};

/**
 * HealthCheckSucceeded as the health check writes it in v1beta1 next to the v1beta2 one: True, or False (Warning)
 * with the v1beta1 reason and the problems joined by `; ` (none for a deleted Node, the annotation's own text for
 * remediate-machine). `null` when the Machine has no v1beta2 one (removed), undefined to leave it alone.
 */
function healthCheckSucceeded(status: MachineStatus): V1Beta1ConditionInput | undefined | null {
  const condition = getCondition(status.conditions, ConditionType.HealthCheckSucceeded);
  if (!condition) return null;
  if (condition.status === ConditionStatus.True) return v1beta1True(T.HealthCheckSucceeded);
  if (condition.status !== ConditionStatus.False) return undefined;
  const reason = HEALTH_CHECK_REASONS[condition.reason] ?? condition.reason;
  const message =
    reason === R.NodeNotFound
      ? ''
      : reason === R.HasRemediateMachineAnnotation
        ? 'Marked for remediation via remediate-machine annotation'
        : condition.message
            .split('\n')
            .map((line) => line.replace(/^\s*\*\s*/, ''))
            .filter((line) => line !== '' && line !== 'Health check failed:')
            .join('; ');
  return v1beta1False(T.HealthCheckSucceeded, reason, S.Warning, message);
}

/**
 * OwnerRemediated in v1beta1: False WaitingForRemediation (Warning) while the owner has not started, True once
 * the MachineSet deletes the Machine to remediate it. `null` without a v1beta2 one (removed).
 */
function ownerRemediated(status: MachineStatus): V1Beta1ConditionInput | undefined | null {
  const condition = getCondition(status.conditions, ConditionType.OwnerRemediated);
  if (!condition) return null;
  if (condition.reason === ConditionReason.MachineDeleting) return v1beta1True(T.OwnerRemediated);
  if (condition.status !== ConditionStatus.False) return undefined;
  return v1beta1False(T.OwnerRemediated, R.WaitingForRemediation, S.Warning);
}

/**
 * The v1beta1 deletion conditions (upstream reconcileDelete): each step passed is True, the one waited on False
 * (Info). The hook and drain steps apply only to a Machine with a Node (upstream isDeleteNodeAllowed); drain and
 * volume detach only when they ran (not excluded by annotation, not timed out, the infrastructure still there).
 */
function deletionConditions(
  observation: MachineObservation,
  status: MachineStatus,
  current: readonly V1Beta1Condition[],
  now: Date,
): V1Beta1ConditionInput[] {
  const step = observation.deleting ? DELETION_STEPS.indexOf(observation.deleting.reason) : -1;
  if (step < 0) return [];
  const { machine } = observation;
  const annotations = machine.metadata?.annotations ?? {};
  const out: V1Beta1ConditionInput[] = [];
  const stage = (index: number, type: string, waiting: () => V1Beta1ConditionInput) => {
    if (step === index) out.push(waiting());
    else if (step > index) out.push(v1beta1True(type));
  };
  if (machine.status?.nodeRef?.name) {
    stage(0, T.PreDrainDeleteHookSucceeded, () =>
      v1beta1False(T.PreDrainDeleteHookSucceeded, R.WaitingExternalHook, S.Info),
    );
    const deletion = status.deletion ?? {};
    const within = (start: string | undefined, timeout: number | undefined) =>
      !timeout || !start || now.getTime() - Date.parse(start) < timeout * 1000;
    const drains =
      deletion.nodeDrainStartTime !== undefined &&
      !(ANNOTATIONS.excludeNodeDraining in annotations) &&
      within(deletion.nodeDrainStartTime, machine.spec.deletion?.nodeDrainTimeoutSeconds);
    if (drains) {
      stage(1, T.DrainingSucceeded, () =>
        v1beta1False(
          T.DrainingSucceeded,
          R.Draining,
          S.Info,
          observation.deleting?.message || 'Draining the node before deletion',
        ),
      );
    }
    const detaches =
      deletion.waitForNodeVolumeDetachStartTime !== undefined &&
      within(deletion.waitForNodeVolumeDetachStartTime, machine.spec.deletion?.nodeVolumeDetachTimeoutSeconds);
    if (detaches) {
      const existing = current.find((c) => c.type === T.VolumeDetachSucceeded);
      stage(2, T.VolumeDetachSucceeded, () =>
        existing && existing.status === ConditionStatus.False
          ? { ...existing }
          : v1beta1False(T.VolumeDetachSucceeded, R.WaitingForVolumeDetach, S.Info, 'Waiting for node volumes to be detached'),
      );
    }
  }
  stage(3, T.PreTerminateDeleteHookSucceeded, () =>
    v1beta1False(T.PreTerminateDeleteHookSucceeded, R.WaitingExternalHook, S.Info),
  );
  return out;
}
