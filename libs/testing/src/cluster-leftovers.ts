import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

// What of a deleted cluster is still in the management cluster: every object of the given kinds (Capstan's and
// Cluster API's, from @capstan/api's ALL_RESOURCES), and every Secret, that carries the cluster's name label, names
// the deleted Cluster as an owner or is named after the cluster. The garbage collector removes them once their
// owners are gone; anything left after that is a leak.

const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

export interface NamespacedKind {
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** Cluster-scoped kinds (ExtensionConfig) belong to no cluster's namespace and are not looked at. */
  namespaced?: boolean;
}

export interface DeletedCluster {
  namespace: string;
  name: string;
  uid: string;
}

/** `Kind/name` of each object of the deleted cluster still there, sorted. */
export async function clusterLeftovers(
  kc: KubeConfig,
  cluster: DeletedCluster,
  kinds: readonly NamespacedKind[],
): Promise<string[]> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  // Named after the cluster too: the templates `capstan generate` and the test fixtures write carry no label.
  const belongs = (obj: KubernetesObject) =>
    obj.metadata?.labels?.[CLUSTER_NAME_LABEL] === cluster.name ||
    (obj.metadata?.ownerReferences ?? []).some((o) => o.uid === cluster.uid) ||
    obj.metadata?.name === cluster.name ||
    obj.metadata?.name?.startsWith(`${cluster.name}-`) === true;
  const left: string[] = [];
  for (const resource of kinds.filter((k) => k.namespaced !== false)) {
    const { items } = (await custom.listNamespacedCustomObject({
      group: resource.group,
      version: resource.version,
      namespace: cluster.namespace,
      plural: resource.plural,
    })) as { items: KubernetesObject[] };
    for (const obj of items) if (belongs(obj)) left.push(`${resource.kind}/${obj.metadata!.name}`);
  }
  const secrets = await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: cluster.namespace });
  for (const secret of secrets.items) if (belongs(secret)) left.push(`Secret/${secret.metadata!.name}`);
  return left.sort();
}

/** Polls until nothing of the cluster is left or `timeoutMs` passed; resolves with what is left (empty: nothing). */
export async function waitForNoLeftovers(
  kc: KubeConfig,
  cluster: DeletedCluster,
  kinds: readonly NamespacedKind[],
  options: { timeoutMs: number; pollMs?: number; signal?: AbortSignal },
): Promise<string[]> {
  const deadline = Date.now() + options.timeoutMs;
  const pause = () => new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
  for (;;) {
    options.signal?.throwIfAborted();
    let left: string[];
    try {
      left = await clusterLeftovers(kc, cluster, kinds);
    } catch (error) {
      // 429 "storage is (re)initializing": a resource's watch cache is starting again (its CRD just changed, e.g. the
      // conversion webhook's CA bundle). Like client-go, ask again after a moment.
      if (!(error instanceof ApiException && error.code === 429) || Date.now() >= deadline) throw error;
      await pause();
      continue;
    }
    if (left.length === 0 || Date.now() >= deadline) return left;
    await pause();
  }
}
