import { RESOURCES, type Cluster } from '@capstan/api';
import {
  isConflict,
  isNotFound,
  type Informer,
  type KubeClient,
  type ResourceClient,
  type ResourceType,
} from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';

// The templates a MachineDeployment, MachineSet or control plane clones get their Cluster as an owner (upstream
// reconcileExternalTemplateReference and KCP's reconcileExternalReference), so deleting the Cluster collects them.

const TEMPLATE_SUFFIX = 'Template';

export interface TemplateReference {
  apiGroup: string;
  kind: string;
  name: string;
}

export class TemplateClusterOwnership {
  /** Templates seen owned by their Cluster (`<cluster uid>/<group>/<kind>/<namespace>/<name>`): not read again. */
  private readonly owned = new Set<string>();

  /**
   * `resolve` finds a template kind's resource; a kind it cannot resolve is skipped (the owner of the reference
   * reports it, and the next reconcile tries again). With `cacheOf`, a template is first read from the informer
   * of its kind; an owner patch the cached version makes conflict is tried once more from a fresh read.
   */
  constructor(
    private readonly client: KubeClient,
    private readonly resolve: (ref: TemplateReference) => Promise<ResourceType>,
    private readonly cacheOf?: (type: ResourceType) => Pick<Informer<KubernetesObject>, 'getOrFetch'>,
  ) {}

  /** Adds `cluster` to the owners of each referenced template that lacks it; a missing template is skipped. */
  async ensure(
    cluster: Cluster,
    namespace: string,
    refs: readonly (TemplateReference | undefined)[],
  ): Promise<void> {
    for (const ref of refs) {
      if (!ref?.kind.endsWith(TEMPLATE_SUFFIX)) continue;
      const key = `${cluster.metadata.uid}/${ref.apiGroup}/${ref.kind}/${namespace}/${ref.name}`;
      if (this.owned.has(key)) continue;
      let type: ResourceType;
      try {
        type = await this.resolve(ref);
      } catch {
        continue;
      }
      const templates = this.client.resource<KubernetesObject>(type);
      const id = { namespace, name: ref.name };
      const template = await (this.cacheOf
        ? this.cacheOf(type).getOrFetch(namespace, ref.name)
        : templates.getIfExists(id));
      if (!template) continue;
      try {
        await this.addOwner(templates, template, cluster);
      } catch (error) {
        if (!this.cacheOf || !isConflict(error)) throw error;
        const fresh = await templates.getIfExists(id);
        if (fresh) await this.addOwner(templates, fresh, cluster);
      }
      this.owned.add(key);
    }
  }

  private async addOwner(
    templates: ResourceClient<KubernetesObject>,
    template: KubernetesObject,
    cluster: Cluster,
  ): Promise<void> {
    const owners = template.metadata?.ownerReferences ?? [];
    if (owners.some((o) => o.uid === cluster.metadata.uid)) return;
    const owner = {
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: RESOURCES.Cluster.kind,
      name: cluster.metadata.name!,
      uid: cluster.metadata.uid!,
    };
    // resourceVersion makes the merge patch conditional: an owner added meanwhile is not overwritten.
    await templates
      .mergePatch(
        { namespace: template.metadata?.namespace, name: template.metadata!.name! },
        {
          metadata: {
            resourceVersion: template.metadata?.resourceVersion,
            ownerReferences: [...owners, owner],
          },
        },
      )
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
}
