import { type KubernetesObject } from '@kubernetes/client-node';
import { ConditionType, type Condition } from '@capstan/api';
import { deepEqual, type OwnWrites, type WatchEvent } from '@capstan/kube';
import { RECONCILE_SUCCEEDED_CONDITION, type ConditionPolicy } from './condition-policy.js';

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

/** Every condition type a controller writes under its policy: its own, and the kit's `Paused` and failure condition. */
export function conditionsWrittenBy(policy: ConditionPolicy): string[] {
  return policy.secondary
    ? [...policy.owned, policy.secondary.failureCondition]
    : [...policy.owned, ConditionType.Paused, RECONCILE_SUCCEEDED_CONDITION];
}

/**
 * The primary watch predicate of a controller run by the reconciler kit: adds and deletes, and updates but for the
 * controller's own writes and status writes that touch only conditions it writes (see conditionsWrittenBy), which
 * would only reconcile the state it just computed.
 */
export function worthReconciling<T extends Watched>(
  ownWrites: OwnWrites,
  policy: ConditionPolicy,
): (event: WatchEvent<T>) => boolean {
  const own = new Set(conditionsWrittenBy(policy));
  return (event) =>
    event.type !== 'update' ||
    (!ownWrites.isOwn(event.object) && changedBeyondOwnStatus(event.oldObject, event.object, own));
}
