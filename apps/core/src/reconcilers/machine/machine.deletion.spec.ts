import { type V1Node, type V1Pod } from '@kubernetes/client-node';
import { ConditionReason, type Cluster, type Machine } from '@capstan/api';
import { KubeApiError, type KubeClient } from '@capstan/kube';
import { pino } from 'pino';
import { type ExternalObjects } from '../../external/external-objects.js';
import { type WorkloadClusterAccess } from '../../remote/workload-clusters.js';
import { iso, machine as buildMachine, NOW } from '../../testing/machine-builder.js';
import {
  DRAIN_FIRST_RETRY_MS,
  DRAIN_RETRY_MS,
  drainRetryAfter,
  nextMachineDeletionStep,
} from './machine.deletion.js';

// How soon a drain with pods left looks again. Nothing wakes a Machine when its Node's evicted pods go (the core
// watches workload Nodes, not Pods), so the wait is a backoff: a drain whose pods go within a second ends a second
// after it started, not after a fixed 5 s.

const log = pino({ level: 'silent' });
const now = new Date(NOW);
const cluster = { metadata: { namespace: 'ns', name: 'demo' }, spec: {} } as Cluster;
const node: V1Node = { metadata: { name: 'node-w1', resourceVersion: '1' }, spec: { unschedulable: true } };

/** A workload cluster whose node holds `pods`, each evicted (gone) when asked, or refused by a budget. */
function workload(pods: V1Pod[], refuse = false): { access: WorkloadClusterAccess; evictions: string[] } {
  const evictions: string[] = [];
  const client = {
    resource: () => ({ listAll: () => Promise.resolve({ items: pods }), delete: () => Promise.resolve({}) }),
    request: ({ path }: { path: string }) => {
      evictions.push(path);
      const tooMany = new KubeApiError('POST', path, { reason: 'TooManyRequests' }, 429);
      return refuse ? Promise.reject(tooMany) : Promise.resolve({});
    },
  } as unknown as KubeClient;
  return { access: { namespace: 'ns', cluster: 'demo', client } as WorkloadClusterAccess, evictions };
}

const pod = (name: string): V1Pod => ({
  metadata: { namespace: 'default', name },
  spec: { nodeName: 'node-w1', containers: [] },
});

function deletingMachine(drainStartedSecondsAgo?: number, drainTimeoutSeconds?: number): Machine {
  const m = buildMachine({ name: 'w1', nodeRef: 'node-w1', deleting: true });
  if (drainTimeoutSeconds !== undefined) m.spec.deletion = { nodeDrainTimeoutSeconds: drainTimeoutSeconds };
  if (drainStartedSecondsAgo !== undefined)
    m.status = { ...m.status, deletion: { nodeDrainStartTime: iso(drainStartedSecondsAgo) } };
  return m;
}

function step(m: Machine, access: WorkloadClusterAccess) {
  return nextMachineDeletionStep(
    {
      machine: m,
      cluster,
      node: { observation: { state: 'found', node }, access },
      activeControlPlaneMachines: 1,
    },
    { external: {} as ExternalObjects, log, now },
  );
}

describe('draining a deleting Machine: how soon a pass runs again', () => {
  it('looks again after a second when the first pass evicted pods: they usually go as fast', async () => {
    const { access, evictions } = workload([pod('web-1'), pod('web-2')]);
    const result = await step(deletingMachine(), access);
    expect(evictions).toHaveLength(2);
    expect(result).toMatchObject({ reason: ConditionReason.DrainingNode, done: false });
    expect(result.deletion?.nodeDrainStartTime).toBe(iso(0));
    expect(result.requeueAfter).toBe(DRAIN_FIRST_RETRY_MS);
  });

  it('backs off as the drain goes on (a budget refusing evictions), up to every 5 s', async () => {
    const { access } = workload([pod('web-1')], true);
    const waits = [];
    for (const secondsAgo of [1, 2, 4, 60])
      waits.push((await step(deletingMachine(secondsAgo), access)).requeueAfter);
    expect(waits).toEqual([1_000, 2_000, 4_000, DRAIN_RETRY_MS]);
    const blocked = await step(deletingMachine(60), access);
    expect(blocked.message).toContain('disruption budget');
  });

  it('looks again within a second after nodeDrainTimeoutSeconds, to give up on time', async () => {
    const { access } = workload([pod('web-1')], true);
    const result = await step(deletingMachine(8, 10), access);
    expect(result.requeueAfter).toBe(3_000);
    // Past the timeout the drain is given up: the deletion goes on.
    const { access: again } = workload([pod('web-1')], true);
    const after = await step(deletingMachine(11, 10), again);
    expect(after.reason).not.toBe(ConditionReason.DrainingNode);
  });

  it.each([
    [0, 0, 1_000],
    [0.5, 0, 1_000],
    [3, 0, 3_000],
    [30, 0, 5_000],
    [9.95, 10, 1_050],
    [30, 10, 100],
  ])('drainRetryAfter(%s s into the drain, timeout %s s) = %s ms', (seconds, timeout, expected) => {
    const start = new Date(NOW - seconds * 1000).toISOString();
    expect(drainRetryAfter(start, now, timeout)).toBeCloseTo(expected, 6);
  });
});
