// Shared mode keeps every cluster's Nodes in one kube-apiserver. Each Node carries its cluster's labels, and a
// cluster's endpoint adds their selector to every list, watch and collection delete of Nodes, so a client of one
// cluster sees that cluster's Nodes only, as on a server of its own. Without it every cluster's Node informer (the
// core's, for one) would hold every cluster's Nodes: N clusters each caching the Nodes of all N.
import { createHash } from 'node:crypto';

export const SHARED_CLUSTER_NAMESPACE_LABEL = 'sim.capstan.dev/cluster-namespace';
export const SHARED_CLUSTER_NAME_LABEL = 'sim.capstan.dev/cluster-name';

/** A label value holds 63 characters: a longer name is stood in for by a digest of it (still one value per name). */
function labelValue(name: string): string {
  return name.length <= 63 ? name : `sha256-${createHash('sha256').update(name).digest('hex').slice(0, 48)}`;
}

/** The labels a shared-mode cluster's Nodes carry. */
export function sharedClusterNodeLabels(namespace: string, clusterName: string): Record<string, string> {
  return { [SHARED_CLUSTER_NAMESPACE_LABEL]: labelValue(namespace), [SHARED_CLUSTER_NAME_LABEL]: labelValue(clusterName) };
}

/** The label selector of a shared-mode cluster's Nodes. */
export function sharedClusterNodeSelector(namespace: string, clusterName: string): string {
  return Object.entries(sharedClusterNodeLabels(namespace, clusterName))
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/**
 * Of `wanted`'s shared-cluster labels, those `current` lacks or has otherwise (undefined when none): what a kubelet
 * adopting a Node registered before these labels existed writes, so its cluster's endpoint lists it again.
 */
export function missingSharedClusterLabels(
  current: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const missing: Record<string, string> = {};
  for (const key of [SHARED_CLUSTER_NAMESPACE_LABEL, SHARED_CLUSTER_NAME_LABEL]) {
    const value = wanted[key];
    if (value !== undefined && current?.[key] !== value) missing[key] = value;
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}

const NODE_COLLECTIONS = new Set(['/api/v1/nodes', '/api/v1/watch/nodes']);

/**
 * The request path with `selector` added to its label selector when it lists, watches or deletes the Node collection
 * (`GET`/`DELETE /api/v1/nodes`, the older `/api/v1/watch/nodes`): a selector the client sent stays, and both must
 * match. Any other request, a single Node's included, is returned as it came.
 */
export function scopeNodeCollection(method: string, path: string, selector: string): string {
  if (method !== 'GET' && method !== 'DELETE') return path;
  const query = path.indexOf('?');
  const pathname = query === -1 ? path : path.slice(0, query);
  if (!NODE_COLLECTIONS.has(pathname.replace(/\/+$/, ''))) return path;
  const params = new URLSearchParams(query === -1 ? '' : path.slice(query + 1));
  const given = params.get('labelSelector')?.trim();
  params.set('labelSelector', given ? `${given},${selector}` : selector);
  return `${pathname}?${params.toString()}`;
}
