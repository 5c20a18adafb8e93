import { getCondition, removeCondition, setCondition, type ConditionInput, type Machine } from '@capstan/api';
import { isNotFound, PatchHelper, type ResourceClient } from '@capstan/kube';

// A Machine's conditions have several writers: the Machine controller, the MachineSet that owns the Machine
// (UpToDate, OwnerRemediated) and the MachineHealthCheck that selects it (HealthCheckSucceeded, OwnerRemediated,
// ExternallyRemediated). Each writes through a PatchHelper on the Machine whose `ownedConditions` are exactly its
// own types: a write that loses a race is merged onto the fresh Machine, so no writer overwrites another's.

export class MachineConditionWriter {
  constructor(
    private readonly machines: ResourceClient<Machine>,
    /** The condition types the writing controller owns on Machines. */
    private readonly owned: readonly string[],
  ) {}

  /**
   * Applies `change` to a copy of `machine` and writes what differs (nothing when nothing does). Returns the
   * Machine as last written, or undefined when it is gone: a Machine that no longer exists needs no condition.
   */
  async write(machine: Machine, change: (draft: Machine) => void): Promise<Machine | undefined> {
    const patch = new PatchHelper(this.machines, machine, { ownedConditions: this.owned });
    const draft = patch.draft();
    change(draft);
    try {
      return await patch.patch(draft);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/**
 * Sets a condition on a Machine draft, unless the Machine already says the same (status, reason and message):
 * a condition that only differs in its bookkeeping is not worth a write.
 */
export function setMachineCondition(machine: Machine, input: ConditionInput, now: Date): void {
  const current = machine.status?.conditions;
  const existing = getCondition(current, input.type);
  if (
    existing?.status === input.status &&
    existing.reason === input.reason &&
    existing.message === (input.message ?? '')
  ) {
    return;
  }
  machine.status = { ...machine.status, conditions: setCondition(current, input, now) };
}

export function removeMachineCondition(machine: Machine, type: string): void {
  if (!getCondition(machine.status?.conditions, type)) return;
  machine.status = { ...machine.status, conditions: removeCondition(machine.status?.conditions, type) };
}
