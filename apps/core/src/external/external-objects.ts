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
import { ProviderHints, type ProviderObjectName } from './provider-hints.js';
import { ProviderKindError, ProviderKinds, type ProviderKind } from '@capstan/provider-kit';

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
   * Tell `onChange` listeners of every change of a provider object, so owners reconcile on it and not only on
   * hand-off events and resyncs: for providers that publish no hand-off events.
   */
  watch: boolean;
  /** The versions hand-off events named (recorded by the hand-off routes); the reads here settle them. */
  hints?: ProviderHints;
  kinds?: ProviderKinds;
}

/**
 * Reads and writes the provider objects that Clusters and Machines reference, under the contract their CRD
 * names. Reads come from an informer per provider kind, started the first time a reference names the kind, as
 * controller-runtime's cached client reads: from the API server only while it syncs, for an object it does not
 * hold, or when a hand-off event or the core's own write named a version it does not hold yet (ProviderHints).
 * What tells the core to look is a hand-off event or a resync; with `watch`, also every change the informer sees.
 */
export class ExternalObjects {
  readonly kinds: ProviderKinds;
  private readonly hints: ProviderHints;
  private readonly informers = new Map<string, Informer<ProviderObject>>();
  private readonly changeListeners = new Set<(object: ProviderObject) => void>();

  constructor(private readonly options: ExternalObjectsOptions) {
    this.kinds = options.kinds ?? new ProviderKinds(options.client);
    this.hints = options.hints ?? new ProviderHints();
  }

  async read(namespace: string, ref: ContractVersionedObjectReference): Promise<ExternalRead> {
    let kind: ProviderKind;
    try {
      kind = await this.kinds.resolve(ref);
    } catch (error) {
      if (error instanceof ProviderKindError) return { state: 'invalid', error };
      throw error;
    }
    const name = nameOf(kind, namespace, ref.name);
    const informer = this.informerFor(kind);
    if (informer.hasSynced()) {
      const cached = informer.getByName(namespace, ref.name);
      if (cached && this.hints.satisfiedBy(name, cached)) return { state: 'found', object: cached, kind };
    }
    const outstanding = this.hints.outstanding(name);
    try {
      const object = await this.options.client
        .resource<ProviderObject>(kind.resource)
        .get({ namespace, name: ref.name });
      return { state: 'found', object, kind };
    } catch (error) {
      if (isNotFound(error)) return { state: 'notFound', kind };
      throw error;
    } finally {
      this.hints.settle(name, outstanding);
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
    const patched = await this.options.client.resource<ProviderObject>(found.kind.resource).mergePatch(
      { namespace: object.metadata?.namespace, name: object.metadata!.name! },
      {
        metadata: {
          resourceVersion: object.metadata?.resourceVersion,
          ...(ownersChanged ? { ownerReferences: wanted.metadata!.ownerReferences } : {}),
          ...(labelMissing ? { labels: { [LABELS.clusterName]: spec.clusterName } } : {}),
        },
      },
    );
    // The next read must not take the cached object from before this write for the current one.
    this.hints.record(
      nameOf(found.kind, object.metadata?.namespace ?? '', object.metadata!.name!),
      patched.metadata?.resourceVersion,
    );
    return patched;
  }

  /** Asks for the object's deletion (once); true while it still exists. */
  async deleteAndCheck(namespace: string, ref: ContractVersionedObjectReference): Promise<boolean> {
    const read = await this.read(namespace, ref);
    if (read.state !== 'found') return false;
    if (read.object.metadata?.deletionTimestamp) return true;
    try {
      const deleting = await this.options.client
        .resource(read.kind.resource)
        .delete({ namespace, name: ref.name });
      // Held by finalizers: the answer is the object marked for deletion, which the next poll must see.
      this.hints.record(nameOf(read.kind, namespace, ref.name), deleting.metadata?.resourceVersion);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    return true;
  }

  /** Called with each provider object that changes, in watch mode (a controller maps it to its keys); returns the unsubscribe. */
  onChange(listener: (object: ProviderObject) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private informerFor(kind: ProviderKind): Informer<ProviderObject> {
    const id = resourceId(kind.resource);
    let informer = this.informers.get(id);
    if (!informer) {
      informer = this.options.manager.informer<ProviderObject>(kind.resource);
      const changed = (object: ProviderObject, deleted = false) => {
        const { namespace = '', name = '', resourceVersion } = object.metadata ?? {};
        this.hints.seen(nameOf(kind, namespace, name), resourceVersion, deleted);
        if (this.options.watch) for (const listener of this.changeListeners) listener(object);
      };
      informer.addEventHandler({
        onAdd: (object) => changed(object),
        onUpdate: (_old, object) => changed(object),
        onDelete: (object) => changed(object, true),
      });
      this.informers.set(id, informer);
      this.options.logger.info(
        { resource: id, reconcileOnChange: this.options.watch },
        'caching provider kind',
      );
    }
    return informer;
  }
}

function nameOf(kind: ProviderKind, namespace: string, name: string): ProviderObjectName {
  return { apiGroup: kind.resource.group, kind: kind.resource.kind, namespace, name };
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
