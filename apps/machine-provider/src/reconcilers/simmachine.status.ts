import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  pausedCondition,
  setCondition,
  type ConditionInput,
  type MachineAddress,
  type SimMachine,
  type SimMachineStatus,
} from '@capstan/api';
import { SimConditionReason, SimConditionType, type NodeAgentStatus } from '@capstan/sim';

/** What one reconcile observed; conditions left out keep what the status says. */
export interface SimMachineObservation {
  ready: Omit<ConditionInput, 'type'>;
  bootstrap?: Omit<ConditionInput, 'type'>;
  apiServer?: Omit<ConditionInput, 'type'>;
  node?: Omit<ConditionInput, 'type'>;
  provisioned?: boolean;
  addresses?: MachineAddress[];
  failureDomain?: string;
}

export function nextStatus(
  simMachine: SimMachine,
  observed: SimMachineObservation,
  now: Date,
): SimMachineStatus {
  const generation = simMachine.metadata?.generation;
  let conditions = simMachine.status?.conditions;
  const set = (type: string, input: Omit<ConditionInput, 'type'> | undefined) => {
    if (input) conditions = setCondition(conditions, { ...input, type, observedGeneration: generation }, now);
  };
  set(ConditionType.Ready, observed.ready);
  set(SimConditionType.BootstrapExecSucceeded, observed.bootstrap);
  set(SimConditionType.APIServerHealthy, observed.apiServer);
  set(SimConditionType.NodeRunning, observed.node);
  // A paused machine never gets here (the reconciler kit stops first): this agrees with the kit's `Paused`.
  conditions = setCondition(conditions, pausedCondition(undefined, simMachine), now);
  const provisioned = observed.provisioned ?? simMachine.status?.initialization?.provisioned;
  const addresses = observed.addresses ?? simMachine.status?.addresses;
  const failureDomain = observed.failureDomain ?? simMachine.status?.failureDomain;
  return {
    conditions,
    ...(provisioned !== undefined && { initialization: { provisioned } }),
    ...(addresses && addresses.length > 0 && { addresses }),
    ...(failureDomain !== undefined && { failureDomain }),
    ...(generation !== undefined && { observedGeneration: generation }),
  };
}

export const waiting = (reason: string, message: string): Omit<ConditionInput, 'type'> => ({
  status: ConditionStatus.False,
  reason,
  message,
});

export const provisionedReady = (message: string): Omit<ConditionInput, 'type'> => ({
  status: ConditionStatus.True,
  reason: ConditionReason.Provisioned,
  message,
});

/** The NodeRunning condition for what the machine's node agent reports. */
export function nodeCondition(status: NodeAgentStatus): Omit<ConditionInput, 'type'> {
  const reasons: Record<NodeAgentStatus['phase'], string> = {
    Registered: SimConditionReason.NodeRegistered,
    WaitingForAPIServer: SimConditionReason.WaitingForAPIServer,
    Rejected: SimConditionReason.NodeRegistrationRejected,
    NameConflict: SimConditionReason.NodeNameConflict,
    Failed: SimConditionReason.NodeRegistrationFailed,
    NotReady: SimConditionReason.NodeNotReadyInjected,
    Deleted: SimConditionReason.NodeDeletedInjected,
    Stopped: SimConditionReason.WaitingForAPIServer,
  };
  return {
    status: status.phase === 'Registered' ? ConditionStatus.True : ConditionStatus.False,
    reason: reasons[status.phase],
    message: status.message,
  };
}

/** Server machines carry APIServerHealthy: that is how a restarted provider tells them from agents. */
export function isServerMachine(simMachine: SimMachine): boolean {
  return simMachine.status?.conditions?.some((c) => c.type === SimConditionType.APIServerHealthy) ?? false;
}

/** The disappear fault fired before: the host is gone and must not come back after a provider restart. */
export function nodeDeletedByFault(simMachine: SimMachine): boolean {
  return (
    simMachine.status?.conditions?.some(
      (c) => c.type === SimConditionType.NodeRunning && c.reason === SimConditionReason.NodeDeletedInjected,
    ) ?? false
  );
}
