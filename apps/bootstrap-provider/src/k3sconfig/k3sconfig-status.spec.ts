import { ConditionType, getCondition } from '@capstan/api';
import { desiredK3sConfigStatus, k3sConfigStatusChanged } from './k3sconfig-status.js';

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
    expect(getCondition(status.conditions, ConditionType.Paused)).toMatchObject({
      status: 'False',
      reason: 'NotPaused',
    });
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

  it('changes only Paused while paused', () => {
    const created = desiredK3sConfigStatus(undefined, { state: 'created', dataSecretName: 'm-1' }, 1, t0);
    const paused = desiredK3sConfigStatus(created, { state: 'paused' }, 2, t1);
    expect(getCondition(paused.conditions, ConditionType.Paused)).toMatchObject({
      status: 'True',
      reason: 'Paused',
    });
    expect(getCondition(paused.conditions, ConditionType.Ready)).toEqual(
      getCondition(created.conditions, ConditionType.Ready),
    );
    expect(paused.observedGeneration).toBe(1);
  });

  it('reports no change for a converged status, so nothing is written', () => {
    const created = desiredK3sConfigStatus(undefined, { state: 'created', dataSecretName: 'm-1' }, 1, t0);
    const again = desiredK3sConfigStatus(created, { state: 'created', dataSecretName: 'm-1' }, 1, t1);
    expect(k3sConfigStatusChanged(created, again)).toBe(false);
    expect(
      k3sConfigStatusChanged(
        created,
        desiredK3sConfigStatus(created, { state: 'created', dataSecretName: 'm-1' }, 2, t1),
      ),
    ).toBe(true);
  });
});
