import { contractFromCrd, crdName, findResource } from '@capstan/api';
import { CUSTOM_RESOURCE_DEFINITIONS, type KubeClient, type ResourceType } from '@capstan/kube';


interface CrdLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { names?: { plural?: string }; scope?: string };
}

/** A kind's plural as upstream guesses it for the CRD name (flect.Pluralize of the lower-case kind). */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/** The machine kind cloned from an infrastructure machine template kind (`SimMachineTemplate` -> `SimMachine`). */
export function machineKindOf(templateKind: string): string {
  if (!templateKind.endsWith('Template') || templateKind === 'Template') {
    throw new TypeError(`${templateKind} is not a machine template kind (<Kind>Template)`);
  }
  return templateKind.slice(0, -'Template'.length);
}

/** How long a kind's resolved version is trusted before its CRD is read again. */
const TTL_MS = 10 * 60 * 1000;

/**
 * Finds the API version of a provider kind named by a contract reference (`{apiGroup, kind}`): Capstan's
 * own kinds are known; any other comes from its CRD's `cluster.x-k8s.io/<contract>` label, as upstream
 * resolves references.
 */
export class ProviderKinds {
  private readonly cache = new Map<string, { type: ResourceType; at: number }>();

  constructor(private readonly client: KubeClient) {}

  async resolve(apiGroup: string, kind: string, now = Date.now()): Promise<ResourceType> {
    const known = findResource(apiGroup, kind);
    if (known) return known;
    const key = `${kind}.${apiGroup}`;
    const hit = this.cache.get(key);
    if (hit && now - hit.at < TTL_MS) return hit.type;
    const crd = await this.client
      .resource<CrdLike & { apiVersion?: string; kind?: string }>(CUSTOM_RESOURCE_DEFINITIONS)
      .get({ name: crdName({ plural: pluralOf(kind), group: apiGroup }) });
    const { version } = contractFromCrd(crd);
    const type: ResourceType = {
      group: apiGroup,
      version,
      kind,
      plural: crd.spec?.names?.plural ?? pluralOf(kind),
      namespaced: crd.spec?.scope !== 'Cluster',
    };
    this.cache.set(key, { type, at: now });
    return type;
  }
}
