import {
  ConditionStatus,
  LABELS,
  V1Beta1ConditionType as T,
  V1Beta1Reason as R,
  V1Beta1Severity as S,
  getV1Beta1Condition,
  setV1Beta1Condition,
  summarizeV1Beta1,
  v1beta1False,
  v1beta1True,
  type ClusterV1Beta1DeprecatedStatus,
  type V1Beta1MirrorFallback,
  type V1Beta1Condition,
  type V1Beta1ConditionInput,
} from '@capstan/api';
import { mirrorReferenceV1Beta1, v1beta1Failure } from '../../external/observation.js';
import { type ClusterObservation } from './cluster.status.js';

// The Cluster's status.deprecated.v1beta1 as upstream's Cluster controller still writes it (cluster_controller.go,
// cluster_controller_phases.go with util/conditions/deprecated/v1beta1): InfrastructureReady and ControlPlaneReady
// mirrored from the referenced objects' v1beta1 Ready, ControlPlaneInitialized, Ready summarizing the first two,
// and failureReason / failureMessage copied from the referenced objects. Left alone where upstream returns early.

/** `status.deprecated.v1beta1` of the Cluster. */
export function computeClusterV1Beta1Status(
  observation: ClusterObservation,
  now: Date,
): ClusterV1Beta1DeprecatedStatus {
  const { cluster, infrastructure: infra, controlPlane: cp } = observation;
  const previous = cluster.status?.deprecated?.v1beta1 ?? {};
  const deleting = !!cluster.metadata?.deletionTimestamp;
  let conditions: V1Beta1Condition[] = [...(previous.conditions ?? [])];
  const set = (input: V1Beta1ConditionInput | undefined) => {
    conditions = setV1Beta1Condition(conditions, input, now);
  };

  // A reference left unset by a topology waits for the topology controller (upstream returns early): no condition.
  const awaitingTopology = cluster.spec?.topology !== undefined;
  set(
    infra.state === 'unset'
      ? deleting || awaitingTopology
        ? undefined
        : v1beta1True(T.InfrastructureReady)
      : mirrorReferenceV1Beta1(infra, T.InfrastructureReady, deleting, (c) =>
          fallback(deleting, c.provisioned, R.WaitingForInfrastructure),
        ),
  );
  if (cp.state !== 'unset') {
    set(
      mirrorReferenceV1Beta1(cp, T.ControlPlaneReady, deleting, (c) =>
        fallback(deleting, c.initialized, R.WaitingForControlPlane),
      ),
    );
  }
  if (getV1Beta1Condition(conditions, T.ControlPlaneInitialized)?.status !== ConditionStatus.True) {
    set(controlPlaneInitialized(observation, deleting));
  }
  set(summarizeV1Beta1(conditions, { conditions: [T.ControlPlaneReady, T.InfrastructureReady] }));

  return { ...(conditions.length > 0 ? { conditions } : {}), ...v1beta1Failure(previous, infra, cp) };
}

/** The Cluster's mirror fallback: True once the object did its part, False (Info) while waiting; False Deleting while the Cluster goes. */
function fallback(deleting: boolean, done: boolean, waitingReason: string): V1Beta1MirrorFallback {
  return deleting
    ? { value: false, reason: R.Deleting, severity: S.Info }
    : { value: done, reason: waitingReason, severity: S.Info };
}

/**
 * Upstream reconcileControlPlane (with a control plane: its `initialized`) and reconcileV1Beta1ControlPlaneInitialized
 * (without: a control plane Machine with a Node); once True it stays.
 */
function controlPlaneInitialized(observation: ClusterObservation, deleting: boolean): V1Beta1ConditionInput | undefined {
  const cp = observation.controlPlane;
  if (cp.state === 'found') {
    if (cp.deleting) return undefined;
    return cp.contract.initialized
      ? v1beta1True(T.ControlPlaneInitialized)
      : v1beta1False(
          T.ControlPlaneInitialized,
          R.WaitingForControlPlaneProviderInitialized,
          S.Info,
          'Waiting for control plane provider to indicate the control plane has been initialized',
        );
  }
  if (cp.state !== 'unset' || deleting || observation.cluster.spec?.topology !== undefined) return undefined;
  const initialized = observation.machines.some(
    (m) => m.metadata?.labels?.[LABELS.controlPlane] !== undefined && !m.metadata?.deletionTimestamp && !!m.status?.nodeRef?.name,
  );
  return initialized
    ? v1beta1True(T.ControlPlaneInitialized)
    : v1beta1False(
        T.ControlPlaneInitialized,
        R.MissingNodeRef,
        S.Info,
        'Waiting for the first control plane machine to have its status.nodeRef set',
      );
}
