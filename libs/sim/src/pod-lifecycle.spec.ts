import type { V1Pod } from '@kubernetes/client-node';
import { nextPodStep, SIM_POD_ANNOTATIONS, type PodStep, type SimPodStatus } from './pod-lifecycle.js';

const T0 = new Date('2026-11-24T10:00:00.000Z');
const after = (ms: number) => new Date(T0.getTime() + ms);
const ctx = (now: Date) => ({ now, nodeIP: '127.1.0.7', podIP: '10.42.1.2' });
const noNetwork = (now: Date) => ({ now, nodeIP: '127.1.0.7', podIP: undefined });

function pod(spec: Partial<NonNullable<V1Pod['spec']>> = {}, annotations: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name: 'web-1', namespace: 'default', uid: 'u1', resourceVersion: '1', annotations },
    spec: { nodeName: 'node-a', containers: [{ name: 'web', image: 'nginx' }], ...spec },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] },
  };
}

/** The pod as the API server returns it after the step's status was written. */
function written(before: V1Pod, step: PodStep): V1Pod {
  if (step.kind !== 'status') throw new Error(`expected a status write, got ${step.kind}`);
  return { ...before, status: JSON.parse(JSON.stringify(step.status)) as V1Pod['status'] };
}

function statusOf(step: PodStep): SimPodStatus {
  if (step.kind !== 'status') throw new Error(`expected a status write, got ${step.kind}`);
  return step.status;
}

const condition = (status: SimPodStatus, type: string) => status.conditions.find((c) => c.type === type)?.status;

describe('nextPodStep', () => {
  it('takes a pod from Pending through ContainerCreating to Running and Ready, keeping the scheduler condition', () => {
    const creating = nextPodStep(pod(), ctx(T0));
    const first = statusOf(creating);
    expect(first.phase).toBe('Pending');
    expect(first.containerStatuses[0]!.state?.waiting?.reason).toBe('ContainerCreating');
    expect(first).toMatchObject({ podIP: '10.42.1.2', hostIP: '127.1.0.7', startTime: T0.toISOString() });
    expect(condition(first, 'PodScheduled')).toBe('True');
    expect(condition(first, 'Ready')).toBe('False');
    expect(creating).toMatchObject({ recheckMs: 0 });

    const running = statusOf(nextPodStep(written(pod(), creating), ctx(after(10))));
    expect(running.phase).toBe('Running');
    expect(running.containerStatuses[0]).toMatchObject({ ready: true, started: true });
    expect(running.containerStatuses[0]!.state?.running).toBeDefined();
    expect(condition(running, 'Ready')).toBe('True');
    expect(condition(running, 'ContainersReady')).toBe('True');
    expect(running.podIP).toBe('10.42.1.2');
  });

  it('writes nothing more for a running, ready pod', () => {
    const creating = nextPodStep(pod(), ctx(T0));
    const runningStep = nextPodStep(written(pod(), creating), ctx(after(10)));
    expect(nextPodStep(written(pod(), runningStep), ctx(after(60_000)))).toEqual({ kind: 'none' });
  });

  it('waits for a pod IP while the node has no pod CIDR, as on a node whose network is not ready', () => {
    expect(nextPodStep(pod(), noNetwork(T0))).toEqual({ kind: 'wait', afterMs: 1000 });
    // hostNetwork pods use the node's address and do not wait.
    expect(statusOf(nextPodStep(pod({ hostNetwork: true }), noNetwork(T0))).podIP).toBe('127.1.0.7');
  });

  it('honours the start delay and the readiness probe initial delay', () => {
    const slow = pod(
      { containers: [{ name: 'web', image: 'nginx', readinessProbe: { initialDelaySeconds: 5 } }] },
      { [SIM_POD_ANNOTATIONS.startSeconds]: '2' },
    );
    const creating = nextPodStep(slow, ctx(T0));
    expect(creating).toMatchObject({ recheckMs: 2000 });
    const created = written(slow, creating);
    expect(nextPodStep(created, ctx(after(500)))).toEqual({ kind: 'wait', afterMs: 1500 });
    const notReady = nextPodStep(created, ctx(after(2000)));
    expect(statusOf(notReady).phase).toBe('Running');
    expect(condition(statusOf(notReady), 'Ready')).toBe('False');
    expect(notReady).toMatchObject({ recheckMs: 5000 });
    const ready = nextPodStep(written(slow, notReady), ctx(after(7000)));
    expect(condition(statusOf(ready), 'Ready')).toBe('True');
  });

  it('completes pods that do not restart (a Job\'s), with the exit code the annotation gives', () => {
    const job = pod({ restartPolicy: 'Never' }, { [SIM_POD_ANNOTATIONS.runSeconds]: '3' });
    const created = written(job, nextPodStep(job, ctx(T0)));
    const running = nextPodStep(created, ctx(after(1)));
    expect(statusOf(running).phase).toBe('Running');
    expect(running).toMatchObject({ recheckMs: 2999 });
    const done = statusOf(nextPodStep(written(job, running), ctx(after(3000))));
    expect(done.phase).toBe('Succeeded');
    expect(done.containerStatuses[0]!.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });

    const failing = pod({ restartPolicy: 'OnFailure' }, { [SIM_POD_ANNOTATIONS.exitCode]: '3' });
    const failed = statusOf(nextPodStep(written(failing, nextPodStep(failing, ctx(T0))), ctx(after(1))));
    expect(failed.phase).toBe('Failed');
    expect(failed.containerStatuses[0]!.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(nextPodStep({ ...failing, status: { phase: 'Failed' } }, ctx(after(10)))).toEqual({ kind: 'none' });
  });

  it('removes a deleted pod once its containers stopped, never later than its grace period', () => {
    const deleting = (graceSeconds: number, annotations: Record<string, string> = {}): V1Pod => {
      const p = pod({}, annotations);
      p.metadata!.deletionGracePeriodSeconds = graceSeconds;
      // The API server sets deletionTimestamp = time of the request + grace period.
      p.metadata!.deletionTimestamp = after(graceSeconds * 1000);
      return p;
    };
    expect(nextPodStep(deleting(30), ctx(T0))).toEqual({ kind: 'delete' });
    const slowStop = deleting(30, { [SIM_POD_ANNOTATIONS.stopSeconds]: '4' });
    expect(nextPodStep(slowStop, ctx(after(1000)))).toEqual({ kind: 'wait', afterMs: 3000 });
    expect(nextPodStep(slowStop, ctx(after(4000)))).toEqual({ kind: 'delete' });
    const capped = deleting(2, { [SIM_POD_ANNOTATIONS.stopSeconds]: '60' });
    expect(nextPodStep(capped, ctx(after(2000)))).toEqual({ kind: 'delete' });
  });

  it('reports init containers as completed before the containers start', () => {
    const withInit = pod({ initContainers: [{ name: 'migrate', image: 'tool' }] });
    const first = statusOf(nextPodStep(withInit, ctx(T0)));
    expect(first.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(condition(first, 'Initialized')).toBe('True');
  });
});
