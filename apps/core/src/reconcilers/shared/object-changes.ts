import { type KubernetesObject } from '@kubernetes/client-node';
import { ConditionType, type Condition } from '@capstan/api';
import { deepEqual, type InformerEventHandler, type OwnWrites, type WatchEvent } from '@capstan/kube';
import { RECONCILE_SUCCEEDED_CONDITION } from '@capstan/provider-kit';

type Watched = KubernetesObject & { spec?: unknown; status?: { conditions?: Condition[] } };

/** Metadata a reconcile can depend on: resourceVersion and managedFields move on every write, so they are left out. */
function meaningfulMetadata(obj: KubernetesObject) {
  const { resourceVersion: _rv, managedFields: _mf, ...rest } = obj.metadata ?? {};
  return rest;
}

/**
 * Whether an update is more than a status write of this controller: metadata or spec changed, or a condition
 * another controller owns (e.g. a MachineHealthCheck's HealthCheckSucceeded) changed. Status writes of the
 * controller itself then do not trigger a second reconcile.
 */
export function changedBeyondOwnStatus(
  before: Watched | undefined,
  after: Watched,
  ownConditions: ReadonlySet<string>,
): boolean {
  if (!before) return true;
  if (!deepEqual(meaningfulMetadata(before), meaningfulMetadata(after))) return true;
  if (!deepEqual(before.spec, after.spec)) return true;
  const foreign = (obj: Watched) =>
    (obj.status?.conditions ?? [])
      .filter((c) => !ownConditions.has(c.type))
      .map((c) => [c.type, c.status, c.reason, c.message])
      .sort();
  return !deepEqual(foreign(before), foreign(after));
}

/**
 * The watch predicate of a controller run by the reconciler kit: adds and deletes, and updates but for the
 * controller's own writes and status writes that touch only conditions it owns (with the kit's `Paused` and
 * `ReconcileSucceeded`), which would only reconcile the state it just computed.
 */
export function worthReconciling<T extends Watched>(
  ownWrites: OwnWrites,
  ownConditions: Iterable<string>,
): (event: WatchEvent<T>) => boolean {
  const own = new Set([...ownConditions, ConditionType.Paused, RECONCILE_SUCCEEDED_CONDITION]);
  return (event) =>
    event.type !== 'update' ||
    (!ownWrites.isOwn(event.object) && changedBeyondOwnStatus(event.oldObject, event.object, own));
}

/**
 * An informer handler that enqueues the keys `keysOf` names when an object is added or deleted, or when its
 * `fingerprint` (the fields the target reconciler reads) changes.
 */
export function onRelevantChange<T extends KubernetesObject>(
  fingerprint: (obj: T) => unknown,
  keysOf: (obj: T) => string[],
  enqueue: (key: string) => void,
): InformerEventHandler<T> {
  const all = (obj: T) => {
    for (const key of keysOf(obj)) enqueue(key);
  };
  return {
    onAdd: all,
    onDelete: all,
    onUpdate: (before, after) => {
      if (deepEqual(fingerprint(before), fingerprint(after))) return;
      all(before);
      all(after);
    },
  };
}
