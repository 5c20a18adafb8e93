import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { RESOURCES, type ClusterResourceSetBinding } from '@capstan/api';

/** What a ClusterResourceSet delivered to a cluster, as its binding records it. */
export interface DeliveredAddon {
  set: string;
  resources: string[];
}

/**
 * Polls the cluster's ClusterResourceSetBinding until set `setName` has applied every resource it names; fails after
 * the timeout with what the binding says so far.
 */
export async function waitForAddon(
  kc: KubeConfig,
  namespace: string,
  cluster: string,
  setName: string,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<DeliveredAddon> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural } = RESOURCES.ClusterResourceSetBinding;
  const deadline = Date.now() + options.timeoutMs;
  let seen = 'no ClusterResourceSetBinding yet';
  for (;;) {
    options.signal?.throwIfAborted();
    const binding = (await api
      .getNamespacedCustomObject({ group, version, namespace, plural, name: cluster })
      .catch(() => undefined)) as ClusterResourceSetBinding | undefined;
    const entry = binding?.spec.bindings?.find((b) => b.clusterResourceSetName === setName);
    const resources = entry?.resources ?? [];
    if (resources.length > 0 && resources.every((r) => r.applied))
      return { set: setName, resources: resources.map((r) => `${r.kind} ${r.name}`) };
    if (entry) seen = `${resources.filter((r) => r.applied).length}/${resources.length} resources applied`;
    if (Date.now() > deadline)
      throw new Error(`ClusterResourceSet ${setName} did not deliver to ${namespace}/${cluster} (${seen})`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
