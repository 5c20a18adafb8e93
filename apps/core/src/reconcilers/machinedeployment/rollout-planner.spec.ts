import type { Machine } from '@capstan/api';
import { machinesToDelete } from '../shared/deletion-order.js';
import { isAvailable } from '../shared/machine-state.js';
import { machine, NOW, running } from '../../testing/machine-builder.js';
import { planOnDelete, planRollingUpdate, type SetState } from './rollout-planner.js';

const set = (name: string, replicas: number, machines: Machine[], createdAt = 0): SetState => ({
  name,
  replicas,
  machines,
  createdAt,
});
const runningMachines = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => running(`${prefix}-${i}`));
const starting = (name: string) => machine({ name, createdSecondsAgo: 10 });

/**
 * A small world of MachineSets that create Machines (not Available at first), delete them in their deletion order
 * (gone one step later), and make each new Machine Available `readyAfter` steps after it appeared.
 */
function simulate(
  limits: { replicas: number; maxSurge: number; maxUnavailable: number },
  readyAfter: number,
) {
  let serial = 0;
  const age = new Map<Machine, number>();
  const worlds: { old: SetState; fresh: SetState } = {
    old: set('old', limits.replicas, runningMachines('old', limits.replicas), 0),
    fresh: set('new', 0, [], 1),
  };
  const observed: { total: number; available: number }[] = [];
  for (let step = 0; step < 200; step++) {
    const plan = planRollingUpdate(limits, worlds.fresh, [worlds.old], NOW);
    for (const s of [worlds.fresh, worlds.old]) {
      s.replicas = plan.get(s.name)!;
      // Machines deleted last step are gone now.
      s.machines = s.machines.filter((m) => !m.metadata.deletionTimestamp);
      const live = s.machines.length;
      if (live < s.replicas) {
        for (let i = live; i < s.replicas; i++) {
          const m = starting(`${s.name}-m${serial++}`);
          age.set(m, 0);
          s.machines = [...s.machines, m];
        }
      } else if (live > s.replicas) {
        const doomed = new Set(machinesToDelete(s.machines, live - s.replicas, undefined, NOW));
        s.machines = s.machines.map((m) =>
          doomed.has(m) ? { ...m, metadata: { ...m.metadata, deletionTimestamp: new Date(NOW) } } : m,
        );
      }
      for (const m of s.machines) {
        const a = (age.get(m) ?? readyAfter) + 1;
        age.set(m, a);
        if (a >= readyAfter && !m.metadata.deletionTimestamp && !isAvailable(m)) {
          const ready = running(m.metadata.name!);
          age.set(ready, a);
          s.machines = s.machines.map((x) => (x === m ? ready : x));
        }
      }
    }
    const all = [...worlds.fresh.machines, ...worlds.old.machines];
    observed.push({ total: all.length, available: all.filter(isAvailable).length });
    if (
      worlds.old.machines.length === 0 &&
      worlds.fresh.machines.filter(isAvailable).length === limits.replicas
    )
      break;
  }
  return { observed, worlds };
}

describe('rolling update plan', () => {
  const cases = [
    { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
    { replicas: 3, maxSurge: 0, maxUnavailable: 1 },
    { replicas: 6, maxSurge: 3, maxUnavailable: 1 },
    { replicas: 6, maxSurge: 1, maxUnavailable: 3 },
    { replicas: 6, maxSurge: 10, maxUnavailable: 0 },
    { replicas: 6, maxSurge: 0, maxUnavailable: 10 },
    { replicas: 5, maxSurge: 2, maxUnavailable: 2 },
  ];
  for (const limits of cases) {
    for (const readyAfter of [1, 3]) {
      it(`never exceeds maxSurge or maxUnavailable and completes (${JSON.stringify(limits)}, ready after ${readyAfter})`, () => {
        const { observed, worlds } = simulate(limits, readyAfter);
        const minAvailable = limits.replicas - Math.min(limits.maxUnavailable, limits.replicas);
        for (const moment of observed) {
          expect(moment.total).toBeLessThanOrEqual(limits.replicas + limits.maxSurge);
          expect(moment.available).toBeGreaterThanOrEqual(minAvailable);
        }
        expect(worlds.old.machines).toHaveLength(0);
        expect(worlds.fresh.machines.filter(isAvailable)).toHaveLength(limits.replicas);
        expect(worlds.old.replicas).toBe(0);
      });
    }
  }

  it('counts Machines still deleting against maxSurge', () => {
    const deleting = running('old-d', { deleting: true });
    const plan = planRollingUpdate(
      { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
      set('new', 1, [starting('new-0')], 1),
      [set('old', 2, [...runningMachines('old', 2), deleting], 0)],
      NOW,
    );
    // 1 new + 3 old (one deleting) already fill replicas + maxSurge.
    expect(plan.get('new')).toBe(1);
    expect(plan.get('old')).toBe(2);
  });

  it('removes old Machines that are not Available first, even with no availability budget', () => {
    const broken = machine({
      name: 'old-broken',
      createdSecondsAgo: 3600,
      nodeRef: 'n',
      conditions: { Available: 'False' },
    });
    const plan = planRollingUpdate(
      { replicas: 3, maxSurge: 1, maxUnavailable: 0 },
      set('new', 1, [starting('new-0')], 1),
      [set('old', 3, [...runningMachines('old', 2), broken], 0)],
      NOW,
    );
    expect(plan.get('old')).toBe(2);
  });

  it('never grows an old set back after a Machine of it was deleted', () => {
    const plan = planRollingUpdate(
      { replicas: 3, maxSurge: 1, maxUnavailable: 1 },
      set('new', 0, [], 1),
      [set('old', 3, runningMachines('old', 2), 0)],
      NOW,
    );
    expect(plan.get('old')).toBeLessThanOrEqual(2);
  });
});

describe('OnDelete plan', () => {
  const limits = { replicas: 3, maxSurge: 0, maxUnavailable: 0 };

  it('leaves old Machines alone and does not surge', () => {
    const plan = planOnDelete(limits, set('new', 0, [], 1), [set('old', 3, runningMachines('old', 3), 0)]);
    expect(plan.get('old')).toBe(3);
    expect(plan.get('new')).toBe(0);
  });

  it('grows the new set only once a deleted old Machine is gone', () => {
    const whileDeleting = planOnDelete(limits, set('new', 0, [], 1), [
      set('old', 3, [...runningMachines('old', 2), running('old-x', { deleting: true })], 0),
    ]);
    expect(whileDeleting.get('new')).toBe(0);
    const gone = planOnDelete(limits, set('new', 0, [], 1), [set('old', 3, runningMachines('old', 2), 0)]);
    expect(gone.get('old')).toBe(2);
    expect(gone.get('new')).toBe(1);
  });

  it('scales old sets down, oldest first, when replicas went down', () => {
    const plan = planOnDelete(
      { replicas: 2, maxSurge: 0, maxUnavailable: 0 },
      set('new', 1, [starting('n')], 2),
      [set('older', 1, runningMachines('older', 1), 0), set('old', 2, runningMachines('old', 2), 1)],
    );
    expect(plan.get('older')).toBe(0);
    expect(plan.get('old')).toBe(1);
    expect(plan.get('new')).toBe(1);
  });
});
