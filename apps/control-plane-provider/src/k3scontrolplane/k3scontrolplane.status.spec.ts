import { getCondition, setCondition, type K3sControlPlaneStatus } from '@capstan/api';
import type { StatusInputs } from '../planning/control-plane-status.js';
import { testMachine } from '../planning/testing.js';
import { TestScope, testKcp } from '../testing/control-plane-scope.js';
import { statusTransitionEvents, writeControlPlaneStatus } from './k3scontrolplane.status.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const available = (status: boolean): K3sControlPlaneStatus['conditions'] =>
  setCondition(undefined, { type: 'Available', status: status ? 'True' : 'False', reason: 'x' }, t0);

const inputs = (overrides: Partial<StatusInputs> = {}): StatusInputs => ({
  clusterName: 'demo',
  desiredReplicas: 3,
  generation: 2,
  machines: ['a', 'b', 'c'].map((name) => testMachine(name, { version: 'v1.31.4' })),
  initialized: true,
  certificates: { available: true },
  deleting: false,
  ...overrides,
});

describe('statusTransitionEvents', () => {
  const kcp = testKcp();

  it('announces initialization, availability and the desired size each when first reached', () => {
    const next: K3sControlPlaneStatus = {
      initialization: { controlPlaneInitialized: true },
      conditions: available(true),
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      upToDateReplicas: 3,
      versions: [{ version: 'v1.31.4', replicas: 3 }],
    };
    const events = statusTransitionEvents(kcp, undefined, next, 'demo');
    expect(events.map((e) => e.name)).toEqual([
      'control-plane.initialized',
      'control-plane.available',
      'control-plane.scaled',
    ]);
    expect(events[0]!.data).toMatchObject({
      object: { kind: 'K3sControlPlane', namespace: 'ns', name: 'demo-cp', uid: 'kcp-uid' },
      resourceVersion: '10',
      generation: 2,
      clusterName: 'demo',
      version: 'v1.31.4',
    });
    expect(events[2]!.data).toMatchObject({
      desiredReplicas: 3,
      versions: [{ version: 'v1.31.4', replicas: 3 }],
    });
    expect(statusTransitionEvents(kcp, next, { ...next }, 'demo')).toEqual([]);
  });

  it('announces nothing for a status that only moves away from them', () => {
    const previous: K3sControlPlaneStatus = {
      initialization: { controlPlaneInitialized: true },
      conditions: available(true),
      replicas: 3,
      readyReplicas: 3,
    };
    const next = { ...previous, conditions: available(false), readyReplicas: 2 };
    expect(statusTransitionEvents(kcp, previous, next, 'demo')).toEqual([]);
    expect(statusTransitionEvents(kcp, next, previous, 'demo').map((e) => e.name)).toEqual([
      'control-plane.available',
      'control-plane.scaled',
    ]);
  });
});

describe('writeControlPlaneStatus', () => {
  it('writes first, then announces with the version written, and records the first answer', async () => {
    const test = new TestScope(testKcp());
    await writeControlPlaneStatus(test.kit, inputs(), t0, test.record);
    expect(test.written).toHaveLength(1);
    expect(test.written[0]!.status).toMatchObject({
      replicas: 3,
      initialization: { controlPlaneInitialized: true },
    });
    expect(test.announced.map((e) => [e.name, e.data.resourceVersion])).toEqual([
      ['control-plane.initialized', '11'],
      ['control-plane.available', '11'],
      ['control-plane.scaled', '11'],
    ]);
    expect(test.recorded).toEqual(['Initialized: The workload API server answers']);
  });

  it('keeps the conditions the kit set on the object, and announces nothing again once converged', async () => {
    const test = new TestScope(testKcp());
    await writeControlPlaneStatus(test.kit, inputs(), t0, test.record);
    const converged = new TestScope(test.written[0]!);
    converged.kit.obj.status!.conditions = setCondition(
      converged.kit.obj.status!.conditions,
      { type: 'Paused', status: 'False', reason: 'NotPaused' },
      t0,
    );
    await writeControlPlaneStatus(converged.kit, inputs(), t0, converged.record);
    expect(getCondition(converged.kit.obj.status?.conditions, 'Paused')).toMatchObject({ status: 'False' });
    expect(converged.announced).toEqual([]);
    expect(converged.recorded).toEqual([]);
  });
});
