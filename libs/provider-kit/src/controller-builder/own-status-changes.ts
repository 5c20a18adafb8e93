import { type KubernetesObject } from '@kubernetes/client-node';
import { type Condition } from '@capstan/api';
import { deepEqual } from '@capstan/kube';

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
