import {
  ConditionStatus,
  ConditionType,
  RESOURCES,
  V1Beta1ConditionType as T,
  V1Beta1Reason as R,
  V1Beta1Severity as S,
  aggregateV1Beta1,
  getCondition,
  setV1Beta1Condition,
  summarizeV1Beta1,
  v1beta1False,
  v1beta1True,
  type Machine,
  type MachineSet,
  type MachineSetV1Beta1DeprecatedStatus,
  type V1Beta1Condition,
  type V1Beta1ConditionInput,
} from '@capstan/api';
import { v1beta1Failure } from '../../external/observation.js';

// The MachineSet's status.deprecated.v1beta1 as upstream's MachineSet controller still writes it
// (machineset_controller.go reconcileV1Beta1Status, syncReplicas, patchMachineSet): the v1beta1 counters,
// MachinesCreated, Resized, MachinesReady aggregating the Machines' v1beta1 Ready, and Ready summarizing them.

/** Which part of creating a Machine failed (the clone of a template, or the Machine itself). */
export type MachineCreationStage = 'bootstrap' | 'infrastructure' | 'machine';

/** A scale-up that failed: MachinesCreated says so until the set has all its Machines. */
export interface MachineCreationFailure {
  stage: MachineCreationStage;
  message: string;
}

const CREATION_FAILURE_REASONS: Record<MachineCreationStage, string> = {
  bootstrap: R.BootstrapTemplateCloningFailed,
  infrastructure: R.InfrastructureTemplateCloningFailed,
  machine: R.MachineCreationFailed,
};

export interface MachineSetV1Beta1Observation {
  machineSet: MachineSet;
  /** The Machines the set controls, deleting ones included. */
  machines: readonly Machine[];
  /** The replicas wanted: 0 while the set is being deleted. */
  desired: number;
  creationFailure?: MachineCreationFailure;
  now: Date;
}

/**
 * Whether the Machine's Node is Ready, and for how long: upstream reads the Node itself; the Machine's NodeReady
 * mirrors the Node's Ready condition (its lastTransitionTime is when the Machine saw it change).
 */
function nodeReadySince(machine: Machine): number | undefined {
  if (!machine.status?.nodeRef?.name) return undefined;
  const ready = getCondition(machine.status.conditions, ConditionType.NodeReady);
  return ready?.status === ConditionStatus.True ? Date.parse(ready.lastTransitionTime) : undefined;
}

/** `status.deprecated.v1beta1` of the MachineSet. */
export function computeMachineSetV1Beta1Status(
  observation: MachineSetV1Beta1Observation,
): MachineSetV1Beta1DeprecatedStatus {
  const { machineSet, machines, desired, now } = observation;
  const previous = machineSet.status?.deprecated?.v1beta1 ?? {};
  let conditions: V1Beta1Condition[] = [...(previous.conditions ?? [])];
  const set = (input: V1Beta1ConditionInput | undefined) => {
    conditions = setV1Beta1Condition(conditions, input, now);
  };

  const templateLabels = Object.entries(machineSet.spec.template.metadata?.labels ?? {});
  const fullyLabeledReplicas = machines.filter((m) =>
    templateLabels.every(([key, value]) => m.metadata.labels?.[key] === value),
  ).length;
  const minReadyMs = (machineSet.spec.template.spec.minReadySeconds ?? 0) * 1000;
  const readySince = machines.map(nodeReadySince).filter((since): since is number => since !== undefined);
  const readyReplicas = readySince.length;
  const availableReplicas = readySince.filter((since) => since + minReadyMs <= now.getTime()).length;

  const failure = observation.creationFailure;
  if (failure) {
    set(v1beta1False(T.MachinesCreated, CREATION_FAILURE_REASONS[failure.stage], S.Error, failure.message));
  }
  const current = machines.length;
  if (current < desired) {
    set(
      v1beta1False(
        T.Resized,
        R.ScalingUp,
        S.Warning,
        `Scaling up MachineSet to ${desired} replicas (actual ${current})`,
      ),
    );
  } else if (current > desired) {
    set(
      v1beta1False(
        T.Resized,
        R.ScalingDown,
        S.Warning,
        `Scaling down MachineSet to ${desired} replicas (actual ${current})`,
      ),
    );
    set(v1beta1True(T.MachinesCreated));
  } else {
    // Resized only once the Machines are ready, not as soon as they exist (as upstream and its control plane).
    if (readyReplicas === current) set(v1beta1True(T.Resized));
    set(v1beta1True(T.MachinesCreated));
  }
  set(
    machines.length > 0
      ? aggregateV1Beta1(
          machines.map((m) => ({
            kind: RESOURCES.Machine.kind,
            name: m.metadata.name ?? '',
            conditions: m.status?.deprecated?.v1beta1?.conditions,
          })),
          T.MachinesReady,
          { addSourceRef: true },
        )
      : v1beta1True(T.MachinesReady),
  );
  set(summarizeV1Beta1(conditions, { conditions: [T.MachinesCreated, T.Resized, T.MachinesReady] }));

  return {
    ...(conditions.length > 0 ? { conditions } : {}),
    ...v1beta1Failure(previous),
    fullyLabeledReplicas,
    readyReplicas,
    availableReplicas,
  };
}
