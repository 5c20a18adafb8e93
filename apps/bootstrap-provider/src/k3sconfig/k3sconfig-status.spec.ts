import { ConditionType, getCondition, setCondition } from '@capstan/api';
import { deepEqual } from '@capstan/kube';
import { desiredK3sConfigStatus } from './k3sconfig-status.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:01:00Z');

describe('desiredK3sConfigStatus', () => {
  it('repeats the waiting reason on DataSecretAvailable and Ready, without contract fields', () => {
    const status = desiredK3sConfigStatus(
      undefined,
      { state: 'waiting', reason: 'WaitingForControlPlaneInitialized', message: 'waiting' },
      3,
      t0,
    );
    expect(status.initialization).toBeUndefined();
    expect(status.dataSecretName).toBeUndefined();
    expect(status.observedGeneration).toBe(3);
    for (const type of [ConditionType.DataSecretAvailable, ConditionType.Ready]) {
      expect(getCondition(status.conditions, type)).toMatchObject({
        status: 'False',
        reason: 'WaitingForControlPlaneInitialized',
        message: 'waiting',
        observedGeneration: 3,
      });
    }
    // Paused belongs to the reconciler kit.
    expect(getCondition(status.conditions, ConditionType.Paused)).toBeUndefined();
  });

  it('sets the contract fields once created and never takes them back', () => {
    const created = desiredK3sConfigStatus(undefined, { state: 'created', dataSecretName: 'm-1' }, 1, t0);
    expect(created).toMatchObject({ dataSecretName: 'm-1', initialization: { dataSecretCreated: true } });
    expect(getCondition(created.conditions, ConditionType.Ready)).toMatchObject({
      status: 'True',
      reason: 'Ready',
    });
    expect(getCondition(created.conditions, ConditionType.DataSecretAvailable)).toMatchObject({
      status: 'True',
      reason: 'Available',
    });

    // The secret was deleted and the data cannot be rendered again yet: the contract fields stay.
    const waiting = desiredK3sConfigStatus(
      created,
      { state: 'waiting', reason: 'WaitingForCluster', message: 'x' },
      1,
      t1,
    );
    expect(waiting).toMatchObject({ dataSecretName: 'm-1', initialization: { dataSecretCreated: true } });
    expect(getCondition(waiting.conditions, ConditionType.Ready)?.lastTransitionTime).toBe(
      '2026-01-01T00:01:00Z',
    );
  });

  it('keeps the conditions of other owners as they are', () => {
    const paused = setCondition(
      undefined,
      { type: ConditionType.Paused, status: 'True', reason: 'Paused' },
      t0,
    );
    const created = desiredK3sConfigStatus(
      { conditions: paused },
      { state: 'created', dataSecretName: 'm-1' },
      2,
      t1,
    );
    expect(getCondition(created.conditions, ConditionType.Paused)).toEqual(paused[0]);
  });

  it('is equal to a converged status (what the patch helper compares), so nothing is written', () => {
    const created = desiredK3sConfigStatus(undefined, { state: 'created', dataSecretName: 'm-1' }, 1, t0);
    const again = desiredK3sConfigStatus(created, { state: 'created', dataSecretName: 'm-1' }, 1, t1);
    expect(deepEqual(created, again)).toBe(true);
    expect(
      deepEqual(created, desiredK3sConfigStatus(created, { state: 'created', dataSecretName: 'm-1' }, 2, t1)),
    ).toBe(false);
  });
});
