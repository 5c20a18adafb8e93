import type { Condition } from '../types/common.js';
import { ConditionList } from './condition-list.js';
import {
  conditionsEqual,
  deletingCondition,
  deletionProgress,
  getCondition,
  isFalse,
  isTrue,
  isUnknown,
  mirrorCondition,
  removeCondition,
  setCondition,
  summarizeConditions,
  toRFC3339,
  withConditions,
} from './conditions.js';

const t0 = new Date('2026-01-01T10:00:00.123Z');
const t1 = new Date('2026-01-01T10:05:00Z');

describe('setCondition', () => {
  it('appends a new condition stamped with the time, without milliseconds', () => {
    const list = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'NotReady', message: 'waiting' },
      t0,
    );
    expect(list).toEqual([
      {
        type: 'Ready',
        status: 'False',
        lastTransitionTime: '2026-01-01T10:00:00Z',
        reason: 'NotReady',
        message: 'waiting',
      },
    ]);
  });

  it('keeps lastTransitionTime while the status stays, moves it when the status changes', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'NotReady' }, t0);
    const sameStatus = setCondition(
      first,
      { type: 'Ready', status: 'False', reason: 'StillNotReady', message: 'x', observedGeneration: 2 },
      t1,
    );
    expect(sameStatus[0]).toMatchObject({
      lastTransitionTime: '2026-01-01T10:00:00Z',
      reason: 'StillNotReady',
      message: 'x',
      observedGeneration: 2,
    });
    const flipped = setCondition(sameStatus, { type: 'Ready', status: 'True', reason: 'Ready' }, t1);
    expect(flipped[0]!.lastTransitionTime).toBe('2026-01-01T10:05:00Z');
  });

  it('replaces in place, leaves other conditions and the input list untouched', () => {
    const input: Condition[] = [
      { type: 'A', status: 'True', lastTransitionTime: 'x', reason: 'A', message: '' },
      { type: 'B', status: 'True', lastTransitionTime: 'y', reason: 'B', message: '' },
    ];
    const out = setCondition(input, { type: 'A', status: 'False', reason: 'NotA' }, t1);
    expect(out.map((c) => c.type)).toEqual(['A', 'B']);
    expect(out[1]).toBe(input[1]);
    expect(input[0]!.status).toBe('True');
  });
});

describe('condition queries', () => {
  const list = setCondition(
    setCondition([], { type: 'Ready', status: 'True', reason: 'Ready' }, t0),
    { type: 'Paused', status: 'False', reason: 'NotPaused' },
    t0,
  );

  it('get, isTrue, isFalse, isUnknown', () => {
    expect(getCondition(list, 'Ready')?.reason).toBe('Ready');
    expect(isTrue(list, 'Ready')).toBe(true);
    expect(isFalse(list, 'Ready')).toBe(false);
    expect(isFalse(list, 'Paused')).toBe(true);
    expect(isUnknown(list, 'Missing')).toBe(true);
    expect(isTrue(undefined, 'Ready')).toBe(false);
  });

  it('remove and compare', () => {
    expect(removeCondition(list, 'Paused').map((c) => c.type)).toEqual(['Ready']);
    expect(conditionsEqual(list, [...list].reverse())).toBe(true);
    expect(
      conditionsEqual(list, setCondition(list, { type: 'Ready', status: 'True', reason: 'Other' }, t1)),
    ).toBe(false);
    expect(conditionsEqual(undefined, [])).toBe(true);
  });

  it('formats metav1.Time', () => {
    expect(toRFC3339(t0)).toBe('2026-01-01T10:00:00Z');
  });
});

describe('mirrorCondition', () => {
  const fallback = {
    status: 'Unknown',
    reason: 'NotReady',
    message: 'SimCluster has no Ready condition yet',
  } as const;

  it("copies the provider's condition under the owner's type", () => {
    const source = [
      { type: 'Ready', status: 'False', reason: 'WaitingForBootstrapData', message: 'no secret yet' },
    ];
    expect(
      mirrorCondition(source, 'Ready', {
        targetType: 'InfrastructureReady',
        fallback,
        observedGeneration: 3,
      }),
    ).toEqual({
      type: 'InfrastructureReady',
      status: 'False',
      reason: 'WaitingForBootstrapData',
      message: 'no secret yet',
      observedGeneration: 3,
    });
  });

  it('uses the fallback when the provider reports no such condition', () => {
    expect(mirrorCondition([], 'Ready', { targetType: 'InfrastructureReady', fallback })).toEqual({
      type: 'InfrastructureReady',
      status: 'Unknown',
      reason: 'NotReady',
      message: 'SimCluster has no Ready condition yet',
    });
  });

  it('names generic reasons for v1beta1 conditions that carry none, and flags invalid statuses', () => {
    expect(
      mirrorCondition([{ type: 'Ready', status: 'True' }], 'Ready', {
        targetType: 'BootstrapConfigReady',
        fallback,
      }).reason,
    ).toBe('Ready');
    expect(
      mirrorCondition([{ type: 'Available', status: 'False' }], 'Available', {
        targetType: 'ControlPlaneAvailable',
        fallback,
      }).reason,
    ).toBe('NotAvailable');
    expect(
      mirrorCondition([{ type: 'Ready', status: 'yes' }], 'Ready', {
        targetType: 'InfrastructureReady',
        fallback,
      }),
    ).toMatchObject({
      status: 'Unknown',
      reason: 'InvalidConditionReported',
    });
  });
});

describe('summarizeConditions', () => {
  const base = [
    { type: 'BootstrapConfigReady', status: 'True', reason: 'Ready', message: '', lastTransitionTime: 'x' },
    { type: 'InfrastructureReady', status: 'True', reason: 'Ready', message: '', lastTransitionTime: 'x' },
    { type: 'Deleting', status: 'False', reason: 'NotDeleting', message: '', lastTransitionTime: 'x' },
  ] satisfies Condition[];
  const of = [
    'BootstrapConfigReady',
    'InfrastructureReady',
    { type: 'Deleting', polarity: 'Negative' as const },
  ];

  it('is True when every condition is in its good state (negative polarity included)', () => {
    expect(summarizeConditions(base, { targetType: 'Ready', of })).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
      message: '',
    });
  });

  it('is Unknown when one is unknown or missing, listing them', () => {
    const summary = summarizeConditions(base, { targetType: 'Ready', of: [...of, 'NodeHealthy'] });
    expect(summary).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'ReadyUnknown',
      message: '* NodeHealthy: Condition not yet reported',
    });
  });

  it('is False when one is bad, listing problems before unknowns, with custom reasons', () => {
    const deleting = setCondition(
      base,
      { type: 'Deleting', status: 'True', reason: 'DrainingNode', message: 'Drain not completed' },
      t0,
    );
    const summary = summarizeConditions(deleting, {
      targetType: 'Available',
      of: [...of, 'NodeHealthy'],
      reasons: { false: 'NotAvailable' },
      observedGeneration: 4,
    });
    expect(summary).toEqual({
      type: 'Available',
      status: 'False',
      reason: 'NotAvailable',
      message: '* Deleting: Drain not completed\n* NodeHealthy: Condition not yet reported',
      observedGeneration: 4,
    });
  });
});

describe('withConditions', () => {
  it('sets every input with the generation, moving lastTransitionTime only where the status changed', () => {
    const before = withConditions(
      undefined,
      [
        { type: 'Ready', status: 'False', reason: 'Booting' },
        { type: 'Available', status: 'False', reason: 'NotReady' },
      ],
      3,
      t0,
    );
    const after = withConditions(
      before,
      [
        { type: 'Ready', status: 'True', reason: 'Booted' },
        { type: 'Available', status: 'False', reason: 'StillWaiting', message: 'soon' },
      ],
      4,
      t1,
    );
    expect(after).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Booted',
        message: '',
        observedGeneration: 4,
        lastTransitionTime: toRFC3339(t1),
      },
      {
        type: 'Available',
        status: 'False',
        reason: 'StillWaiting',
        message: 'soon',
        observedGeneration: 4,
        lastTransitionTime: toRFC3339(t0),
      },
    ]);
  });

  it('leaves observedGeneration out when no generation is given (a condition written on another kind)', () => {
    expect(
      withConditions(
        [],
        [{ type: 'HealthCheckSucceeded', status: 'True', reason: 'Healthy' }],
        undefined,
        t0,
      )[0],
    ).not.toHaveProperty('observedGeneration');
  });
});

describe('deletingCondition', () => {
  it.each([
    ['not deleting', undefined, { status: 'False', reason: 'NotDeleting' }],
    [
      'waiting for what is left',
      deletionProgress('2 Machines'),
      { status: 'True', reason: 'Deleting', message: 'Deleting 2 Machines' },
    ],
    [
      'nothing left',
      deletionProgress(undefined),
      { status: 'True', reason: 'DeletionCompleted', message: '' },
    ],
    [
      'a step of its own',
      { reason: 'WaitingForPreDrainHook', message: 'hook x' },
      { status: 'True', reason: 'WaitingForPreDrainHook', message: 'hook x' },
    ],
  ])('%s', (_name, step, expected) => {
    expect(deletingCondition(step)).toMatchObject({ type: 'Deleting', ...expected });
  });
});

describe('ConditionList', () => {
  it('builds a status with one generation and clock, and removes what no longer applies', () => {
    const list = new ConditionList(
      [{ type: 'Stale', status: 'True', reason: 'Old', message: '', lastTransitionTime: toRFC3339(t0) }],
      7,
      t1,
    );
    list.set({ type: 'Ready', status: 'True', reason: 'Ready' });
    list.set(deletingCondition(undefined));
    list.remove('Stale');
    expect(list.all.map((c) => [c.type, c.status, c.observedGeneration, c.lastTransitionTime])).toEqual([
      ['Ready', 'True', 7, toRFC3339(t1)],
      ['Deleting', 'False', 7, toRFC3339(t1)],
    ]);
  });
});
