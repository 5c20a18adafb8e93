import { canSafelyRemove, quorum, type ControlPlaneMachine } from './control-plane-machine.js';
import { planControlPlane, type PlanInput } from './planner.js';
import { remediationPolicy } from './remediation.js';
import { testMachine } from './testing.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
let seq = 0;

/** Machines are created one second apart, in the order the test names them (oldest first). */
function machine(name: string, overrides: Partial<ControlPlaneMachine> = {}): ControlPlaneMachine {
  seq += 1;
  return testMachine(name, { createdAt: NOW - 3_600_000 + seq * 1000, ...overrides });
}

function plan(overrides: Partial<PlanInput>) {
  return planControlPlane({
    desiredReplicas: 3,
    initialized: true,
    maxSurge: 1,
    machines: [],
    failureDomains: [],
    remediation: remediationPolicy(),
    now: NOW,
    ...overrides,
  });
}

const three = () => [machine('a'), machine('b'), machine('c')];

describe('quorum', () => {
  it('is the smallest majority', () => {
    expect([1, 2, 3, 4, 5].map(quorum)).toEqual([1, 2, 2, 3, 3]);
  });

  it('never allows removing the last machine or a member whose loss leaves an unhealthy majority', () => {
    expect(canSafelyRemove([machine('a')], 'a', 1)).toBe(false);
    expect(canSafelyRemove(three(), 'a', 3)).toBe(true);
    expect(canSafelyRemove([machine('a'), machine('b', { ready: false }), machine('c')], 'a', 3)).toBe(false);
    // Five members, two unhealthy: removing a healthy one leaves 2 healthy of 4, no quorum.
    const five = [
      machine('a'),
      machine('b'),
      machine('c'),
      machine('d', { ready: false }),
      machine('e', { ready: false }),
    ];
    expect(canSafelyRemove(five, 'a', 3)).toBe(false);
    expect(canSafelyRemove(five, 'd', 3)).toBe(true);
  });
});

describe('planControlPlane: initialization and scale up', () => {
  it('creates the init machine first and waits for the control plane before any other', () => {
    expect(plan({ initialized: false }).action).toEqual({
      type: 'create',
      reason: 'initialize',
      initServer: true,
    });
    expect(plan({ initialized: false, machines: [machine('a')] }).action).toMatchObject({
      type: 'wait',
      message: 'Waiting for the control plane to be initialized',
    });
  });

  it('adds one machine at a time, only while every machine is Ready', () => {
    expect(plan({ machines: [machine('a')] }).action).toEqual({
      type: 'create',
      reason: 'scale-up',
      initServer: false,
    });
    expect(plan({ machines: [machine('a'), machine('b', { ready: false })] }).action).toEqual({
      type: 'wait',
      message: 'Waiting for machine(s) b to be Ready before adding one',
    });
    expect(plan({ machines: three() }).action).toEqual({ type: 'none' });
  });

  it('places a new machine in the failure domain with the fewest machines', () => {
    const machines = [machine('a', { failureDomain: 'fd1' }), machine('b', { failureDomain: 'fd2' })];
    expect(plan({ machines, failureDomains: ['fd1', 'fd2', 'fd3'] }).action).toMatchObject({
      failureDomain: 'fd3',
    });
    expect(plan({ machines, failureDomains: ['fd2', 'fd1'] }).action).toMatchObject({ failureDomain: 'fd1' });
  });

  it('waits for a machine being deleted before anything else', () => {
    expect(plan({ machines: [machine('a'), machine('b', { deleting: true })] }).action).toEqual({
      type: 'wait',
      message: 'Waiting for machine(s) b to be deleted',
    });
  });
});

describe('planControlPlane: scale down', () => {
  it('deletes one machine at a time: marked, then unhealthy, then out of date, then the oldest', () => {
    const five = () => [machine('a'), machine('b'), machine('c'), machine('d'), machine('e')];
    expect(plan({ machines: five() }).action).toEqual({ type: 'delete', reason: 'scale-down', machine: 'a' });
    const marked = five();
    marked[3]!.deleteRequested = true;
    expect(plan({ machines: marked }).action).toMatchObject({ machine: 'd' });
    const outdated = five();
    outdated[4]!.upToDate = false;
    // Out-of-date machines are a rollout: the extra replica goes first, and it is the outdated one.
    expect(plan({ machines: outdated }).action).toEqual({ type: 'delete', reason: 'rollout', machine: 'e' });
  });

  it('removes an unready machine first and never a healthy one that would break quorum', () => {
    const machines = [machine('a'), machine('b'), machine('c'), machine('d', { ready: false })];
    expect(plan({ machines }).action).toEqual({ type: 'delete', reason: 'scale-down', machine: 'd' });
    const twoDown = [
      machine('a'),
      machine('b'),
      machine('c'),
      machine('d', { ready: false }),
      machine('e', { ready: false }),
    ];
    expect(plan({ machines: twoDown }).action).toMatchObject({ type: 'wait' });
  });

  it('deletes from the failure domain holding the most machines', () => {
    const machines = [
      machine('a', { failureDomain: 'fd1' }),
      machine('b', { failureDomain: 'fd2' }),
      machine('c', { failureDomain: 'fd2' }),
      machine('d', { failureDomain: 'fd3' }),
    ];
    expect(plan({ machines, failureDomains: ['fd1', 'fd2', 'fd3'] }).action).toMatchObject({ machine: 'b' });
  });
});

describe('planControlPlane: rollout', () => {
  const outdated = (name: string, extra: Partial<ControlPlaneMachine> = {}) =>
    machine(name, { upToDate: false, outdatedReasons: ['version v1.31.4 -> v1.32.0'], ...extra });

  it('surges one new machine, waits for it, deletes one old machine, and repeats', () => {
    const old = [outdated('a'), outdated('b'), outdated('c')];
    expect(plan({ machines: old }).action).toEqual({ type: 'create', reason: 'rollout', initServer: false });
    const surged = [...old, machine('n1', { ready: false })];
    expect(plan({ machines: surged }).action).toMatchObject({ type: 'wait' });
    surged[3]!.ready = true;
    expect(plan({ machines: surged }).action).toEqual({ type: 'delete', reason: 'rollout', machine: 'a' });
    const next = [outdated('b'), outdated('c'), machine('n1')];
    expect(plan({ machines: next }).action).toEqual({ type: 'create', reason: 'rollout', initServer: false });
    const last = [outdated('c'), machine('n1'), machine('n2'), machine('n3')];
    expect(plan({ machines: last }).action).toEqual({ type: 'delete', reason: 'rollout', machine: 'c' });
  });

  it('with maxSurge 0 deletes first when quorum allows, and surges a control plane too small for that', () => {
    const old = [outdated('a'), outdated('b'), outdated('c')];
    expect(plan({ machines: old, maxSurge: 0 }).action).toEqual({
      type: 'delete',
      reason: 'rollout',
      machine: 'a',
    });
    expect(plan({ machines: [outdated('b'), outdated('c')], maxSurge: 0 }).action).toMatchObject({
      type: 'create',
    });
    expect(plan({ machines: [outdated('a')], desiredReplicas: 1, maxSurge: 0 }).action).toEqual({
      type: 'create',
      reason: 'rollout',
      initServer: false,
    });
  });

  it('rolls out a single-machine control plane by surging, never deleting the only member first', () => {
    expect(plan({ machines: [outdated('a')], desiredReplicas: 1 }).action).toMatchObject({ type: 'create' });
    expect(plan({ machines: [outdated('a'), machine('n1')], desiredReplicas: 1 }).action).toEqual({
      type: 'delete',
      reason: 'rollout',
      machine: 'a',
    });
  });
});

describe('planControlPlane: remediation', () => {
  it('remediates an unhealthy machine when the others keep quorum, one at a time', () => {
    const machines = [machine('a'), machine('b', { needsRemediation: true, ready: false }), machine('c')];
    expect(plan({ machines }).action).toEqual({ type: 'remediate', machine: 'b', retryCount: 0 });
    expect(plan({ machines: [...machines, machine('d', { deleting: true })] }).action).toMatchObject({
      type: 'wait',
    });
  });

  it('does not remediate when that would lose quorum or the machine is the only one', () => {
    const two = [machine('a', { needsRemediation: true }), machine('b', { ready: false }), machine('c')];
    const blocked = plan({ machines: two });
    expect(blocked.remediationBlocked).toBe(
      'Machine a cannot be remediated: removing it would lose etcd quorum',
    );
    expect(blocked.action).toEqual({ type: 'none' });
    expect(
      plan({ machines: [machine('a', { needsRemediation: true })], desiredReplicas: 1 }).remediationBlocked,
    ).toBe('Machine a cannot be remediated: it is the only control plane machine');
  });

  it('replaces a machine that failed to initialize the cluster', () => {
    expect(
      plan({ initialized: false, machines: [machine('a', { needsRemediation: true, hasNode: false })] })
        .action,
    ).toEqual({
      type: 'remediate',
      machine: 'a',
      retryCount: 0,
    });
  });

  it('counts retries of replacements, defers them by retryPeriod and stops after maxRetry', () => {
    const previous = { machine: 'old', time: new Date(NOW - 60_000).toISOString(), retryCount: 1 };
    const machines = () => [
      machine('a'),
      machine('b', { needsRemediation: true, remediationFor: previous }),
      machine('c'),
    ];
    const policy = remediationPolicy({ maxRetry: 3, retryPeriodSeconds: 300 });
    const deferred = plan({ machines: machines(), remediation: policy });
    expect(deferred.action).toEqual({
      type: 'wait',
      message: expect.stringContaining('remediated again after retryPeriodSeconds'),
      retryAt: NOW - 60_000 + 300_000,
    });
    expect(plan({ machines: machines(), remediation: remediationPolicy({ maxRetry: 3 }) }).action).toEqual({
      type: 'remediate',
      machine: 'b',
      retryCount: 2,
    });
    const exhausted = plan({ machines: machines(), remediation: remediationPolicy({ maxRetry: 1 }) });
    expect(exhausted.action.type).not.toBe('remediate');
    expect(exhausted.remediationBlocked).toContain('maxRetry 1');
    // A failure long after the previous remediation is not a retry.
    const later = remediationPolicy({ maxRetry: 1, minHealthyPeriodSeconds: 30 });
    expect(plan({ machines: machines(), remediation: later }).action).toEqual({
      type: 'remediate',
      machine: 'b',
      retryCount: 0,
    });
  });
});

describe('planControlPlane in place', () => {
  const outdated = { upToDate: false, outdatedReasons: ['version v1.34.4 -> v1.35.4'] };
  const apply = { kind: 'apply' } as const;

  it('updates the oldest out-of-date machine in place instead of surging a new one', () => {
    const machines = [machine('a', outdated), machine('b', outdated), machine('c', outdated)];
    expect(plan({ machines, inPlace: apply }).action).toEqual({ type: 'update', machine: 'a' });
    expect(plan({ machines }).action).toMatchObject({ type: 'create', reason: 'rollout' });
  });

  it('updates one machine at a time, and halts at a failed update', () => {
    const machines = [machine('a', { ...outdated, updating: 'h1' }), machine('b', outdated), machine('c', outdated)];
    expect(plan({ machines, inPlace: apply }).action).toMatchObject({
      type: 'wait',
      message: expect.stringContaining('in-place update of machine(s) a'),
    });
    machines[0] = { ...machines[0]!, updateFailed: 'instruction install exited 1' };
    expect(plan({ machines, inPlace: apply }).action).toMatchObject({
      type: 'wait',
      message: expect.stringMatching(/halted.*machine a failed: instruction install exited 1/),
    });
  });

  it('updates a machine again whose update failed for an earlier spec, before any other', () => {
    const failedEarlier = { ...outdated, updating: 'old', updateFailed: 'install exited 1', updateStale: true, ready: false };
    const machines = [machine('a', failedEarlier), machine('b', outdated), machine('c', outdated)];
    expect(plan({ machines, inPlace: apply }).action).toEqual({ type: 'update', machine: 'a' });
    // Not the oldest: still first, or the rollout would wait for it to be Ready before updating the oldest.
    const later = [machine('d', outdated), machine('e', failedEarlier), machine('f', outdated)];
    expect(plan({ machines: later, inPlace: apply }).action).toEqual({ type: 'update', machine: 'e' });
  });

  it('updates in place only machines the bootstrap provider said yes for, each asked about on its own', () => {
    const machines = [machine('a', outdated), machine('b', outdated), machine('c', outdated)];
    expect(plan({ machines, inPlace: { kind: 'apply', machines: ['c'] } }).action).toEqual({ type: 'update', machine: 'c' });
  });

  it('never updates while etcd would lose quorum or another machine is not Ready', () => {
    const machines = [machine('a', outdated), machine('b', { ready: false }), machine('c')];
    expect(plan({ machines, inPlace: apply }).action).toMatchObject({ type: 'wait', message: expect.stringContaining('b to be Ready') });
  });

  it('updates a single control plane machine (nothing else could keep the API up)', () => {
    expect(plan({ desiredReplicas: 1, machines: [machine('a', outdated)], inPlace: apply }).action).toEqual({
      type: 'update',
      machine: 'a',
    });
  });

  it('waits, replacing nothing, when Required is blocked or the bootstrap provider has not answered', () => {
    const machines = [machine('a', outdated), machine('b', outdated), machine('c', outdated)];
    const reason = 'Cannot update the control plane in place (spec.machineTemplate.spec.infrastructureRef): never';
    expect(plan({ machines, inPlace: { kind: 'blocked', reason } }).action).toEqual({ type: 'wait', message: reason });
    expect(plan({ machines, inPlace: { kind: 'waiting', reason: 'no answer' } }).action).toEqual({
      type: 'wait',
      message: 'no answer',
    });
  });
});
