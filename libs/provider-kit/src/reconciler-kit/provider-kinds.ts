import {
  ContractLabelError,
  contractFromCrd,
  findResource,
  type ContractVersion,
  type ContractVersionedObjectReference,
} from '@capstan/api';
import { CUSTOM_RESOURCE_DEFINITIONS, isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';


interface CrdShape {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { group?: string; scope?: string; names?: { kind?: string; plural?: string } };
}

/** How to reach a provider kind: its resource at the API version its CRD's contract label names. */
export interface ProviderKind {
  resource: ResourceType;
  contract: ContractVersion;
}

export type ProviderKindProblem = 'UnknownKind' | 'NoContractLabel';

/** A reference names a kind the core cannot use: no CRD serves it, or its CRD has no contract label. */
export class ProviderKindError extends Error {
  constructor(
    readonly reason: ProviderKindProblem,
    readonly apiGroup: string,
    readonly kind: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderKindError';
  }
}

interface Entry {
  value: ProviderKind | ProviderKindError;
  at: number;
}

/**
 * Resolves `{apiGroup, kind}` references to resources through the CRDs' contract labels (upstream
 * `GetLatestContractAndAPIVersionFromContract`), remembering answers for a while: a provider upgrade that
 * changes its labels is picked up after `ttlMs`, a missing CRD is looked for again after `missingTtlMs`.
 */
export class ProviderKinds {
  private readonly cache = new Map<string, Entry>();
  /** Lookups under way, so concurrent reconciles of a new kind read its CRD once. */
  private readonly inFlight = new Map<string, Promise<ProviderKind | ProviderKindError>>();

  constructor(
    private readonly client: KubeClient,
    private readonly options: { ttlMs?: number; missingTtlMs?: number } = {},
  ) {}

  async resolve(ref: Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind'>): Promise<ProviderKind> {
    // Capstan's own kinds: their CRDs are generated from libs/api, all with the v1beta2 contract label.
    const own = findResource(ref.apiGroup, ref.kind);
    if (own) return { resource: own, contract: 'v1beta2' };
    const key = `${ref.kind}.${ref.apiGroup}`;
    const cached = this.cache.get(key);
    if (cached) {
      const ttl =
        cached.value instanceof ProviderKindError
          ? (this.options.missingTtlMs ?? 30_000)
          : (this.options.ttlMs ?? 300_000);
      if (Date.now() - cached.at < ttl) {
        if (cached.value instanceof ProviderKindError) throw cached.value;
        return cached.value;
      }
    }
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.lookup(ref.apiGroup, ref.kind)
        .catch((error: unknown) => {
          if (error instanceof ProviderKindError) return error;
          throw error;
        })
        .then((value) => {
          this.cache.set(key, { value, at: Date.now() });
          return value;
        })
        .finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const value = await pending;
    if (value instanceof ProviderKindError) throw value;
    return value;
  }

  /** The resource of a provider kind (what most callers need of `resolve`). */
  async resourceOf(apiGroup: string, kind: string): Promise<ResourceType> {
    return (await this.resolve({ apiGroup, kind })).resource;
  }

  private async lookup(apiGroup: string, kind: string): Promise<ProviderKind> {
    const crds = this.client.resource<CrdShape & { apiVersion?: string; kind?: string }>(CUSTOM_RESOURCE_DEFINITIONS);
    let crd: CrdShape | undefined;
    try {
      crd = await crds.get({ name: `${guessPlural(kind)}.${apiGroup}` });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    if (!crd || crd.spec?.names?.kind !== kind) {
      // The plural is irregular: find the CRD by group and kind.
      const all = await crds.listAll();
      crd = all.items.find((c) => c.spec?.group === apiGroup && c.spec?.names?.kind === kind);
    }
    if (!crd?.spec?.names?.plural) {
      throw new ProviderKindError(
        'UnknownKind',
        apiGroup,
        kind,
        `no CustomResourceDefinition serves kind ${kind} in API group ${apiGroup}`,
      );
    }
    try {
      const { contract, version } = contractFromCrd(crd);
      return {
        contract,
        resource: {
          group: apiGroup,
          version,
          kind,
          plural: crd.spec.names.plural,
          namespaced: crd.spec.scope !== 'Cluster',
        },
      };
    } catch (error) {
      if (error instanceof ContractLabelError) {
        throw new ProviderKindError('NoContractLabel', apiGroup, kind, error.message);
      }
      throw error;
    }
  }
}

/** The machine kind cloned from an infrastructure machine template kind (`SimMachineTemplate` -> `SimMachine`). */
export function machineKindOf(templateKind: string): string {
  if (!templateKind.endsWith('Template') || templateKind === 'Template') {
    throw new TypeError(`${templateKind} is not a machine template kind (<Kind>Template)`);
  }
  return templateKind.slice(0, -'Template'.length);
}

/** The plural most CRDs use (upstream's contract requires flect's pluralisation); irregular ones are found by listing. */
export function guessPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
