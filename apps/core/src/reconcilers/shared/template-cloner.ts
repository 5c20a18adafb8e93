import { ANNOTATIONS, LABELS, parseApiVersion, type Unstructured } from '@capstan/api';
import {
  isNotFound,
  type Informer,
  type KubeClient,
  type ResourceType,
  type WriteOptions,
} from '@capstan/kube';
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { guessPlural, type ProviderKinds } from '@capstan/provider-kit';

// Objects created from provider templates (upstream external.CreateFromTemplate / GenerateTemplate): a MachineSet
// clones an infrastructure machine and a bootstrap config per Machine; a MachineHealthCheck clones a remediation
// request. The kind is the template's kind minus `Template`, in the same API group.

export type TemplateObject = Unstructured & KubernetesObject;

export interface ObjectReference {
  apiGroup: string;
  kind: string;
  name: string;
  /** Only for references that name their API version (otherwise the CRD's contract label decides). */
  version?: string;
}

const TEMPLATE_SUFFIX = 'Template';

export function cloneKindOf(templateKind: string): string {
  return templateKind.endsWith(TEMPLATE_SUFFIX)
    ? templateKind.slice(0, -TEMPLATE_SUFFIX.length)
    : templateKind;
}

export interface CloneInput {
  name: string;
  namespace: string;
  clusterName: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: V1OwnerReference[];
}

/**
 * The object a template describes (`spec.template.metadata` + `spec.template.spec`), named and owned as given,
 * labelled with the cluster and annotated with the template it came from.
 */
export function cloneFromTemplate(
  template: TemplateObject,
  input: CloneInput & { kind: string; apiVersion: string; templateRef: ObjectReference },
): TemplateObject {
  const source = recordOf(recordOf(template['spec'])['template']);
  const metadata = recordOf(source['metadata']);
  const templateGroup = parseApiVersion(template.apiVersion ?? '').group || input.templateRef.apiGroup;
  return {
    apiVersion: input.apiVersion,
    kind: input.kind,
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...stringMap(metadata['labels']), ...input.labels, [LABELS.clusterName]: input.clusterName },
      annotations: {
        ...stringMap(metadata['annotations']),
        ...input.annotations,
        [ANNOTATIONS.clonedFromName]: input.templateRef.name,
        [ANNOTATIONS.clonedFromGroupKind]: `${input.templateRef.kind}.${templateGroup}`,
      },
      ...(input.ownerReferences ? { ownerReferences: input.ownerReferences } : {}),
    },
    spec: structuredClone(recordOf(source['spec'])),
  };
}

/**
 * Reads templates and creates and deletes their clones; kinds resolve through their CRDs' contract labels. With
 * `cacheOf`, templates are read from an informer of their kind (a GET only for one it does not hold yet): a
 * MachineSet reads two templates for every Machine it creates.
 */
export class TemplateCloner {
  constructor(
    private readonly client: KubeClient,
    private readonly kinds: ProviderKinds,
    private readonly cacheOf?: (type: ResourceType) => Informer<TemplateObject>,
  ) {}

  /**
   * The resource of a kind: at the version its CRD's contract label names, or at `version` when the reference
   * gives one (remediation templates carry an apiVersion and need no contract label).
   */
  async resolve(apiGroup: string, kind: string, version?: string): Promise<ResourceType> {
    if (version) return { group: apiGroup, version, kind, plural: guessPlural(kind), namespaced: true };
    return this.kinds.resourceOf(apiGroup, kind);
  }

  /** The template (shared with the cache: not to be changed); NotFound when it does not exist. */
  async get(namespace: string, ref: ObjectReference): Promise<TemplateObject> {
    const type = await this.resolve(ref.apiGroup, ref.kind, ref.version);
    const cached = await this.cacheOf?.(type).getOrFetch(namespace, ref.name);
    return cached ?? this.client.resource<TemplateObject>(type).get({ namespace, name: ref.name });
  }

  /** Deletes the referenced object; gone already is fine. */
  async delete(namespace: string, ref: ObjectReference): Promise<void> {
    const type = await this.resolve(ref.apiGroup, ref.kind, ref.version);
    await this.client
      .resource(type)
      .delete({ namespace, name: ref.name })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  /** Creates the clone of the template `templateRef` points at; returns its reference. */
  async createFromTemplate(
    input: CloneInput & { templateRef: ObjectReference },
    options: WriteOptions = {},
  ): Promise<ObjectReference> {
    const template = await this.get(input.namespace, input.templateRef);
    const kind = cloneKindOf(input.templateRef.kind);
    const type = await this.resolve(input.templateRef.apiGroup, kind, input.templateRef.version);
    const apiVersion = type.group === '' ? type.version : `${type.group}/${type.version}`;
    await this.client
      .resource<TemplateObject>(type)
      .create(cloneFromTemplate(template, { ...input, kind, apiVersion }), options);
    return cloneReference(input.templateRef, input.name);
  }
}

/** The reference to the clone named `name` of the template `templateRef` points at. */
export function cloneReference(templateRef: ObjectReference, name: string): ObjectReference {
  return {
    apiGroup: templateRef.apiGroup,
    kind: cloneKindOf(templateRef.kind),
    name,
    ...(templateRef.version ? { version: templateRef.version } : {}),
  };
}

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringMap(value: unknown): Record<string, string> {
  return Object.fromEntries(
    Object.entries(recordOf(value)).filter(([, v]) => typeof v === 'string'),
  ) as Record<string, string>;
}
