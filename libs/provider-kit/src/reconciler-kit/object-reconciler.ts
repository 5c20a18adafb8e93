import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ConditionStatus,
  pausedBecause,
  pausedCondition,
  withConditions,
  type Condition,
  type ConditionInput,
  type PausingCluster,
} from '@capstan/api';
import {
  describeFailure,
  isConflict,
  isNotFound,
  PatchHelper,
  runWithoutCallSignal,
  type OwnWrites,
  type PatchableObject,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  type ResourceClient,
} from '@capstan/kube';
import {
  conditionsWrittenBy,
  failureConditionOf,
  type ConditionPolicy,
} from '../controller-builder/condition-policy.js';
import type { EventOutbox, OwedEvent } from './event-outbox.js';

export { RECONCILE_SUCCEEDED_CONDITION } from '../controller-builder/condition-policy.js';

/** How soon a reconcile that lost a write race, or found the cache behind its own write, runs again. */
export const CONFLICT_REQUEUE_MS = 50;

/** An object the kit reconciles: patchable, with conditions in its status. */
export type ReconciledObject = PatchableObject & { status?: { conditions?: Condition[] } };

const PAUSED = 'Paused';

/** What a reconcile works with: the object to change, and ways to write early and announce what it wrote. */
export interface ReconcileScope<T extends ReconciledObject> {
  readonly key: string;
  readonly rc: ReconcileContext;
  /** The object as the cache showed it. */
  readonly original: T;
  /** The copy to change; written when the reconcile returns or throws. */
  obj: T;
  /** The object's Cluster, when it has one (from `clusterOf`). */
  readonly cluster: PausingCluster | undefined;
  /** Writes what changed so far, before going on (e.g. a finalizer before creating what it guards). */
  patchNow(): Promise<T>;
  /** Events announcing what this reconcile writes: published after the final write, owed if they cannot be. */
  announce(...events: OwedEvent[]): void;
}

/** A deletion step's result: `done` removes the finalizer (after the status is written). */
export interface DeletionResult extends ReconcileResult {
  done?: boolean;
}

export interface ObjectReconcilerDefinition<T extends ReconciledObject> {
  /** Where the object is read from: the shared informer of its kind. */
  cache: { get(key: string): T | undefined };
  resources: ResourceClient<T>;
  /** The conditions this controller writes (see ConditionPolicy). */
  conditions: ConditionPolicy;
  /** Added before the first reconcile, removed when `reconcileDelete` is done. */
  finalizer?: string;
  ownWrites?: OwnWrites;
  outbox?: EventOutbox;
  /** The Cluster whose `spec.paused` pauses the object. */
  clusterOf?(obj: T): PausingCluster | undefined;
  reconcileNormal(scope: ReconcileScope<T>): Promise<ReconcileResult | void>;
  /** Without it, a deleting object only has its finalizer removed. */
  reconcileDelete?(scope: ReconcileScope<T>): Promise<DeletionResult | void>;
  /** Called once the object is gone from the cache (to drop per-object state, or stop what runs for it). */
  forget?(key: string): void | Promise<void>;
  now?: () => Date;
}

/**
 * The envelope every reconciler of Capstan runs in, after upstream Cluster API's controllers: publish what the
 * object is still owed, read it from the cache, wait while the cache is behind this controller's own write, keep
 * it alone (but for `Paused=True`) while paused, add the finalizer, run the deletion or normal branch on a copy,
 * then write what changed with the PatchHelper. A reconcile that throws still writes what it computed, plus
 * `ReconcileSucceeded=False` naming the failure (no secrets: see describeFailure); a lost write race reconciles
 * again shortly from the fresh cache.
 */
export function objectReconciler<T extends ReconciledObject>(
  definition: ObjectReconcilerDefinition<T>,
): Reconciler {
  const failureCondition = failureConditionOf(definition.conditions);
  const owned = conditionsWrittenBy(definition.conditions);
  const now = definition.now ?? (() => new Date());
  return async (key: string, rc: ReconcileContext): Promise<ReconcileResult | undefined> => {
    const cached = definition.cache.get(key);
    if (!cached) {
      definition.ownWrites?.forget(key);
      await definition.forget?.(key);
      const flushed = (await definition.outbox?.flushGone(definition.resources.type.kind, key)) ?? true;
      return flushed ? undefined : { requeue: true };
    }
    if (definition.ownWrites?.isStale(key, cached.metadata?.resourceVersion)) {
      return { requeueAfter: CONFLICT_REQUEUE_MS };
    }
    // Owed events first; when that rewrote the record on the object, the reconcile goes on from the version written.
    let current = cached;
    let flushed = true;
    if (definition.outbox) {
      ({ done: flushed, obj: current } = await definition.outbox.flush(definition.resources, cached));
      if (current !== cached) definition.ownWrites?.record(current, cached.metadata?.resourceVersion);
    }
    const patch = new PatchHelper(definition.resources, current, {
      ownedConditions: owned,
      ownWrites: definition.ownWrites,
    });
    const events: OwedEvent[] = [];
    const cluster = definition.clusterOf?.(cached);
    const scope: ReconcileScope<T> = {
      key,
      rc,
      original: current,
      obj: patch.draft(),
      cluster,
      patchNow: async () => {
        scope.obj = await patch.patch(scope.obj);
        return scope.obj;
      },
      announce: (...more) => events.push(...more),
    };
    try {
      const result = await runBranch(definition, scope, cluster, failureCondition, now());
      scope.obj = withoutLoneNotPaused(patch, scope.obj);
      await scope.patchNow();
      const published = await publishAnnounced(definition, scope, events);
      // Events still owed (from this reconcile or an earlier one) bring the key back with backoff, not only at resync.
      return !(published && flushed) && !result?.requeueAfter ? { requeue: true } : (result ?? undefined);
    } catch (error) {
      if (isConflict(error)) {
        rc.log.debug(
          { err: { message: describeFailure(error) } },
          'object changed meanwhile: reconciling again',
        );
        return { requeueAfter: CONFLICT_REQUEUE_MS };
      }
      if (isNotFound(error) && scope.obj.metadata?.deletionTimestamp) return undefined;
      // Outside the reconcile's signal: a reconcile that ran past its deadline still records why.
      await runWithoutCallSignal(() => writeFailure(scope, error, failureCondition, now())).catch(
        (writeError: unknown) =>
          rc.log.warn(
            { err: { message: describeFailure(writeError) } },
            'the failed reconcile could not write its status',
          ),
      );
      throw error;
    }
  };
}

async function runBranch<T extends ReconciledObject>(
  definition: ObjectReconcilerDefinition<T>,
  scope: ReconcileScope<T>,
  cluster: PausingCluster | undefined,
  failureCondition: string,
  now: Date,
): Promise<ReconcileResult | void> {
  const obj = scope.obj;
  if (!definition.conditions.secondary) setObjectCondition(obj, pausedCondition(cluster, obj), now);
  if (pausedBecause(cluster, obj)) return undefined;
  const finalizer = definition.finalizer;
  if (obj.metadata?.deletionTimestamp) {
    if (finalizer && !(obj.metadata.finalizers ?? []).includes(finalizer)) return undefined;
    const result = definition.reconcileDelete ? await definition.reconcileDelete(scope) : { done: true };
    markSucceeded(scope.obj, failureCondition, now);
    if (!result?.done) return result;
    await scope.patchNow();
    if (finalizer) {
      scope.obj.metadata!.finalizers = (scope.obj.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
      scope.rc.log.info('deletion done: finalizer removed');
    }
    return undefined;
  }
  if (finalizer && !(obj.metadata?.finalizers ?? []).includes(finalizer)) {
    obj.metadata = { ...obj.metadata, finalizers: [...(obj.metadata?.finalizers ?? []), finalizer] };
  }
  const result = await definition.reconcileNormal(scope);
  markSucceeded(scope.obj, failureCondition, now);
  return result;
}

async function publishAnnounced<T extends ReconciledObject>(
  definition: ObjectReconcilerDefinition<T>,
  scope: ReconcileScope<T>,
  events: OwedEvent[],
): Promise<boolean> {
  if (events.length === 0) return true;
  if (!definition.outbox) throw new TypeError('events announced by a reconciler that has no outbox');
  return definition.outbox.publish(definition.resources, scope.obj, events);
}

/**
 * `obj` without its first Paused=False when that is all a write would say: the report goes with the object's first
 * other change instead of a write of its own (an object that waits for its owner or its Cluster says nothing yet, as
 * upstream's providers write nothing before the object has an owner). Paused=True is always written.
 */
function withoutLoneNotPaused<T extends ReconciledObject>(patch: PatchHelper<T>, obj: T): T {
  const before = (patch.before.status?.conditions ?? []) as Condition[];
  const conditions = (obj.status?.conditions ?? []) as Condition[];
  if (before.some((c) => c.type === PAUSED)) return obj;
  if (!conditions.some((c) => c.type === PAUSED && c.status === ConditionStatus.False)) return obj;
  const candidate = structuredClone(obj);
  const status = candidate.status as { conditions?: Condition[] };
  const rest = conditions.filter((c) => c.type !== PAUSED);
  if (rest.length > 0 || patch.before.status?.conditions !== undefined)
    status.conditions = structuredClone(rest);
  else delete status.conditions;
  if (patch.before.status === undefined && Object.keys(status).length === 0)
    delete (candidate as { status?: unknown }).status;
  return patch.hasChanges(candidate) ? obj : candidate;
}

/** The failure condition goes back to True once a reconcile succeeds after a failure; it is never added otherwise. */
/** The reason the kit gives its failure condition when a reconcile throws. */
const RECONCILE_ERROR_REASON = 'ReconcileError';

function markSucceeded(obj: ReconciledObject, failureCondition: string, now: Date): void {
  const conditions = (obj.status?.conditions ?? []) as Condition[];
  const current = conditions.find((c) => c.type === failureCondition);
  // Only the kit's own failure mark is undone: a second controller may write its failure condition itself (the
  // topology controller's TopologyReconciled False, ClusterClassNotReconciled), and that stands.
  if (!current || current.status === ConditionStatus.True || current.reason !== RECONCILE_ERROR_REASON)
    return;
  setObjectCondition(
    obj,
    { type: failureCondition, status: ConditionStatus.True, reason: 'ReconcileSucceeded' },
    now,
  );
}

async function writeFailure<T extends ReconciledObject>(
  scope: ReconcileScope<T>,
  error: unknown,
  failureCondition: string,
  now: Date,
): Promise<void> {
  if (scope.obj.metadata?.deletionTimestamp && (scope.obj.metadata.finalizers ?? []).length === 0) return;
  setObjectCondition(
    scope.obj,
    {
      type: failureCondition,
      status: ConditionStatus.False,
      reason: RECONCILE_ERROR_REASON,
      message: describeFailure(error),
    },
    now,
  );
  await scope.patchNow();
}

function setObjectCondition(obj: ReconciledObject, input: ConditionInput, now: Date): void {
  const status = (obj.status ?? {}) as NonNullable<ReconciledObject['status']>;
  status.conditions = withConditions(status.conditions, [input], obj.metadata?.generation, now);
  (obj as KubernetesObject & { status?: object }).status = status;
}
