import { ConditionType, RESOURCES, type Condition, type SimMachine } from '@capstan/api';
import type { OwedEvent } from '@capstan/provider-kit';
import { handoffEventBase, SimConditionReason, SimConditionType } from '@capstan/sim';

/** Ready reasons that end provisioning until the machine's data or spec changes. */
const FAILED_REASONS: readonly string[] = [
  SimConditionReason.ProvisioningFailed,
  SimConditionReason.BootstrapDataInvalid,
];

/** NodeRunning reasons that say an injected fault fired. */
const FAULT_REASONS: readonly string[] = [
  SimConditionReason.NodeNotReadyInjected,
  SimConditionReason.NodeDeletedInjected,
];

/**
 * What a status write changes that others hear about, read from the object as read and as written: a restarted
 * provider finds the state it wrote and repeats nothing, and a write that failed is announced by the reconcile
 * that makes it.
 */
export interface MachineTransitions {
  /** `status.initialization.provisioned` became true. */
  provisioned: boolean;
  /** Ready turned to a failure that ends provisioning (or to another such failure, or for a new generation). */
  failed?: { reason: string; message: string };
  /** NodeRunning turned to an injected fault: its message. */
  fault?: string;
}

export function machineTransitions(before: SimMachine, after: SimMachine): MachineTransitions {
  const readyBefore = condition(before, ConditionType.Ready);
  const readyAfter = condition(after, ConditionType.Ready);
  const failed =
    readyAfter && FAILED_REASONS.includes(readyAfter.reason) && !sameCondition(readyBefore, readyAfter)
      ? { reason: readyAfter.reason, message: readyAfter.message }
      : undefined;
  const nodeBefore = condition(before, SimConditionType.NodeRunning);
  const nodeAfter = condition(after, SimConditionType.NodeRunning);
  const fault =
    nodeAfter && FAULT_REASONS.includes(nodeAfter.reason) && nodeAfter.reason !== nodeBefore?.reason
      ? nodeAfter.message || nodeAfter.reason
      : undefined;
  return {
    provisioned:
      after.status?.initialization?.provisioned === true && !before.status?.initialization?.provisioned,
    ...(failed && { failed }),
    ...(fault !== undefined && { fault }),
  };
}

export function hasTransitions(transitions: MachineTransitions): boolean {
  return transitions.provisioned || transitions.failed !== undefined || transitions.fault !== undefined;
}

/** Who the machine belongs to, as its hand-off events name it. */
export interface MachineOwnerNames {
  clusterName?: string;
  machineName?: string;
}

/** The hand-off events the transitions of the SimMachine as written announce. */
export function transitionEvents(
  written: SimMachine,
  transitions: MachineTransitions,
  owners: MachineOwnerNames,
): OwedEvent[] {
  const { clusterName, machineName } = owners;
  if (!clusterName || !machineName) return [];
  const base = { ...handoffEventBase(written, RESOURCES.SimMachine.kind, clusterName), machineName };
  const events: OwedEvent[] = [];
  const providerID = written.spec?.providerID;
  if (transitions.provisioned && providerID) {
    events.push({
      name: 'infrastructure-machine.provisioned',
      data: {
        ...base,
        providerID,
        ...(written.status?.addresses && { addresses: written.status.addresses }),
        ...(written.status?.failureDomain && { failureDomain: written.status.failureDomain }),
      },
    });
  }
  if (transitions.failed) {
    events.push({
      name: 'infrastructure-machine.failed',
      data: {
        ...base,
        reason: transitions.failed.reason,
        message: transitions.failed.message.slice(0, 1024),
      },
    });
  }
  return events;
}

/** `infrastructure-machine.deleted`: the machine's host is gone. */
export function deletedEvent(simMachine: SimMachine, owners: MachineOwnerNames): OwedEvent | undefined {
  if (!owners.clusterName) return undefined;
  return {
    name: 'infrastructure-machine.deleted',
    data: {
      ...handoffEventBase(simMachine, RESOURCES.SimMachine.kind, owners.clusterName),
      ...(owners.machineName && { machineName: owners.machineName }),
    },
  };
}

function condition(obj: SimMachine, type: string): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}

function sameCondition(a: Condition | undefined, b: Condition): boolean {
  return a?.reason === b.reason && a.message === b.message && a.observedGeneration === b.observedGeneration;
}
