import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';

/**
 * Annotations a pod may carry to shape its simulated life (seconds as decimal strings). Without them a pod starts
 * at once, is ready as soon as its readiness probes' initial delays allow, runs until deleted (restartPolicy
 * Always) or completes at once with exit code 0 (Never, OnFailure: a Job's pods), and stops at once when deleted.
 */
export const SIM_POD_ANNOTATIONS = {
  /** ContainerCreating lasts this long (image pull and container start). */
  startSeconds: 'sim.capstan.dev/start-seconds',
  /** Ready this long after the containers started; overrides the readiness probes' initialDelaySeconds. */
  readySeconds: 'sim.capstan.dev/ready-seconds',
  /** restartPolicy Never / OnFailure: the containers exit this long after they started. */
  runSeconds: 'sim.capstan.dev/run-seconds',
  /** ... with this exit code (0: Succeeded, else Failed). */
  exitCode: 'sim.capstan.dev/exit-code',
  /** A deleted pod's containers take this long to stop, never longer than its grace period. */
  stopSeconds: 'sim.capstan.dev/stop-seconds',
} as const;

/** What the node's kubelet does next about one pod bound to it. */
export type PodStep =
  /** Write this status (a merge patch of `status`), then look again after `recheckMs` if set. */
  | { kind: 'status'; status: SimPodStatus; recheckMs?: number }
  /** The containers stopped: delete the pod for good (grace period 0), as the kubelet does. */
  | { kind: 'delete' }
  /** Nothing to write yet; look again then. */
  | { kind: 'wait'; afterMs: number }
  /** Nothing more to do (a terminal pod, a running pod that stays as it is). */
  | { kind: 'none' };

export interface SimPodStatus {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  conditions: V1PodCondition[];
  containerStatuses: V1ContainerStatus[];
  initContainerStatuses?: V1ContainerStatus[];
  hostIP: string;
  hostIPs: { ip: string }[];
  podIP: string;
  podIPs: { ip: string }[];
  startTime: string;
}

export interface PodContext {
  now: Date;
  /** The node's InternalIP (hostIP, and the pod IP of hostNetwork pods). */
  nodeIP: string;
  /** The pod's IP from the node's pod CIDR; undefined while the node has none (pods wait, as on a node whose CNI is not ready). */
  podIP: string | undefined;
}

const NETWORK_WAIT_MS = 1000;

function seconds(pod: V1Pod, annotation: string): number | undefined {
  const raw = pod.metadata?.annotations?.[annotation];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

function at(time: string | Date | undefined): number {
  return time === undefined ? Number.NaN : new Date(time).getTime();
}

/** The pod's IP: the node's for hostNetwork pods, else one from the node's pod CIDR. */
export function podNeedsOwnIP(pod: V1Pod): boolean {
  return pod.spec?.hostNetwork !== true;
}

function withCondition(conditions: V1PodCondition[], type: string, status: boolean, now: Date, reason?: string): V1PodCondition[] {
  const value = status ? 'True' : 'False';
  const existing = conditions.find((c) => c.type === type);
  const next: V1PodCondition = {
    type,
    status: value,
    lastTransitionTime: existing?.status === value && existing.lastTransitionTime ? existing.lastTransitionTime : now,
    ...(reason !== undefined && !status && { reason }),
  };
  return [...conditions.filter((c) => c.type !== type), next];
}

function readyDelayMs(pod: V1Pod, container: V1Container): number {
  const override = seconds(pod, SIM_POD_ANNOTATIONS.readySeconds);
  if (override !== undefined) return override * 1000;
  return (container.readinessProbe?.initialDelaySeconds ?? 0) * 1000;
}

function imageOf(container: V1Container): string {
  return container.image ?? '';
}

function waiting(container: V1Container, reason: string): V1ContainerStatus {
  return {
    name: container.name,
    image: imageOf(container),
    imageID: '',
    ready: false,
    restartCount: 0,
    started: false,
    state: { waiting: { reason } },
  };
}

function running(container: V1Container, startedAt: string, ready: boolean): V1ContainerStatus {
  return {
    name: container.name,
    image: imageOf(container),
    imageID: `sim://${imageOf(container)}`,
    containerID: `sim://${container.name}`,
    ready,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: new Date(startedAt) } },
  };
}

function terminated(container: V1Container, startedAt: string, finishedAt: Date, exitCode: number): V1ContainerStatus {
  return {
    name: container.name,
    image: imageOf(container),
    imageID: `sim://${imageOf(container)}`,
    containerID: `sim://${container.name}`,
    ready: false,
    restartCount: 0,
    started: false,
    state: {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        startedAt: new Date(startedAt),
        finishedAt,
      },
    },
  };
}

/** Init containers of a pod that starts are done: they ran before its containers, instantly. */
function initStatuses(pod: V1Pod, startTime: string): V1ContainerStatus[] | undefined {
  const init = pod.spec?.initContainers ?? [];
  if (init.length === 0) return undefined;
  return init.map((c) => terminated(c, startTime, new Date(startTime), 0));
}

/**
 * The next step of a pod bound to a running sim node, kwok-style: Pending -> ContainerCreating -> Running (ready when
 * its probes allow) -> for Never/OnFailure pods Succeeded or Failed; a deleted pod is removed once its containers
 * stopped (at once by default, never later than its grace period). Pure: the caller writes what it returns.
 */
export function nextPodStep(pod: V1Pod, node: PodContext): PodStep {
  const now = node.now.getTime();
  const status = pod.status ?? {};
  if (pod.metadata?.deletionTimestamp) {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? 0;
    const requested = at(pod.metadata.deletionTimestamp) - grace * 1000;
    const stop = Math.min(seconds(pod, SIM_POD_ANNOTATIONS.stopSeconds) ?? 0, grace) * 1000;
    const due = requested + stop - now;
    return due > 0 ? { kind: 'wait', afterMs: due } : { kind: 'delete' };
  }
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return { kind: 'none' };
  const containers = pod.spec?.containers ?? [];
  const podIP = podNeedsOwnIP(pod) ? node.podIP : node.nodeIP;
  if (podIP === undefined) return { kind: 'wait', afterMs: NETWORK_WAIT_MS };
  const base = {
    hostIP: node.nodeIP,
    hostIPs: [{ ip: node.nodeIP }],
    podIP: status.podIP ?? podIP,
    podIPs: status.podIPs?.map((ip) => ({ ip: ip.ip })) ?? [{ ip: status.podIP ?? podIP }],
  };
  const conditions = status.conditions ?? [];
  const startTime = status.startTime ? new Date(status.startTime).toISOString() : undefined;
  const created = status.containerStatuses !== undefined && startTime !== undefined;

  if (!created) {
    // ContainerCreating: the pod has its sandbox and IP, the containers do not run yet.
    const started = node.now.toISOString();
    let next = withCondition(conditions, 'PodReadyToStartContainers', true, node.now);
    next = withCondition(next, 'Initialized', true, node.now);
    next = withCondition(next, 'ContainersReady', false, node.now, 'ContainersNotReady');
    next = withCondition(next, 'Ready', false, node.now, 'ContainersNotReady');
    return {
      kind: 'status',
      status: {
        phase: 'Pending',
        conditions: next,
        containerStatuses: containers.map((c) => waiting(c, 'ContainerCreating')),
        ...(initStatuses(pod, started) && { initContainerStatuses: initStatuses(pod, started) }),
        ...base,
        startTime: started,
      },
      recheckMs: (seconds(pod, SIM_POD_ANNOTATIONS.startSeconds) ?? 0) * 1000,
    };
  }

  const runsAt = at(startTime) + (seconds(pod, SIM_POD_ANNOTATIONS.startSeconds) ?? 0) * 1000;
  if (now < runsAt) return { kind: 'wait', afterMs: runsAt - now };
  const startedAt = new Date(runsAt).toISOString();
  const completes = (pod.spec?.restartPolicy ?? 'Always') !== 'Always';
  if (completes) {
    const endsAt = runsAt + (seconds(pod, SIM_POD_ANNOTATIONS.runSeconds) ?? 0) * 1000;
    if (now >= endsAt) {
      const exitCode = seconds(pod, SIM_POD_ANNOTATIONS.exitCode) ?? 0;
      const finishedAt = new Date(endsAt);
      let next = withCondition(conditions, 'ContainersReady', false, node.now, 'PodCompleted');
      next = withCondition(next, 'Ready', false, node.now, 'PodCompleted');
      return {
        kind: 'status',
        status: {
          phase: exitCode === 0 ? 'Succeeded' : 'Failed',
          conditions: next,
          containerStatuses: containers.map((c) => terminated(c, startedAt, finishedAt, exitCode)),
          ...base,
          startTime: startTime!,
        },
      };
    }
  }
  const readyAt = containers.map((c) => runsAt + readyDelayMs(pod, c));
  const ready = readyAt.map((t) => now >= t);
  const allReady = ready.every(Boolean);
  const nextChange = Math.min(
    ...readyAt.filter((t) => t > now),
    ...(completes ? [runsAt + (seconds(pod, SIM_POD_ANNOTATIONS.runSeconds) ?? 0) * 1000] : []),
  );
  const recheckMs = Number.isFinite(nextChange) ? Math.max(0, nextChange - now) : undefined;
  const current = status.containerStatuses ?? [];
  const upToDate =
    status.phase === 'Running' &&
    current.length === containers.length &&
    containers.every((c, i) => {
      const s = current.find((cs) => cs.name === c.name);
      return s?.state?.running !== undefined && s.ready === ready[i];
    }) &&
    conditions.find((c) => c.type === 'Ready')?.status === (allReady ? 'True' : 'False');
  if (upToDate) return recheckMs === undefined ? { kind: 'none' } : { kind: 'wait', afterMs: recheckMs };
  let next = withCondition(conditions, 'ContainersReady', allReady, node.now, 'ContainersNotReady');
  next = withCondition(next, 'Ready', allReady, node.now, 'ContainersNotReady');
  return {
    kind: 'status',
    status: {
      phase: 'Running',
      conditions: next,
      containerStatuses: containers.map((c, i) => running(c, startedAt, ready[i]!)),
      ...base,
      startTime: startTime!,
    },
    ...(recheckMs !== undefined && { recheckMs }),
  };
}
