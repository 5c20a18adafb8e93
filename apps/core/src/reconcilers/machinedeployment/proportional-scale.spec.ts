import { planProportionalScale } from './proportional-scale.js';

describe('proportional scaling', () => {
  const target = (replicas: number, maxSurge = 1) => ({
    replicas,
    maxSurge,
    rollingUpdate: true,
    currentTotal: 0,
  });

  it('resizes the only active set to the new replicas (no rollout)', () => {
    const plan = planProportionalScale(
      target(5),
      { name: 'new', replicas: 3, createdAt: 2 },
      [{ name: 'old', replicas: 0, createdAt: 1 }],
      false,
    );
    expect([...plan]).toEqual([['new', 5]]);
  });

  it('splits a scale-up mid-rollout in proportion to the sizes the sets were scaled for', () => {
    // Was 10 replicas + 2 surge: old 6, new 6. Now 20 replicas + 2 surge = 22 allowed.
    const plan = planProportionalScale(
      target(20, 2),
      { name: 'new', replicas: 6, createdAt: 2, maxReplicas: 12 },
      [{ name: 'old', replicas: 6, createdAt: 1, maxReplicas: 12 }],
      false,
    );
    expect(plan.get('new')! + plan.get('old')!).toBe(22);
    expect(plan.get('new')).toBe(11);
    expect(plan.get('old')).toBe(11);
  });

  it('takes a scale-down from the sets in proportion, never below zero', () => {
    const plan = planProportionalScale(
      target(2, 0),
      { name: 'new', replicas: 4, createdAt: 2, maxReplicas: 6 },
      [{ name: 'old', replicas: 2, createdAt: 1, maxReplicas: 6 }],
      false,
    );
    expect(plan.get('new')! + plan.get('old')!).toBe(2);
    expect(Math.min(plan.get('new')!, plan.get('old')!)).toBeGreaterThanOrEqual(0);
  });

  it('scales old sets to zero once the new one is saturated', () => {
    const plan = planProportionalScale(
      target(3),
      { name: 'new', replicas: 3, createdAt: 2 },
      [{ name: 'old', replicas: 1, createdAt: 1 }],
      true,
    );
    expect([...plan]).toEqual([['old', 0]]);
  });
});
