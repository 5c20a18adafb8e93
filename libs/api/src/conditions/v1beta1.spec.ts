import type { V1Beta1Condition } from '../types/deprecated-status.js';
import {
  aggregateV1Beta1,
  mirrorV1Beta1,
  readV1Beta1Conditions,
  removeV1Beta1Condition,
  setV1Beta1Condition,
  summarizeV1Beta1,
  v1beta1False,
  v1beta1True,
  v1beta1Unknown,
} from './v1beta1.js';

// Cases after upstream's util/conditions/deprecated/v1beta1 tests (setter_test.go, merge_test.go, getter_test.go).

const t0 = new Date('2026-01-01T10:00:00.500Z');
const t1 = new Date('2026-01-01T10:05:00Z');
const at = (time: Date) => time.toISOString().replace(/\.\d{3}Z$/, 'Z');

const condition = (c: Partial<V1Beta1Condition> & { type: string; status: string }): V1Beta1Condition => ({
  lastTransitionTime: at(t0),
  ...c,
});

describe('setV1Beta1Condition', () => {
  it('stores the condition as upstream serializes it: no empty reason, severity or message; second precision', () => {
    expect(setV1Beta1Condition(undefined, v1beta1True('BootstrapReady'), t0)).toEqual([
      { type: 'BootstrapReady', status: 'True', lastTransitionTime: '2026-01-01T10:00:00Z' },
    ]);
    expect(setV1Beta1Condition([], v1beta1False('NodeHealthy', 'WaitingForNodeRef', 'Info'), t0)).toEqual([
      { type: 'NodeHealthy', status: 'False', severity: 'Info', lastTransitionTime: '2026-01-01T10:00:00Z', reason: 'WaitingForNodeRef' },
    ]);
  });

  it('keeps lastTransitionTime while status, reason, severity and message stay; moves it when any changes', () => {
    const first = setV1Beta1Condition([], v1beta1False('Resized', 'ScalingUp', 'Warning', 'to 3 (actual 1)'), t0);
    expect(setV1Beta1Condition(first, v1beta1False('Resized', 'ScalingUp', 'Warning', 'to 3 (actual 1)'), t1)).toEqual(first);
    const moved = setV1Beta1Condition(first, v1beta1False('Resized', 'ScalingUp', 'Warning', 'to 3 (actual 2)'), t1);
    expect(moved[0]).toMatchObject({ message: 'to 3 (actual 2)', lastTransitionTime: at(t1) });
    expect(setV1Beta1Condition(first, v1beta1False('Resized', 'ScalingUp', 'Info', 'to 3 (actual 1)'), t1)[0]!.lastTransitionTime).toBe(at(t1));
  });

  it('sorts Ready first, then by type, and keeps the time a new mirrored condition carries', () => {
    let list = setV1Beta1Condition([], v1beta1True('NodeHealthy'), t0);
    list = setV1Beta1Condition(list, v1beta1True('BootstrapReady'), t0);
    list = setV1Beta1Condition(list, v1beta1True('Ready'), t0);
    list = setV1Beta1Condition(list, { ...v1beta1True('InfrastructureReady'), lastTransitionTime: '2025-12-31T00:00:00Z' }, t1);
    expect(list.map((c) => c.type)).toEqual(['Ready', 'BootstrapReady', 'InfrastructureReady', 'NodeHealthy']);
    expect(list[2]!.lastTransitionTime).toBe('2025-12-31T00:00:00Z');
    expect(setV1Beta1Condition(list, undefined, t1)).toEqual(list);
    expect(removeV1Beta1Condition(list, 'Ready').map((c) => c.type)).toEqual(['BootstrapReady', 'InfrastructureReady', 'NodeHealthy']);
  });
});

describe('readV1Beta1Conditions', () => {
  it('reads status.deprecated.v1beta1.conditions first, else status.conditions (v1beta1 contract or metav1)', () => {
    const deprecated = { type: 'Ready', status: 'False', severity: 'Warning', reason: 'Booting', lastTransitionTime: at(t0) };
    const metav1 = { type: 'Ready', status: 'True', reason: 'Ready', message: '', observedGeneration: 2, lastTransitionTime: at(t1) };
    expect(readV1Beta1Conditions({ status: { conditions: [metav1], deprecated: { v1beta1: { conditions: [deprecated] } } } })).toEqual([deprecated]);
    expect(readV1Beta1Conditions({ status: { conditions: [metav1, { type: 3 }] } })).toEqual([
      { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: at(t1) },
    ]);
    expect(readV1Beta1Conditions({ status: {} })).toEqual([]);
  });
});

describe('mirrorV1Beta1', () => {
  it("copies the source's Ready under the target type, severity and time included", () => {
    const source = [condition({ type: 'Ready', status: 'False', severity: 'Error', reason: 'Boom', message: 'broken' })];
    expect(mirrorV1Beta1(source, 'InfrastructureReady', { value: false, reason: 'WaitingForInfrastructure', severity: 'Info' })).toEqual({
      type: 'InfrastructureReady',
      status: 'False',
      severity: 'Error',
      reason: 'Boom',
      message: 'broken',
      lastTransitionTime: at(t0),
    });
  });

  it('falls back to True or to False with the fallback reason when the source reports no Ready, else says nothing', () => {
    const other = [condition({ type: 'Provisioned', status: 'True' })];
    expect(mirrorV1Beta1(other, 'BootstrapReady', { value: true, reason: 'WaitingForDataSecret', severity: 'Info' })).toEqual(v1beta1True('BootstrapReady'));
    expect(mirrorV1Beta1(undefined, 'BootstrapReady', { value: false, reason: 'WaitingForDataSecret', severity: 'Info' })).toEqual(
      v1beta1False('BootstrapReady', 'WaitingForDataSecret', 'Info'),
    );
    expect(mirrorV1Beta1(other, 'BootstrapReady')).toBeUndefined();
  });
});

describe('summarizeV1Beta1', () => {
  const options = { conditions: ['InfrastructureReady', 'BootstrapReady', 'DrainingSucceeded'] };

  it('is True when all in scope are True, and says nothing when none is set', () => {
    const list = [condition({ type: 'BootstrapReady', status: 'True' }), condition({ type: 'InfrastructureReady', status: 'True' })];
    expect(summarizeV1Beta1(list, options)).toEqual(v1beta1True('Ready'));
    expect(summarizeV1Beta1([condition({ type: 'NodeHealthy', status: 'False' })], options)).toBeUndefined();
  });

  it('takes the worst group: False Error before Warning before Info before True before Unknown', () => {
    const list = [
      condition({ type: 'BootstrapReady', status: 'False', severity: 'Info', reason: 'WaitingForDataSecret' }),
      condition({ type: 'InfrastructureReady', status: 'False', severity: 'Warning', reason: 'Flaky', message: 'retrying' }),
      condition({ type: 'DrainingSucceeded', status: 'Unknown', reason: 'Eh' }),
    ];
    expect(summarizeV1Beta1(list, options)).toEqual({ type: 'Ready', status: 'False', severity: 'Warning', reason: 'Flaky', message: 'retrying' });
    expect(summarizeV1Beta1([list[2]!, condition({ type: 'BootstrapReady', status: 'True' })], options)).toEqual(v1beta1True('Ready'));
    expect(summarizeV1Beta1([list[2]!], options)).toEqual(v1beta1Unknown('Ready', 'Eh'));
  });

  it('within the top group, reason and message come from the first type in the priority order', () => {
    const list = [
      condition({ type: 'BootstrapReady', status: 'False', severity: 'Info', reason: 'WaitingForDataSecret' }),
      condition({ type: 'InfrastructureReady', status: 'False', severity: 'Info', reason: 'WaitingForInfrastructure' }),
    ];
    expect(summarizeV1Beta1(list, options)).toMatchObject({ status: 'False', severity: 'Info', reason: 'WaitingForInfrastructure' });
  });

  it('counts steps (the Machine while provisioning) only while nothing but the listed conditions is in scope', () => {
    const provisioning = [
      condition({ type: 'BootstrapReady', status: 'True' }),
      condition({ type: 'InfrastructureReady', status: 'False', severity: 'Info', reason: 'WaitingForInfrastructure' }),
    ];
    const stepCounter = { ...options, stepCounter: true, stepCounterIfOnly: ['BootstrapReady', 'InfrastructureReady'] };
    expect(summarizeV1Beta1(provisioning, stepCounter)).toEqual(
      v1beta1False('Ready', 'WaitingForInfrastructure', 'Info', '1 of 2 completed'),
    );
    const draining = [...provisioning, condition({ type: 'DrainingSucceeded', status: 'True' })];
    expect(summarizeV1Beta1(draining, stepCounter)).toEqual(v1beta1False('Ready', 'WaitingForInfrastructure', 'Info'));
  });
});

describe('aggregateV1Beta1', () => {
  const machine = (name: string, ready?: Partial<V1Beta1Condition> & { status: string }) => ({
    kind: 'Machine',
    name,
    conditions: ready ? [condition({ type: 'Ready', ...ready })] : undefined,
  });

  it("merges the sources' Ready with a step counter over all of them, naming the source in the reason", () => {
    const sources = [
      machine('m-b', { status: 'False', severity: 'Info', reason: 'WaitingForInfrastructure', message: '0 of 2 completed' }),
      machine('m-a', { status: 'False', severity: 'Info', reason: 'WaitingForDataSecret', message: '1 of 2 completed' }),
      machine('m-c', { status: 'True' }),
      machine('m-d'),
    ];
    expect(aggregateV1Beta1(sources, 'MachinesReady', { addSourceRef: true })).toEqual(
      v1beta1False('MachinesReady', 'WaitingForDataSecret @ Machine/m-a', 'Info', '1 of 4 completed'),
    );
    expect(aggregateV1Beta1([machine('m-c', { status: 'True' })], 'MachinesReady', { addSourceRef: true })).toEqual(v1beta1True('MachinesReady'));
    expect(aggregateV1Beta1([machine('m-d')], 'MachinesReady')).toBeUndefined();
  });

  it('keeps a reason that already names its source', () => {
    const sources = [machine('m-a', { status: 'Unknown', reason: 'Lost @ Machine/other' })];
    expect(aggregateV1Beta1(sources, 'MachinesReady', { addSourceRef: true })).toEqual(
      v1beta1Unknown('MachinesReady', 'Lost @ Machine/other', '0 of 1 completed'),
    );
  });
});
