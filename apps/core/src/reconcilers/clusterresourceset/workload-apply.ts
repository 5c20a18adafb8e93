import type { KubernetesObject } from '@kubernetes/client-node';
import { isAlreadyExists, isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';

// Applying a ClusterResourceSet's objects to a workload cluster, as upstream's clusterresourceset_scope.go does:
// ApplyOnce creates (an object that exists already is left as it is), Reconcile creates or merge-patches. The
// resource of each kind is found by the workload API's discovery, as a dynamic client does.

/** An object the workload cluster refused or does not know; the message names the object, never its content. */
export class WorkloadApplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkloadApplyError';
  }
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** The resources one workload API serves per group/version, read once per apply pass. */
export class WorkloadDiscovery {
  private readonly lists = new Map<string, Promise<ApiResource[]>>();

  constructor(private readonly client: KubeClient) {}

  async resourceOf(apiVersion: string, kind: string): Promise<ResourceType> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    let list = this.lists.get(path);
    if (!list) {
      list = this.client
        .request<{ resources?: ApiResource[] }>({ method: 'GET', path })
        .then((answer) => answer.resources ?? []);
      this.lists.set(path, list);
    }
    const resources = await list.catch((error: unknown) => {
      this.lists.delete(path);
      if (isNotFound(error)) return [];
      throw error;
    });
    // Subresources (pods/status) share the kind: the resource itself has no slash.
    const found = resources.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!found) throw new WorkloadApplyError(`the cluster serves no ${kind} in ${apiVersion}`);
    return { group: group!, version: version!, plural: found.name, kind, namespaced: found.namespaced };
  }
}

const describe = (obj: KubernetesObject) =>
  `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`;

/**
 * Applies `objects` in order. `reconcile`: an existing object is merge-patched to what the resource says (Reconcile);
 * otherwise it is left as it is (ApplyOnce). A namespaced object without a namespace goes to `default`, as kubectl
 * sends it.
 */
export async function applyToWorkload(
  client: KubeClient,
  objects: readonly KubernetesObject[],
  reconcile: boolean,
): Promise<void> {
  const discovery = new WorkloadDiscovery(client);
  for (const obj of objects) {
    const type = await discovery.resourceOf(obj.apiVersion!, obj.kind!);
    const namespace = type.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
    const body: KubernetesObject = { ...obj, metadata: { ...obj.metadata, ...(namespace && { namespace }) } };
    const resources = client.resource(type);
    try {
      await resources.create(body);
    } catch (error) {
      if (!isAlreadyExists(error)) throw new WorkloadApplyError(`${describe(body)}: ${reasonOf(error)}`);
      if (!reconcile) continue;
      try {
        await resources.mergePatch({ namespace, name: body.metadata!.name! }, body);
      } catch (patchError) {
        throw new WorkloadApplyError(`${describe(body)}: ${reasonOf(patchError)}`);
      }
    }
  }
}

/** The API server's reason and message (bounded): what was refused, without echoing the object back. */
function reasonOf(error: unknown): string {
  const status = (error as { status?: { reason?: string; message?: string } }).status;
  const text = status?.message ?? (error as Error).message ?? String(error);
  return `${status?.reason ? `${status.reason}: ` : ''}${text}`.slice(0, 300);
}
