import type { KubernetesObject } from '@kubernetes/client-node';
import { isConflict, StaleObjectError } from '../errors.js';
import { objectKey } from '../keys.js';
import type { ResourceClient } from '../resource-client.js';
import { refOf } from '../resource.js';
import { deepEqual, mergeDiff } from './json-diff.js';
import type { OwnWrites } from './own-writes.js';

/** What the helper needs of a condition: its type (the list key); the rest is compared whole. */
export interface ConditionLike {
  type: string;
}

/** Any object; a `status.conditions` list is merged per condition type. */
export type PatchableObject = KubernetesObject & { status?: object };

export interface PatchHelperOptions {
  /**
   * The condition types this controller owns. A status write that loses a race is merged onto the fresh object:
   * owned conditions are written as computed; a condition of another owner that both this reconcile and someone
   * else changed is a conflict (the reconcile starts over), one this reconcile left alone is never touched, and one
   * missing from what this reconcile computed is never deleted (only owners remove their conditions).
   */
  ownedConditions?: readonly string[];
  /** Where the versions this controller wrote are recorded (their watch events need no second reconcile). */
  ownWrites?: OwnWrites;
  /** Whether the kind has a status subresource (default true); without one, status is written with the object. */
  statusSubresource?: boolean;
  /** Attempts of the status write when it loses races it can merge (default 5). */
  statusAttempts?: number;
}

export interface PatchCallOptions {
  signal?: AbortSignal;
}

/** Metadata a controller may change; the rest (resourceVersion, generation, managedFields, ...) is the server's. */
const WRITABLE_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/**
 * The one way a reconciler writes an object, after upstream Cluster API's `util/patch`: snapshot the object as read,
 * let the reconcile change a copy, then `patch()` sends what differs and nothing when nothing does:
 * - metadata (labels, annotations, finalizers, owner references) and spec (every top-level field but status) in one
 *   merge patch, conditional on the resourceVersion read: a concurrent write makes it fail with a conflict, and the
 *   reconcile starts over from the fresh cache;
 * - status in one merge patch on the status subresource, also conditional; when it loses a race it is merged onto
 *   the object as it is now (a 3-way merge per top-level field and per condition type, see `ownedConditions`) and
 *   sent again, so concurrent writers of different conditions never overwrite each other.
 * `patch()` returns the object as the server last answered: continue from it for further writes.
 */
export class PatchHelper<T extends PatchableObject> {
  private base: T;
  private readonly owned: ReadonlySet<string>;
  private readonly statusSubresource: boolean;

  constructor(
    private readonly resources: ResourceClient<T>,
    obj: T,
    private readonly options: PatchHelperOptions = {},
  ) {
    this.base = structuredClone(obj);
    this.owned = new Set(options.ownedConditions ?? []);
    this.statusSubresource = options.statusSubresource ?? true;
  }

  /** The object as last read or written: what `patch()` diffs against. */
  get before(): T {
    return this.base;
  }

  /** A copy of the object to change and pass to `patch()`. */
  draft(): T {
    return structuredClone(this.base);
  }

  /** Whether `after` differs from the object as read in anything this helper would write. */
  hasChanges(after: T): boolean {
    return (
      mergeDiff(this.mainOf(this.base), this.mainOf(after)) !== undefined ||
      (this.statusSubresource && !deepEqual(this.base.status ?? {}, after.status ?? {}))
    );
  }

  /** Writes what `after` changes: metadata and spec first, then status. Returns the object as last written. */
  async patch(after: T, call: PatchCallOptions = {}): Promise<T> {
    let latest = await this.patchMain(after, call);
    // Removing the last finalizer of a deleted object deletes it: there is no status left to write.
    const gone = latest.metadata?.deletionTimestamp && (latest.metadata.finalizers ?? []).length === 0;
    if (this.statusSubresource && !gone) latest = await this.patchStatus(latest, restamped(after, this.base, latest), call);
    this.base = structuredClone(latest);
    return latest;
  }

  private mainOf(obj: T): Record<string, unknown> {
    const { apiVersion: _v, kind: _k, metadata, status, ...rest } = obj as Record<string, unknown> &
      KubernetesObject;
    const meta = Object.fromEntries(
      WRITABLE_METADATA.map((field) => [field, metadata?.[field]]).filter(([, v]) => v !== undefined),
    );
    return { metadata: meta, ...rest, ...(this.statusSubresource ? {} : { status }) };
  }

  private async patchMain(after: T, call: PatchCallOptions): Promise<T> {
    const diff = mergeDiff(this.mainOf(this.base), this.mainOf(after));
    if (!diff) return this.base;
    const read = this.base.metadata?.resourceVersion;
    const body = { ...diff, metadata: { ...(diff['metadata'] as object), resourceVersion: read } };
    const written = await this.resources.mergePatch(refOf(this.base), body, { signal: call.signal });
    this.options.ownWrites?.record(written, read);
    return written;
  }

  /**
   * Sends the status changes the reconcile made (from `this.base.status` to `after.status`) on top of `latest`,
   * merging onto a fresher copy of the object each time the write loses a race.
   */
  private async patchStatus(latest: T, after: T, call: PatchCallOptions): Promise<T> {
    const changes = statusChanges(this.base.status, after.status);
    if (changes.fields.size === 0 && changes.conditions.size === 0) return latest;
    const attempts = this.options.statusAttempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const merged = this.mergeOnto(latest, changes);
      const diff = mergeDiff(latest.status ?? {}, merged);
      if (!diff) return latest;
      try {
        const written = await this.resources.mergePatch(
          refOf(latest),
          { metadata: { resourceVersion: latest.metadata?.resourceVersion }, status: diff },
          { subresource: 'status', signal: call.signal },
        );
        // The version this write replaced, not only the one first read: after a metadata or spec write, or a fresh
        // read, the cache can show that in-between version, and a reconcile from it would write on an outdated base.
        this.options.ownWrites?.record(written, latest.metadata?.resourceVersion);
        return written;
      } catch (err) {
        if (!isConflict(err) || attempt >= attempts) throw err;
        latest = await this.resources.get(refOf(latest), call.signal);
      }
    }
  }

  /** `latest.status` with this reconcile's changes applied; throws StaleObjectError where they collide. */
  private mergeOnto(latest: T, changes: StatusChanges): Record<string, unknown> {
    const base = (this.base.status ?? {}) as Record<string, unknown>;
    const current = { ...((latest.status ?? {}) as Record<string, unknown>) };
    for (const [field, value] of changes.fields) {
      if (!deepEqual(current[field], base[field]) && !deepEqual(current[field], value)) {
        throw this.collision(`status.${field}`);
      }
      if (value === undefined) delete current[field];
      else current[field] = value;
    }
    if (changes.conditions.size === 0) return current;
    const baseConditions = (base['conditions'] ?? []) as ConditionLike[];
    const conditions = [...((current['conditions'] ?? []) as ConditionLike[])];
    for (const [type, value] of changes.conditions) {
      // A controller never deletes a condition it does not own: a status computed from a copy that lacked it
      // (an older read) must not take another owner's condition away.
      if (value === undefined && this.owned.size > 0 && !this.owned.has(type)) continue;
      const index = conditions.findIndex((c) => c.type === type);
      const now = index >= 0 ? conditions[index] : undefined;
      const was = baseConditions.find((c) => c.type === type);
      if (!this.owned.has(type) && !deepEqual(now, was) && !deepEqual(now, value)) {
        throw this.collision(`condition ${type}`);
      }
      if (value === undefined) {
        if (index >= 0) conditions.splice(index, 1);
      } else if (index >= 0) conditions[index] = value;
      else conditions.push(value);
    }
    current['conditions'] = conditions;
    return current;
  }

  private collision(what: string): StaleObjectError {
    return new StaleObjectError(`${this.resources.type.kind} ${objectKey(this.base)}: ${what} changed meanwhile`);
  }
}

/**
 * The status computed for the spec this reconcile wrote in the same patch: its spec write bumped the generation, so
 * what it stamped with the generation it read (`observedGeneration`, and each condition's) belongs to the new one.
 * Without this the next reconcile would write the status again only to move the stamps.
 */
function restamped<T extends PatchableObject>(after: T, read: T, written: T): T {
  const before = read.metadata?.generation;
  const now = written.metadata?.generation;
  if (before === undefined || now === undefined || before === now || !after.status) return after;
  const status = { ...(after.status as Record<string, unknown>) };
  if (status['observedGeneration'] === before) status['observedGeneration'] = now;
  if (Array.isArray(status['conditions'])) {
    status['conditions'] = (status['conditions'] as { observedGeneration?: number }[]).map((c) =>
      c.observedGeneration === before ? { ...c, observedGeneration: now } : c,
    );
  }
  return { ...after, status };
}

interface StatusChanges {
  /** Top-level status fields (but conditions) the reconcile changed; undefined = removed. */
  fields: Map<string, unknown>;
  /** Condition types the reconcile changed; undefined = removed. */
  conditions: Map<string, ConditionLike | undefined>;
}

function statusChanges(before: object | undefined, after: object | undefined): StatusChanges {
  const from = (before ?? {}) as Record<string, unknown>;
  const to = (after ?? {}) as Record<string, unknown>;
  const fields = new Map<string, unknown>();
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (key !== 'conditions' && !deepEqual(from[key], to[key])) fields.set(key, to[key]);
  }
  const conditions = new Map<string, ConditionLike | undefined>();
  const fromConditions = (from['conditions'] ?? []) as ConditionLike[];
  const toConditions = (to['conditions'] ?? []) as ConditionLike[];
  for (const type of new Set([...fromConditions, ...toConditions].map((c) => c.type))) {
    const was = fromConditions.find((c) => c.type === type);
    const now = toConditions.find((c) => c.type === type);
    if (!deepEqual(was, now)) conditions.set(type, now);
  }
  return { fields, conditions };
}
