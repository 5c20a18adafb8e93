import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import { deepEqual, mergeDiff, OwnWrites, refOf, type ResourceClient } from '@capstan/kube';

type WithSpecAndStatus = KubernetesObject & { spec?: object; status?: object };

export interface MetadataWants {
  finalizer?: string;
  labels?: Record<string, string>;
  /** The complete owner reference list wanted (the caller starts from the current one). */
  ownerReferences?: V1OwnerReference[];
}

/**
 * Writes of the core to its own kinds. Each sends only what differs from the object as read, conditional on the
 * resourceVersion read (409 when someone wrote meanwhile: the reconcile starts over from the fresh cache), and
 * returns the object the server answered, whose resourceVersion the next write is conditional on. The versions
 * written are recorded in `own`, so the watch events of these writes do not trigger another reconcile.
 */
export class GuardedWriter<T extends WithSpecAndStatus> {
  constructor(
    readonly resources: ResourceClient<T>,
    private readonly own?: OwnWrites,
  ) {}

  /** Merge-patches `status` to `desired` on the status subresource; no request when nothing differs. */
  async status(obj: T, desired: object): Promise<T> {
    const diff = mergeDiff(obj.status ?? {}, desired);
    if (!diff) return obj;
    return this.recorded(
      await this.resources.mergePatch(
        refOf(obj),
        { metadata: { resourceVersion: obj.metadata?.resourceVersion }, status: diff },
        { subresource: 'status' },
      ),
    );
  }

  /** Merge-patches the given `spec` fields (the rest of the spec is kept); no request when they already match. */
  async specFields(obj: T, fields: Record<string, unknown>): Promise<T> {
    const current = (obj.spec ?? {}) as Record<string, unknown>;
    const diff = mergeDiff(current, { ...current, ...fields });
    if (!diff) return obj;
    return this.recorded(
      await this.resources.mergePatch(refOf(obj), {
        metadata: { resourceVersion: obj.metadata?.resourceVersion },
        spec: diff,
      }),
    );
  }

  /** Adds a finalizer, labels and owner references in one patch; no request when all are in place. */
  async metadata(obj: T, wants: MetadataWants): Promise<T> {
    const meta = obj.metadata ?? {};
    const patch: Record<string, unknown> = {};
    if (wants.finalizer && !(meta.finalizers ?? []).includes(wants.finalizer)) {
      patch['finalizers'] = [...(meta.finalizers ?? []), wants.finalizer];
    }
    const labels = Object.entries(wants.labels ?? {}).filter(([key, value]) => meta.labels?.[key] !== value);
    if (labels.length > 0) patch['labels'] = Object.fromEntries(labels);
    if (wants.ownerReferences && !deepEqual(meta.ownerReferences ?? [], wants.ownerReferences)) {
      patch['ownerReferences'] = wants.ownerReferences;
    }
    if (Object.keys(patch).length === 0) return obj;
    return this.recorded(
      await this.resources.mergePatch(refOf(obj), {
        metadata: { resourceVersion: meta.resourceVersion, ...patch },
      }),
    );
  }

  /** Removes a finalizer; the object goes away once no finalizer is left on a deleted object. */
  async removeFinalizer(obj: T, finalizer: string): Promise<void> {
    const finalizers = obj.metadata?.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    await this.resources.mergePatch(refOf(obj), {
      metadata: {
        resourceVersion: obj.metadata?.resourceVersion,
        finalizers: finalizers.filter((f) => f !== finalizer),
      },
    });
  }

  private recorded(obj: T): T {
    this.own?.record(obj);
    return obj;
  }
}
