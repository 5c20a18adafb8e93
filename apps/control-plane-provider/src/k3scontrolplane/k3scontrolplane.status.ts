import {
  ConditionType,
  isTrue,
  RESOURCES,
  type K3sControlPlane,
  type K3sControlPlaneStatus,
} from '@capstan/api';
import { eventDataBase } from '@capstan/events';
import { deepEqual } from '@capstan/kube';
import type { OwedEvent, ReconcileScope } from '@capstan/provider-kit';
import type { ControlPlaneMachine } from '../planning/control-plane-machine.js';
import { desiredControlPlaneStatus, type StatusInputs } from '../planning/control-plane-status.js';

/** The conditions the K3sControlPlane controller writes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const CONTROL_PLANE_CONDITIONS = [
  ConditionType.Available,
  ConditionType.Initialized,
  ConditionType.CertificatesAvailable,
  ConditionType.MachinesReady,
  ConditionType.MachinesUpToDate,
  ConditionType.RollingOut,
  ConditionType.ScalingUp,
  ConditionType.ScalingDown,
  ConditionType.Remediating,
  ConditionType.Deleting,
] as const;

/** What every status write starts from: the spec, the machines, and initialization as the status has it. */
export function statusInputsOf(
  kcp: K3sControlPlane,
  clusterName: string,
  machines: readonly ControlPlaneMachine[],
): StatusInputs {
  return {
    clusterName,
    desiredReplicas: kcp.spec.replicas ?? 1,
    generation: kcp.metadata.generation,
    machines,
    initialized: kcp.status?.initialization?.controlPlaneInitialized === true,
    deleting: false,
  };
}

/**
 * The status phase: the status `inputs` give is written, then the transitions it shows are announced, each
 * hand-off event once, after the write (see statusTransitionEvents); the control plane's first answer is
 * also a Kubernetes Event.
 */
export async function writeControlPlaneStatus(
  kit: ReconcileScope<K3sControlPlane>,
  inputs: StatusInputs,
  now: Date,
  record: (kcp: K3sControlPlane, reason: string, action: string, note: string) => Promise<unknown>,
): Promise<void> {
  const previous = kit.original.status;
  const next = desiredControlPlaneStatus(kit.obj.status, inputs, now);
  kit.obj.status = next;
  // Written first: each event carries the resourceVersion that shows its transition (its message id).
  const written = await kit.patchNow();
  if (!deepEqual(previous, next)) {
    kit.rc.log.debug({ replicas: next.replicas, ready: next.readyReplicas }, 'status updated');
  }
  const events = statusTransitionEvents(written, previous, next, inputs.clusterName);
  kit.announce(...events);
  if (events.some((e) => e.name === 'control-plane.initialized')) {
    await record(written, 'Initialized', 'Initialize', 'The workload API server answers');
  }
}

/**
 * The hand-off events the change from `previous` to `next` announces: `control-plane.initialized` when
 * initialization is first reported, `.available` when Available becomes True, `.scaled` when replicas and
 * readyReplicas reach `spec.replicas`. `kcp` is the object as written (its resourceVersion names the event).
 */
export function statusTransitionEvents(
  kcp: K3sControlPlane,
  previous: K3sControlPlaneStatus | undefined,
  next: K3sControlPlaneStatus,
  clusterName: string,
): OwedEvent[] {
  const base = eventDataBase(kcp, RESOURCES.K3sControlPlane, clusterName);
  const counts = {
    replicas: next.replicas ?? 0,
    readyReplicas: next.readyReplicas ?? 0,
    availableReplicas: next.availableReplicas ?? 0,
    upToDateReplicas: next.upToDateReplicas ?? 0,
    ...(next.versions && {
      versions: next.versions.map((v) => ({ version: v.version, replicas: v.replicas ?? 0 })),
    }),
  };
  const desired = kcp.spec.replicas ?? 1;
  const events: OwedEvent[] = [];
  if (!previous?.initialization?.controlPlaneInitialized && next.initialization?.controlPlaneInitialized) {
    events.push({ name: 'control-plane.initialized', data: { ...base, version: kcp.spec.version } });
  }
  if (
    !isTrue(previous?.conditions, ConditionType.Available) &&
    isTrue(next.conditions, ConditionType.Available)
  ) {
    events.push({ name: 'control-plane.available', data: { ...base, ...counts } });
  }
  const reached = (s: K3sControlPlaneStatus | undefined) =>
    s?.replicas === desired && s.readyReplicas === desired;
  if (!reached(previous) && reached(next)) {
    events.push({ name: 'control-plane.scaled', data: { ...base, ...counts, desiredReplicas: desired } });
  }
  return events;
}
