/** What the cache shows of a machine this controller created or deleted. */
export type CachedState = 'absent' | 'present' | 'deleting';

interface Pending {
  creates: Set<string>;
  deletes: Set<string>;
  since: number;
}

/** After this long an expectation is dropped, so a lost watch event cannot block the control plane forever. */
export const EXPECTATION_TTL_MS = 60_000;

/**
 * Machines created or deleted by a reconcile that the informer cache does not show yet (controller-runtime's
 * "expectations"). Until the cache catches up, planning the next step would count machines wrongly, e.g.
 * create a second machine where one was just created, so the control plane waits for them.
 */
export class MachineExpectations {
  private readonly pending = new Map<string, Pending>();

  expectCreate(key: string, machine: string, now = Date.now()): void {
    this.entry(key, now).creates.add(machine);
  }

  expectDelete(key: string, machine: string, now = Date.now()): void {
    this.entry(key, now).deletes.add(machine);
  }

  /** True once the cache shows every expected change (or they expired); forgets satisfied ones. */
  satisfied(key: string, stateOf: (machine: string) => CachedState, now = Date.now()): boolean {
    const entry = this.pending.get(key);
    if (!entry) return true;
    if (now - entry.since > EXPECTATION_TTL_MS) {
      this.pending.delete(key);
      return true;
    }
    for (const name of entry.creates) if (stateOf(name) !== 'absent') entry.creates.delete(name);
    for (const name of entry.deletes) if (stateOf(name) !== 'present') entry.deletes.delete(name);
    if (entry.creates.size > 0 || entry.deletes.size > 0) return false;
    this.pending.delete(key);
    return true;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }

  private entry(key: string, now: number): Pending {
    let entry = this.pending.get(key);
    if (!entry) {
      entry = { creates: new Set(), deletes: new Set(), since: now };
      this.pending.set(key, entry);
    }
    return entry;
  }
}
