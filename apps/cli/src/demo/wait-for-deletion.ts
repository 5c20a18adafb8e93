import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { condition, type ClusterObjects, type DescribedObject } from '@capstan/describe';
import { fetchClusterObjects } from '../describe/fetch.js';
import { CliError } from '../output.js';

/** `12s`, `2m05s`: how long a step of the demo took. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** What of a cluster being deleted still exists, in the order the core deletes it. */
export function remainingObjects(objects: ClusterObjects): string {
  const left = [
    objects.machineDeployments.length > 0
      ? plural(objects.machineDeployments.length, 'MachineDeployment')
      : '',
    objects.machineSets.length > 0 ? plural(objects.machineSets.length, 'MachineSet') : '',
    objects.machines.length > 0 ? plural(objects.machines.length, 'Machine') : '',
    objects.controlPlane ? `${objects.controlPlane.kind} ${objects.controlPlane.metadata.name}` : '',
    objects.infrastructure ? `${objects.infrastructure.kind} ${objects.infrastructure.metadata.name}` : '',
  ].filter((part) => part !== '');
  return left.length > 0 ? `left: ${left.join(', ')}` : 'only the Cluster is left';
}

/**
 * One line on how far a cluster's deletion is. The Deleting condition speaks only once the core has seen the
 * deletionTimestamp (until then it still says NotDeleting from before the request), so before that the line says
 * that the core has yet to start, and in both cases what is left.
 */
export function deletionProgress(objects: ClusterObjects): string {
  const cluster: DescribedObject = objects.cluster;
  const left = remainingObjects(objects);
  if (!cluster.metadata.deletionTimestamp) return `deletion requested; ${left}`;
  const deleting = condition(cluster, 'Deleting');
  if (deleting?.status !== 'True') return `waiting for the core to start deleting; ${left}`;
  const message = deleting.message?.split('\n')[0];
  const step = message ? `${deleting.reason ?? 'Deleting'} (${message})` : (deleting.reason ?? 'Deleting');
  return `${step}; ${left}`;
}

export interface DeleteClusterOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called when the progress line changes, with the time since the delete request. */
  onProgress(progress: string, elapsedMs: number): void;
  /** For tests. */
  now?: () => number;
  pollMs?: number;
}

/**
 * Deletes the Cluster and polls until it is gone; resolves with the time from the delete request to then.
 * `getObjects` resolves undefined once the Cluster no longer exists.
 */
export async function deleteClusterAndWait(
  deleteCluster: () => Promise<unknown>,
  getObjects: () => Promise<ClusterObjects | undefined>,
  options: DeleteClusterOptions,
): Promise<number> {
  const now = options.now ?? Date.now;
  const requestedAt = now();
  await deleteCluster();
  let last = '';
  for (;;) {
    options.signal?.throwIfAborted();
    const objects = await getObjects();
    if (!objects) return now() - requestedAt;
    const progress = deletionProgress(objects);
    if (progress !== last) options.onProgress(progress, now() - requestedAt);
    last = progress;
    if (now() - requestedAt > options.timeoutMs) {
      throw new CliError(
        `Cluster ${objects.cluster.metadata.name} still exists after ${formatElapsed(options.timeoutMs)} (${progress})`,
      );
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 1000));
  }
}

/** The demo's deletion: `capstan delete cluster NAME --wait` against the management cluster. */
export function deleteClusterInManagement(
  kc: KubeConfig,
  namespace: string,
  name: string,
  options: DeleteClusterOptions,
): Promise<number> {
  return deleteClusterAndWait(
    () =>
      kc
        .makeApiClient(CustomObjectsApi)
        .deleteNamespacedCustomObject({
          group: 'cluster.x-k8s.io',
          version: 'v1beta2',
          namespace,
          plural: 'clusters',
          name,
        }),
    () =>
      fetchClusterObjects(kc, namespace, name).catch((error: unknown) => {
        if (error instanceof CliError && /not found/.test(error.message)) return undefined;
        throw error;
      }),
    options,
  );
}
