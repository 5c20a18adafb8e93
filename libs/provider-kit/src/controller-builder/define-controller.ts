import { type KubernetesObject } from '@kubernetes/client-node';
import { type PausingCluster } from '@capstan/api';
import {
  OwnWrites,
  type CacheScope,
  type Controller,
  type EventRecorder,
  type Informer,
  type InformerRef,
  type Reconciler,
  type ReconcileResult,
  type ResourceType,
  type WakeSource,
  type WatchEvent,
} from '@capstan/kube';
import {
  objectReconciler,
  type DeletionResult,
  type ReconciledObject,
  type ReconcileScope,
} from '../reconciler-kit/object-reconciler.js';
import { type ServiceContext } from '../service-context.js';
import { conditionsWrittenBy, type ConditionPolicy } from './condition-policy.js';
import { changedBeyondOwnStatus } from './own-status-changes.js';
import { type WatchDeclaration } from './watch.js';

/** What of its service a controller uses: the client, the caches, the outbox, the options and the registry. */
export type ControllerHost = Pick<
  ServiceContext,
  'client' | 'manager' | 'outbox' | 'options' | 'logger' | 'controllers' | 'recorder'
>;

/** What a controller's wiring is given: its service, the primary kind's cache, and the controller's recorder. */
export interface ControllerKit<T extends KubernetesObject> {
  readonly context: ControllerHost;
  /** The shared informer of the primary kind. */
  readonly primary: Informer<T>;
  /** Kubernetes Events on objects, reported as `capstan.dev/<controller>`. */
  readonly recorder: EventRecorder;
  /** The shared informer of another kind (the same one the watches resolve to). */
  informer<O extends KubernetesObject>(type: ResourceType, scope?: CacheScope): Informer<O>;
}

/** The controller's own logic, run inside the reconciler kit's envelope (objectReconciler). */
export interface ReconcilerParts<T extends ReconciledObject> {
  /** The Cluster whose `spec.paused` pauses the object. */
  clusterOf?(obj: T): PausingCluster | undefined;
  reconcileNormal(scope: ReconcileScope<T>): Promise<ReconcileResult | void>;
  /** Without it, a deleting object only has its finalizer removed. */
  reconcileDelete?(scope: ReconcileScope<T>): Promise<DeletionResult | void>;
  /** Called once the object is gone from the cache (to drop per-object state, or stop what runs for it). */
  forget?(key: string): void | Promise<void>;
  now?: () => Date;
}

/** What a controller reads besides its primary kind, and its logic: made once the service's caches exist. */
export interface ControllerWiring<T extends ReconciledObject> {
  reconciler: ReconcilerParts<T>;
  /** Kinds this controller creates: an event wakes the controller owner when it is of the primary kind. */
  owns?: readonly InformerRef[];
  /** Other kinds, mapped to primary keys (see `watch`). */
  watches?: readonly WatchDeclaration[];
  /** Wake-ups from outside the informers (e.g. a workload cluster's connection), mapped to primary keys. */
  sources?: readonly WakeSource[];
}

/** One controller, declared in one place (after controller-runtime's builder: For, Owns, Watches). */
export interface ControllerDefinition<T extends ReconciledObject> {
  /** Names the controller in logs, metrics, /admin/controllers, its Events and the hand-off routes. */
  name: string;
  /** The primary kind: every add and delete wakes its key, and every update worth a reconcile (see `updates`). */
  for: ResourceType;
  conditions: ConditionPolicy;
  /** Added before the first reconcile, removed when `reconcileDelete` is done. */
  finalizer?: string;
  /**
   * Which primary updates by others are worth a reconcile. Default: those that change more than the conditions
   * this controller writes. The controller's own writes never are, unless `reconcileOwnWrite` says so.
   */
  updates?: (event: WatchEvent<T>) => boolean;
  /** An own write that still needs a reconcile (e.g. one that makes a watch's index find the object). */
  reconcileOwnWrite?: (event: WatchEvent<T>) => boolean;
  wire(kit: ControllerKit<T>): ControllerWiring<T>;
}

/** A declared controller: registered on a service with `register(context)` in its setup. */
export interface DeclaredController<T extends ReconciledObject> {
  readonly definition: ControllerDefinition<T>;
  /**
   * The reconcile function alone on `kit` and a fresh own-write tracker, for a test that steps reconciles itself
   * (a registered controller gets it from `register`).
   */
  reconcilerOn(kit: ControllerKit<T>): Reconciler;
  /** Adds the controller to the service: its watches, its reconcile in the kit's envelope, its options. */
  register(context: ControllerHost): Controller<T>;
}

/**
 * Declares a controller: its kind, what wakes it, the conditions it writes and its logic. Registering it wires one
 * own-write tracker to both the envelope and the primary watch predicate (so its own writes do not come back as
 * reconciles), the service's one outbox, and concurrency and resync from the service's options.
 */
export function defineController<T extends ReconciledObject>(
  definition: ControllerDefinition<T>,
): DeclaredController<T> {
  const build = (kit: ControllerKit<T>, ownWrites: OwnWrites) => {
    const wiring = definition.wire(kit);
    const parts = wiring.reconciler;
    const reconcile = objectReconciler<T>({
      cache: kit.primary,
      resources: kit.context.client.resource<T>(definition.for),
      conditions: definition.conditions,
      finalizer: definition.finalizer,
      ownWrites,
      outbox: kit.context.outbox,
      // Bound calls: the parts are often a class instance whose methods use `this`.
      clusterOf: parts.clusterOf && ((obj) => parts.clusterOf!(obj)),
      reconcileNormal: (scope) => parts.reconcileNormal(scope),
      reconcileDelete: parts.reconcileDelete && ((scope) => parts.reconcileDelete!(scope)),
      forget: parts.forget && ((key) => parts.forget!(key)),
      now: parts.now,
    });
    return { wiring, reconcile };
  };
  return {
    definition,
    reconcilerOn: (kit) => build(kit, new OwnWrites()).reconcile,
    register(context) {
      const kit = controllerKit<T>(context, definition);
      const ownWrites = new OwnWrites();
      const { wiring, reconcile } = build(kit, ownWrites);
      const predicate = primaryPredicate(definition, ownWrites);
      return context.controllers.add<T>({
        name: definition.name,
        for: kit.primary,
        reconcile,
        predicate,
        owns: wiring.owns ? [...wiring.owns] : undefined,
        watches: wiring.watches?.map((w) => ({
          for: w.source,
          map: (obj: KubernetesObject) => [...w.map(obj)],
          predicate: w.predicate,
          delayMs: w.batchMs,
        })),
        sources: wiring.sources ? [...wiring.sources] : undefined,
        maxConcurrentReconciles: context.options.concurrency,
        resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
      });
    },
  };
}

/**
 * Which events of the primary kind wake a controller: adds and deletes; updates by others that `updates` accepts (by
 * default, those that change more than the conditions the controller writes); its own writes only when
 * `reconcileOwnWrite` says so.
 */
export function primaryPredicate<T extends ReconciledObject>(
  definition: Pick<ControllerDefinition<T>, 'conditions' | 'updates' | 'reconcileOwnWrite'>,
  ownWrites: OwnWrites,
): (event: WatchEvent<T>) => boolean {
  const own = new Set(conditionsWrittenBy(definition.conditions));
  const { updates, reconcileOwnWrite } = definition;
  // Every update of the primary kind comes through here: one own-write lookup, then one test.
  return (event) => {
    if (event.type !== 'update') return true;
    if (ownWrites.isOwn(event.object)) return reconcileOwnWrite?.(event) ?? false;
    return updates ? updates(event) : changedBeyondOwnStatus(event.oldObject, event.object, own);
  };
}

/** The kit a controller's wiring gets on a service. */
export function controllerKit<T extends KubernetesObject>(
  context: ControllerHost,
  definition: { name: string; for: ResourceType },
): ControllerKit<T> {
  return {
    context,
    primary: context.manager.informer<T>(definition.for),
    recorder: context.recorder(definition.name),
    informer: <O extends KubernetesObject>(type: ResourceType, scope?: CacheScope) =>
      context.manager.informer<O>(type, scope),
  };
}
