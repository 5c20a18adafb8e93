import { type KubeConfig } from '@kubernetes/client-node';
import { condition, type ClusterObjects } from '@capstan/describe';
import { fetchClusterObjects } from '../describe/fetch.js';

export interface ClusterProgress {
  phase: string;
  machines: { total: number; running: number };
  available: boolean;
  /** The most telling unmet condition, e.g. `ControlPlaneAvailable: WaitingForControlPlaneInitialized`. */
  waitingFor?: string;
}

const PROGRESS_CONDITIONS = ['InfrastructureReady', 'ControlPlaneInitialized', 'ControlPlaneAvailable', 'WorkersAvailable', 'Available'];

export function progressOf(objects: ClusterObjects): ClusterProgress {
  const cluster = objects.cluster;
  const unmet = PROGRESS_CONDITIONS.map((type) => condition(cluster, type)).find((c) => c && c.status !== 'True');
  return {
    phase: String((cluster.status as { phase?: string } | undefined)?.phase ?? 'Pending'),
    machines: {
      total: objects.machines.length,
      running: objects.machines.filter((m) => (m.status as { phase?: string } | undefined)?.phase === 'Running').length,
    },
    available: condition(cluster, 'Available')?.status === 'True',
    waitingFor: unmet ? `${unmet.type}: ${unmet.reason ?? unmet.status}` : undefined,
  };
}

/** Polls until the Cluster is Available; reports each change of progress; fails after the timeout. */
export async function waitForClusterAvailable(
  kc: KubeConfig,
  namespace: string,
  name: string,
  options: { timeoutMs: number; signal?: AbortSignal; onProgress(progress: ClusterProgress): void },
): Promise<ClusterObjects> {
  const deadline = Date.now() + options.timeoutMs;
  let last = '';
  for (;;) {
    options.signal?.throwIfAborted();
    const objects = await fetchClusterObjects(kc, namespace, name);
    const progress = progressOf(objects);
    const text = JSON.stringify(progress);
    if (text !== last) options.onProgress(progress);
    last = text;
    if (progress.available) return objects;
    if (Date.now() > deadline) {
      throw new Error(
        `Cluster ${namespace}/${name} was not Available after ${options.timeoutMs / 1000}s (phase ${progress.phase}` +
          `${progress.waitingFor ? `, ${progress.waitingFor}` : ''})`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
