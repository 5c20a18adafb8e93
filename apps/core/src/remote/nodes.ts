import { type V1Node } from '@kubernetes/client-node';
import { isNotFound, type KubeClient } from '@capstan/kube';
import { NODES } from './resources.js';

// Writes to Nodes of a workload cluster. Each is a merge patch conditional on the resourceVersion the
// caller read, so a Node changed meanwhile (kubelet heartbeats do not touch metadata or spec) is re-read.

export interface NodeChange {
  /** Annotations to set (value) or remove (null). */
  annotations?: Record<string, string | null>;
  /** Labels to set (value) or remove (null). */
  labels?: Record<string, string | null>;
  /** Taints to take off (every taint with this key and effect). */
  removeTaints?: { key: string; effect: string }[];
}

/** Sets or removes annotations and labels and takes taints off, in one patch; nothing is sent when the node matches. */
export async function patchNode(client: KubeClient, node: V1Node, change: NodeChange): Promise<boolean> {
  const annotations = pendingChanges(node.metadata?.annotations, change.annotations);
  const labels = pendingChanges(node.metadata?.labels, change.labels);
  const taints = node.spec?.taints ?? [];
  const kept = taints.filter(
    (t) => !(change.removeTaints ?? []).some((r) => r.key === t.key && r.effect === t.effect),
  );
  const taintsChanged = kept.length !== taints.length;
  if (!annotations && !labels && !taintsChanged) return false;
  await client.resource<V1Node>(NODES).mergePatch(
    { name: node.metadata!.name! },
    {
      metadata: {
        resourceVersion: node.metadata?.resourceVersion,
        ...(annotations ? { annotations } : {}),
        ...(labels ? { labels } : {}),
      },
      ...(taintsChanged ? { spec: { taints: kept } } : {}),
    },
  );
  return true;
}

/** Marks the node unschedulable (kubectl cordon); false when it already was. */
export async function cordonNode(client: KubeClient, node: V1Node): Promise<boolean> {
  if (node.spec?.unschedulable === true) return false;
  await client
    .resource<V1Node>(NODES)
    .mergePatch({ name: node.metadata!.name! }, { spec: { unschedulable: true } });
  return true;
}

/**
 * Marks the node schedulable again (kubectl uncordon). Always sent: the caller's copy may come from a cache that
 * has not seen the cordon yet, and an uncordon skipped for that reason would leave the node cordoned for good.
 */
export async function uncordonNode(client: KubeClient, name: string): Promise<void> {
  await client.resource<V1Node>(NODES).mergePatch({ name }, { spec: { unschedulable: null } });
}

/** Deletes the node; false when it was already gone. */
export async function deleteNode(client: KubeClient, name: string): Promise<boolean> {
  try {
    await client.resource<V1Node>(NODES).delete({ name });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** The node read from the API (not a cache), or undefined when it does not exist. */
export async function readNode(client: KubeClient, name: string): Promise<V1Node | undefined> {
  try {
    return await client.resource<V1Node>(NODES).get({ name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

function pendingChanges(
  current: Record<string, string> | undefined,
  wanted: Record<string, string | null> | undefined,
): Record<string, string | null> | undefined {
  if (!wanted) return undefined;
  const changes: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(wanted)) {
    const has = current !== undefined && Object.hasOwn(current, key);
    if (value === null ? has : current?.[key] !== value) changes[key] = value;
  }
  return Object.keys(changes).length > 0 ? changes : undefined;
}
