import { getCondition, setCondition } from '@capstan/api';
import { deepEqual } from '@capstan/kube';
import type { ControlPlaneMachine } from './control-plane-machine.js';
import { testMachine } from './testing.js';
import { desiredControlPlaneStatus, machineSelector, type StatusInputs } from './control-plane-status.js';

const t0 = new Date('2026-01-01T00:00:00Z');

const machine = (name: string, overrides: Partial<ControlPlaneMachine> = {}) =>
  testMachine(name, { version: 'v1.31.4', ...overrides });

const inputs = (overrides: Partial<StatusInputs>): StatusInputs => ({
  clusterName: 'demo',
  desiredReplicas: 3,
  generation: 4,
  machines: [],
  initialized: true,
  certificates: { available: true },
  deleting: false,
  ...overrides,
});

describe('desiredControlPlaneStatus', () => {
  it('counts machines by their conditions and lists versions oldest first', () => {
    const status = desiredControlPlaneStatus(
      undefined,
      inputs({
        machines: [
          machine('a', { version: 'v1.32.0' }),
          machine('b', { ready: false, available: false }),
          machine('c', { upToDate: false, outdatedReasons: ['version v1.31.4 -> v1.32.0'] }),
        ],
      }),
      t0,
    );
    expect(status).toMatchObject({
      selector: 'cluster.x-k8s.io/cluster-name=demo,cluster.x-k8s.io/control-plane',
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 2,
      version: 'v1.31.4',
      versions: [
        { version: 'v1.31.4', replicas: 2 },
        { version: 'v1.32.0', replicas: 1 },
      ],
      initialization: { controlPlaneInitialized: true },
      observedGeneration: 4,
    });
    expect(getCondition(status.conditions, 'RollingOut')).toMatchObject({
      status: 'True',
      message: 'Rolling out 1 not up-to-date replica(s)\n* version v1.31.4 -> v1.32.0',
    });
    expect(getCondition(status.conditions, 'MachinesReady')).toMatchObject({
      status: 'False',
      message: 'Machine(s) not Ready: b',
    });
    expect(machineSelector('x')).toBe('cluster.x-k8s.io/cluster-name=x,cluster.x-k8s.io/control-plane');
  });

  it('names Machines by name, whatever order the cache lists them in', () => {
    const notReady = (names: string[]) =>
      getCondition(
        desiredControlPlaneStatus(undefined, inputs({ machines: names.map((n) => machine(n, { ready: false })) }), t0).conditions,
        'MachinesReady',
      )?.message;
    expect(notReady(['c', 'a', 'b'])).toBe('Machine(s) not Ready: a, b, c');
    expect(notReady(['b', 'c', 'a'])).toBe('Machine(s) not Ready: a, b, c');
  });

  it('is Available while a majority of the members is healthy, and only once initialized', () => {
    const available = (machines: ControlPlaneMachine[], initialized = true) =>
      getCondition(
        desiredControlPlaneStatus(undefined, inputs({ machines, initialized }), t0).conditions,
        'Available',
      )?.status;
    expect(available([machine('a')])).toBe('True');
    expect(available([machine('a')], false)).toBe('False');
    // A machine still provisioning (no Node) is not an etcd member yet.
    expect(available([machine('a'), machine('b', { hasNode: false, ready: false })])).toBe('True');
    expect(available([machine('a'), machine('b', { ready: false }), machine('c', { ready: false })])).toBe(
      'False',
    );
    expect(available([machine('a'), machine('b'), machine('c', { needsRemediation: true })])).toBe('True');
  });

  it('says what scaling waits for, and which machine remediation cannot touch', () => {
    const status = desiredControlPlaneStatus(
      undefined,
      inputs({
        machines: [machine('a', { needsRemediation: true })],
        plan: {
          action: { type: 'wait', message: 'Waiting for machine(s) a to be Ready before adding one' },
          remediationBlocked: 'Machine a cannot be remediated: it is the only control plane machine',
        },
      }),
      t0,
    );
    expect(getCondition(status.conditions, 'ScalingUp')).toMatchObject({
      status: 'True',
      reason: 'ScalingUp',
      message: 'Scaling up from 1 to 3 replicas\n* Waiting for machine(s) a to be Ready before adding one',
    });
    expect(getCondition(status.conditions, 'ScalingDown')).toMatchObject({
      status: 'False',
      reason: 'NotScalingDown',
    });
    expect(getCondition(status.conditions, 'Remediating')).toMatchObject({
      status: 'True',
      message:
        'Machine(s) flagged for remediation: a\n* Machine a cannot be remediated: it is the only control plane machine',
    });
  });

  it('never takes initialization back, keeps the conditions of other owners, and is stable when converged', () => {
    const first = desiredControlPlaneStatus(undefined, inputs({ machines: [machine('a')] }), t0);
    const later = desiredControlPlaneStatus(
      first,
      inputs({ machines: [machine('a')], initialized: false }),
      new Date('2026-01-02T00:00:00Z'),
    );
    expect(later.initialization).toEqual({ controlPlaneInitialized: true });
    // Equal as the patch helper compares: a converged control plane is not written again.
    expect(deepEqual(first, desiredControlPlaneStatus(first, inputs({ machines: [machine('a')] }), t0))).toBe(
      true,
    );
    // Paused is the reconciler kit's: kept as it is.
    const paused = setCondition(first.conditions, { type: 'Paused', status: 'True', reason: 'Paused' }, t0);
    const next = desiredControlPlaneStatus(
      { ...first, conditions: paused },
      inputs({ machines: [machine('a')] }),
      t0,
    );
    expect(getCondition(next.conditions, 'Paused')).toMatchObject({ status: 'True', reason: 'Paused' });
    expect(deepEqual(first, next)).toBe(false);
  });

  it('says why a Required in-place rollout is blocked on RollingOut, and what a rollout waits for', () => {
    const outdated = { upToDate: false, outdatedReasons: ['machine template or K3s config changed'] };
    const blocked = desiredControlPlaneStatus(
      undefined,
      inputs({
        machines: [machine('a', outdated), machine('b', outdated), machine('c', outdated)],
        plan: {
          action: { type: 'wait', message: 'Cannot update the control plane in place (spec.machineTemplate.spec.infrastructureRef): never' },
          inPlaceBlocked: 'Cannot update the control plane in place (spec.machineTemplate.spec.infrastructureRef): never',
        },
      }),
      t0,
    );
    expect(getCondition(blocked.conditions, 'RollingOut')).toMatchObject({
      status: 'True',
      reason: 'InPlaceUpdateBlocked',
      message: expect.stringContaining('spec.machineTemplate.spec.infrastructureRef'),
    });
    const waiting = desiredControlPlaneStatus(
      undefined,
      inputs({
        machines: [machine('a', { ...outdated, updating: 'h' }), machine('b', outdated), machine('c', outdated)],
        plan: { action: { type: 'wait', message: 'Waiting for the in-place update of machine(s) a' } },
      }),
      t0,
    );
    expect(getCondition(waiting.conditions, 'RollingOut')?.message).toContain('* Waiting for the in-place update of machine(s) a');
  });
});
