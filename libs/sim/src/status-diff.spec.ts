import { isPaused, pausedCondition, statusChanged } from './status-diff.js';

describe('status helpers', () => {
  const condition = {
    type: 'Ready',
    status: 'True' as const,
    reason: 'Provisioned',
    message: '',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  };

  it('sees no change in the same status written in another order', () => {
    expect(
      statusChanged(
        { conditions: [condition], initialization: { provisioned: true }, observedGeneration: 1 },
        { observedGeneration: 1, initialization: { provisioned: true }, conditions: [condition] },
      ),
    ).toBe(false);
    expect(
      statusChanged({ conditions: [condition] }, { conditions: [{ ...condition, status: 'False' }] }),
    ).toBe(true);
    expect(
      statusChanged({ conditions: [condition] }, { conditions: [condition], failureDomain: 'a' } as never),
    ).toBe(true);
    expect(statusChanged(undefined, { conditions: [] })).toBe(false);
  });

  it('pauses on the Cluster or the annotation, as upstream', () => {
    const obj = { metadata: { name: 'x' } };
    expect(isPaused(obj, { spec: { paused: true } })).toBe(true);
    expect(isPaused({ metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } }, undefined)).toBe(true);
    expect(isPaused(obj, { metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } })).toBe(true);
    expect(isPaused(obj, { spec: {} })).toBe(false);
    expect(pausedCondition(true, 3)).toMatchObject({
      type: 'Paused',
      status: 'True',
      reason: 'Paused',
      observedGeneration: 3,
    });
    expect(pausedCondition(false)).toMatchObject({ status: 'False', reason: 'NotPaused' });
  });
});
