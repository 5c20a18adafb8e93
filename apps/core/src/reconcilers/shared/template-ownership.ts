import { RESOURCES, type Cluster } from '@capstan/api';
import { isNotFound, type KubeClient } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ProviderKindError } from '../../external/provider-kinds.js';
import { ownerReferenceTo } from './ownership.js';
import type { ObjectReference, TemplateCloner } from './template-cloner.js';

// The bootstrap and infrastructure templates a MachineDeployment or MachineSet uses get their Cluster as an owner
// (upstream reconcileExternalTemplateReference), so deleting the Cluster collects them too.

const TEMPLATE_SUFFIX = 'Template';

export class TemplateClusterOwnership {
  /** Templates seen owned by their Cluster (`<cluster uid>/<kind>/<namespace>/<name>`): not read again. */
  private readonly owned = new Set<string>();

  constructor(
    private readonly templates: TemplateCloner,
    private readonly client: KubeClient,
  ) {}

  /**
   * Adds `cluster` to the owners of each referenced template that lacks it. A template that does not exist, or
   * whose kind no CRD serves, is left to the MachineSet, which reports it.
   */
  async ensure(cluster: Cluster, namespace: string, refs: readonly (ObjectReference | undefined)[]): Promise<void> {
    for (const ref of refs) {
      if (!ref?.kind.endsWith(TEMPLATE_SUFFIX)) continue;
      const key = `${cluster.metadata.uid}/${ref.apiGroup}/${ref.kind}/${namespace}/${ref.name}`;
      if (this.owned.has(key)) continue;
      let template: KubernetesObject;
      try {
        template = await this.templates.get(namespace, ref);
      } catch (err) {
        if (isNotFound(err) || err instanceof ProviderKindError) continue;
        throw err;
      }
      const owners = template.metadata?.ownerReferences ?? [];
      if (!owners.some((o) => o.uid === cluster.metadata.uid)) {
        const type = await this.templates.resolve(ref.apiGroup, ref.kind, ref.version);
        // resourceVersion makes the merge patch conditional: an owner added meanwhile is not overwritten.
        await this.client.resource(type).mergePatch(
          { namespace, name: ref.name },
          {
            metadata: {
              resourceVersion: template.metadata?.resourceVersion,
              ownerReferences: [...owners, ownerReferenceTo(cluster, RESOURCES.Cluster, false)],
            },
          },
        );
      }
      this.owned.add(key);
    }
  }
}
