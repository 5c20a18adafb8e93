import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import { type Logger } from 'pino';
import { LABELS, type ContractVersionedObjectReference } from '@capstan/api';
import {
  isNotFound,
  resourceId,
  setControllerReference,
  setOwnerReference,
  type Informer,
  type KubeClient,
  type Manager,
} from '@capstan/kube';
import { ProviderKindError, ProviderKinds, type ProviderKind } from './provider-kinds.js';

/** A provider object as JSON: the core knows only the contract fields, which the readers in @capstan/api pick. */
export type ProviderObject = KubernetesObject & Record<string, unknown>;

export type ExternalRead =
  | { state: 'found'; object: ProviderObject; kind: ProviderKind }
  | { state: 'notFound'; kind: ProviderKind }
  | { state: 'invalid'; error: ProviderKindError };

export interface OwnershipSpec {
  /** The Cluster or Machine that owns the object (needs apiVersion, kind, name, uid). */
  owner: KubernetesObject;
  /** Machine: controller reference (other controllers, the "on-create" owners, are dropped); Cluster: plain reference. */
  controller: boolean;
  clusterName: string;
}

export interface ExternalObjectsOptions {
  client: KubeClient;
  manager: Manager;
  logger: Logger;
  /**
   * Watch provider kinds (informers created on demand, the first time a reference names the kind) instead of
   * reading them from the API on each reconcile: for providers that publish no hand-off events.
   */
  watch: boolean;
  /** Called with each provider object that changed, in watch mode (maps it to the keys to reconcile). */
  onChange?: (object: ProviderObject) => void;
  kinds?: ProviderKinds;
}

/**
 * Reads and writes the provider objects that Clusters and Machines reference, under the contract their CRD
 * names. By default every read is a GET (hand-off events and resyncs tell the core when to look); with
 * `watch` the reads come from informers once they are synced.
 */
export class ExternalObjects {
  readonly kinds: ProviderKinds;
  private readonly watched = new Map<string, Informer<ProviderObject>>();

  constructor(private readonly options: ExternalObjectsOptions) {
    this.kinds = options.kinds ?? new ProviderKinds(options.client);
  }

  get watching(): boolean {
    return this.options.watch;
  }

  async read(namespace: string, ref: ContractVersionedObjectReference): Promise<ExternalRead> {
    let kind: ProviderKind;
    try {
      kind = await this.kinds.resolve(ref);
    } catch (error) {
      if (error instanceof ProviderKindError) return { state: 'invalid', error };
      throw error;
    }
    const informer = this.informerFor(kind);
    if (informer?.hasSynced()) {
      const cached = informer.getByName(namespace, ref.name);
      return cached ? { state: 'found', object: cached, kind } : { state: 'notFound', kind };
    }
    try {
      const object = await this.options.client
        .resource<ProviderObject>(kind.resource)
        .get({ namespace, name: ref.name });
      return { state: 'found', object, kind };
    } catch (error) {
      if (isNotFound(error)) return { state: 'notFound', kind };
      throw error;
    }
  }

  /**
   * Puts the owner reference and the `cluster.x-k8s.io/cluster-name` label on a provider object (again, when
   * someone removed them). One merge patch conditional on the resourceVersion read; nothing when already right.
   */
  async ensureOwnership(
    found: { object: ProviderObject; kind: ProviderKind },
    spec: OwnershipSpec,
  ): Promise<ProviderObject> {
    const { object } = found;
    const wanted: KubernetesObject = {
      metadata: {
        namespace: object.metadata?.namespace,
        ownerReferences: structuredClone(object.metadata?.ownerReferences ?? []),
      },
    };
    if (spec.controller) {
      const ownerUid = spec.owner.metadata?.uid;
      wanted.metadata!.ownerReferences = wanted.metadata!.ownerReferences!.filter(
        (r) => r.controller !== true || r.uid === ownerUid,
      );
      setControllerReference(spec.owner, wanted);
    } else {
      setOwnerReference(spec.owner, wanted);
    }
    const ownersChanged = !sameOwners(
      object.metadata?.ownerReferences ?? [],
      wanted.metadata!.ownerReferences!,
    );
    const labelMissing = object.metadata?.labels?.[LABELS.clusterName] !== spec.clusterName;
    if (!ownersChanged && !labelMissing) return object;
    return this.options.client.resource<ProviderObject>(found.kind.resource).mergePatch(
      { namespace: object.metadata?.namespace, name: object.metadata!.name! },
      {
        metadata: {
          resourceVersion: object.metadata?.resourceVersion,
          ...(ownersChanged ? { ownerReferences: wanted.metadata!.ownerReferences } : {}),
          ...(labelMissing ? { labels: { [LABELS.clusterName]: spec.clusterName } } : {}),
        },
      },
    );
  }

  /** Asks for the object's deletion (once); true while it still exists. */
  async deleteAndCheck(namespace: string, ref: ContractVersionedObjectReference): Promise<boolean> {
    const read = await this.read(namespace, ref);
    if (read.state !== 'found') return false;
    if (read.object.metadata?.deletionTimestamp) return true;
    try {
      await this.options.client.resource(read.kind.resource).delete({ namespace, name: ref.name });
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    return true;
  }

  private informerFor(kind: ProviderKind): Informer<ProviderObject> | undefined {
    if (!this.options.watch) return undefined;
    const id = resourceId(kind.resource);
    let informer = this.watched.get(id);
    if (!informer) {
      informer = this.options.manager.informer<ProviderObject>(kind.resource);
      const onChange = this.options.onChange;
      if (onChange) {
        informer.addEventHandler({
          onAdd: onChange,
          onUpdate: (_old, object) => onChange(object),
          onDelete: onChange,
        });
      }
      this.watched.set(id, informer);
      this.options.logger.info({ resource: id }, 'watching provider kind');
    }
    return informer;
  }
}

function sameOwners(a: V1OwnerReference[], b: V1OwnerReference[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((ref, i) => {
    const other = b[i]!;
    return (
      ref.uid === other.uid &&
      ref.name === other.name &&
      ref.kind === other.kind &&
      ref.apiVersion === other.apiVersion &&
      (ref.controller ?? false) === (other.controller ?? false) &&
      (ref.blockOwnerDeletion ?? false) === (other.blockOwnerDeletion ?? false)
    );
  });
}
