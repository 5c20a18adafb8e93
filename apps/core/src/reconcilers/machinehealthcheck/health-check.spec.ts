import type { Cluster } from '@capstan/api';
import type { V1Node } from '@kubernetes/client-node';
import { iso, machine, NOW, running } from '../../testing/machine-builder.js';
import { evaluateTarget, goDuration, skipsHealthCheck } from './health-check.js';

const readyCluster = {
  status: {
    conditions: [
      {
        type: 'ControlPlaneInitialized',
        status: 'True',
        reason: 'Initialized',
        message: '',
        lastTransitionTime: iso(7200),
      },
      {
        type: 'InfrastructureReady',
        status: 'True',
        reason: 'Ready',
        message: '',
        lastTransitionTime: iso(7200),
      },
    ],
  },
} as Cluster;

const node = (conditions: { type: string; status: string; secondsAgo: number }[]): V1Node => ({
  metadata: { name: 'n' },
  status: {
    conditions: conditions.map((c) => ({
      type: c.type,
      status: c.status,
      lastTransitionTime: iso(c.secondsAgo) as unknown as Date,
    })),
  },
});

const checks = {
  nodeStartupTimeoutSeconds: 600,
  unhealthyNodeConditions: [
    { type: 'Ready', status: 'False' as const, timeoutSeconds: 300 },
    { type: 'Ready', status: 'Unknown' as const, timeoutSeconds: 300 },
  ],
};

describe('health check of one Machine', () => {
  it('is healthy with a Node whose conditions are fine', () => {
    const verdict = evaluateTarget(
      {
        machine: running('m'),
        node: node([{ type: 'Ready', status: 'True', secondsAgo: 10 }]),
        nodeMissing: false,
        nodesKnown: true,
      },
      checks,
      readyCluster,
      NOW,
    );
    expect(verdict).toEqual({ state: 'healthy' });
  });

  it('is unhealthy once a Node condition held past its timeout, and pending (with the time left) before', () => {
    const target = (secondsAgo: number) => ({
      machine: running('m'),
      node: node([{ type: 'Ready', status: 'False', secondsAgo }]),
      nodeMissing: false,
      nodesKnown: true,
    });
    expect(evaluateTarget(target(301), checks, readyCluster, NOW)).toEqual({
      state: 'unhealthy',
      reason: 'UnhealthyNode',
      message: 'Health check failed: Condition Ready on Node is reporting status False for more than 5m0s',
    });
    expect(evaluateTarget(target(200), checks, readyCluster, NOW)).toEqual({
      state: 'pending',
      nextCheckMs: 101_000,
    });
  });

  it('is unhealthy without a Node past the startup timeout, counted from the latest start', () => {
    const starting = (createdSecondsAgo: number) => ({
      machine: machine({ name: 'm', createdSecondsAgo }),
      nodeMissing: false,
      nodesKnown: true,
    });
    expect(evaluateTarget(starting(601), checks, readyCluster, NOW)).toMatchObject({
      state: 'unhealthy',
      reason: 'NodeStartupTimeout',
      message: 'Health check failed: Node failed to report startup in 10m0s',
    });
    expect(evaluateTarget(starting(60), checks, readyCluster, NOW)).toEqual({
      state: 'pending',
      nextCheckMs: 541_000,
    });
    // Infrastructure ready later than creation: the timeout runs from then.
    const provisionedLate = machine({
      name: 'm',
      createdSecondsAgo: 3000,
      conditions: { InfrastructureReady: 'True' },
      transitionSecondsAgo: 100,
    });
    expect(
      evaluateTarget(
        { machine: provisionedLate, nodeMissing: false, nodesKnown: true },
        checks,
        readyCluster,
        NOW,
      ).state,
    ).toBe('pending');
    expect(evaluateTarget(starting(10_000), { nodeStartupTimeoutSeconds: 0 }, readyCluster, NOW)).toEqual({
      state: 'pending',
    });
  });

  it('is unhealthy when its Node was deleted or the remediate-machine annotation is set', () => {
    expect(
      evaluateTarget(
        { machine: running('m'), nodeMissing: true, nodesKnown: true },
        checks,
        readyCluster,
        NOW,
      ),
    ).toMatchObject({
      reason: 'NodeDeleted',
      message: 'Health check failed: Node node-m has been deleted',
    });
    const annotated = running('m', { annotations: { 'cluster.x-k8s.io/remediate-machine': '' } });
    expect(
      evaluateTarget({ machine: annotated, nodeMissing: false, nodesKnown: true }, checks, readyCluster, NOW),
    ).toMatchObject({
      state: 'unhealthy',
      reason: 'HasRemediateAnnotation',
    });
  });

  it('judges no worker before the control plane is initialized', () => {
    const cluster = { status: { conditions: [] } } as unknown as Cluster;
    expect(
      evaluateTarget(
        { machine: machine({ name: 'm', createdSecondsAgo: 9999 }), nodeMissing: false, nodesKnown: true },
        checks,
        cluster,
        NOW,
      ),
    ).toEqual({
      state: 'pending',
    });
  });

  it('judges Machines by their own conditions too', () => {
    const verdict = evaluateTarget(
      {
        machine: running('m', { conditions: { BootstrapConfigReady: 'False' }, transitionSecondsAgo: 120 }),
        node: node([]),
        nodeMissing: false,
        nodesKnown: true,
      },
      { unhealthyMachineConditions: [{ type: 'BootstrapConfigReady', status: 'False', timeoutSeconds: 60 }] },
      readyCluster,
      NOW,
    );
    expect(verdict).toMatchObject({ state: 'unhealthy', reason: 'UnhealthyMachine' });
  });

  it('skips Machines being updated in place (their restart is on purpose)', () => {
    const updating = running('m', { annotations: { 'in-place.capstan.dev/update-in-progress': '5d1c0a9e2f' } });
    expect(skipsHealthCheck(updating)).toBe(true);
  });

  it('skips Machines with skip-remediation or paused annotations', () => {
    expect(skipsHealthCheck(running('m', { annotations: { 'cluster.x-k8s.io/skip-remediation': '' } }))).toBe(
      true,
    );
    expect(skipsHealthCheck(running('m', { annotations: { 'cluster.x-k8s.io/paused': '' } }))).toBe(true);
    expect(skipsHealthCheck(running('m'))).toBe(false);
  });

  it('formats durations as Go does', () => {
    expect([goDuration(30), goDuration(300), goDuration(3725)]).toEqual(['30s', '5m0s', '1h2m5s']);
  });
});
