import { type V1Pod } from '@kubernetes/client-node';
import { isNotFound, isTooManyRequests, resourcePath, statusCodeOf, type KubeClient, HttpMethod } from '@capstan/kube';
import { PODS } from './resources.js';

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** What one drain pass found on the node. The drain is done when nothing is left to evict or to wait for. */
export interface DrainResult {
  /** Pods whose eviction the API accepted in this pass (`namespace/name`). */
  evicted: string[];
  /** Pods already terminating: the kubelet (or the API server, for a grace period of 0) removes them. */
  terminating: string[];
  /** Pods whose eviction was refused, e.g. by a PodDisruptionBudget, with the server's message. */
  blocked: { pod: string; message: string }[];
  /** DaemonSet and mirror (static) pods: never evicted, as `kubectl drain --ignore-daemonsets` does. */
  skipped: string[];
}

export function drainDone(result: DrainResult): boolean {
  return result.evicted.length === 0 && result.terminating.length === 0 && result.blocked.length === 0;
}

/** One pass of `kubectl drain`: evicts every pod bound to the node through the Eviction API. */
export async function drainNode(client: KubeClient, nodeName: string): Promise<DrainResult> {
  const pods = await client.resource<V1Pod>(PODS).listAll({ fieldSelector: `spec.nodeName=${nodeName}` });
  const result: DrainResult = { evicted: [], terminating: [], blocked: [], skipped: [] };
  for (const pod of pods.items) {
    const id = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    if (isMirrorPod(pod) || isDaemonSetPod(pod)) {
      result.skipped.push(id);
      continue;
    }
    if (pod.metadata?.deletionTimestamp) {
      result.terminating.push(id);
      continue;
    }
    const refused = await evict(client, pod);
    if (refused === undefined) result.evicted.push(id);
    else if (refused !== 'gone') result.blocked.push({ pod: id, message: refused });
  }
  return result;
}

/** A one-line account of a drain pass for a condition message (pod names only, at most a few). */
export function describeDrain(result: DrainResult): string {
  const list = (names: string[]) => names.slice(0, 3).join(', ') + (names.length > 3 ? ', ...' : '');
  const parts: string[] = [];
  if (result.evicted.length > 0) parts.push(`evicting Pods ${list(result.evicted)}`);
  if (result.terminating.length > 0)
    parts.push(`waiting for Pods ${list(result.terminating)} to terminate (deletionTimestamp set)`);
  if (result.blocked.length > 0) {
    const first = result.blocked[0]!;
    parts.push(`cannot evict Pods ${list(result.blocked.map((b) => b.pod))}: ${first.message}`);
  }
  return parts.join('; ');
}

/** Undefined when accepted, 'gone' when the pod no longer exists, else the refusal's message. */
async function evict(client: KubeClient, pod: V1Pod): Promise<string | 'gone' | undefined> {
  const namespace = pod.metadata!.namespace!;
  const name = pod.metadata!.name!;
  try {
    await client.request({
      method: HttpMethod.POST,
      path: resourcePath(PODS, { namespace, name, subresource: 'eviction' }),
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
    });
    return undefined;
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    if (isTooManyRequests(error)) return "cannot evict pod as it would violate the pod's disruption budget";
    const code = statusCodeOf(error);
    if (code !== undefined) return `failed to evict Pod (HTTP ${code})`;
    throw error;
  }
}

function isMirrorPod(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

function isDaemonSetPod(pod: V1Pod): boolean {
  return (pod.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.kind === 'DaemonSet');
}
