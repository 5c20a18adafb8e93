import { type KubernetesObject } from '@kubernetes/client-node';
import {
  type Controller,
  type ControllerSpec,
  type Manager,
  type ReconcileResult,
  type ResourceType,
} from '@capstan/kube';

export interface ReconcileFailure {
  key: string;
  message: string;
  at: string;
}

export interface ControllerStatus {
  name: string;
  resource: string;
  running: boolean;
  queueDepth: number;
  reconciles: number;
  failures: number;
  lastError?: ReconcileFailure;
}

interface Counters {
  reconciles: number;
  failures: number;
  lastError?: ReconcileFailure;
}

/** One finished reconcile, as `onReconciled` listeners see it. */
export interface FinishedReconcile {
  controller: string;
  key: string;
  /** What the reconcile returned (undefined when it threw). */
  result?: ReconcileResult | void;
  failed: boolean;
}

interface Entry {
  controller: Controller;
  resource?: ResourceType;
  counters: Counters;
}

const describeResource = (r?: ResourceType) => (r ? `${r.plural}.${r.group || 'core'}` : 'custom');

/**
 * The service's controllers as the admin routes see them: each reconcile is counted and the last
 * failure remembered (its message only; reconcilers never put secrets in errors).
 */
export class ControllerRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly finishedListeners = new Set<(finished: FinishedReconcile) => void>();

  constructor(private readonly manager: Manager) {}

  /** Adds a controller as given; services declare theirs with defineController, which comes through here. */
  add<T extends KubernetesObject>(spec: ControllerSpec<T>): Controller<T> {
    const counters: Counters = { reconciles: 0, failures: 0 };
    const finish = (finished: FinishedReconcile) => {
      for (const listener of this.finishedListeners) listener(finished);
    };
    const reconcile: ControllerSpec<T>['reconcile'] = async (key, rc) => {
      counters.reconciles++;
      try {
        const result = await spec.reconcile(key, rc);
        finish({ controller: spec.name, key, result, failed: false });
        return result;
      } catch (error) {
        counters.failures++;
        counters.lastError = {
          key,
          message: error instanceof Error ? error.message : String(error),
          at: new Date().toISOString(),
        };
        finish({ controller: spec.name, key, failed: true });
        throw error;
      }
    };
    const controller = this.manager.addController({ ...spec, reconcile });
    const resource =
      'plural' in spec.for ? (spec.for as ResourceType) : (spec.for as { resource: ResourceType }).resource;
    this.entries.set(spec.name, { controller: controller as unknown as Controller, resource, counters });
    return controller;
  }

  /** Tells `listener` of every reconcile that finishes (tests wait on them); returns the unsubscribe. */
  onReconciled(listener: (finished: FinishedReconcile) => void): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  get(name: string): Controller | undefined {
    return this.entries.get(name)?.controller;
  }

  /** Enqueues a key; false when the controller does not run in this replica (a standby), so nothing was queued. */
  enqueue(name: string, key: string): boolean {
    const controller = this.get(name);
    if (!controller) throw new Error(`no controller named ${name}`);
    if (!controller.running) return false;
    controller.enqueue(key);
    return true;
  }

  /** Enqueues every object of every controller's primary kind: a manual resync. */
  resyncAll(): number {
    let keys = 0;
    for (const { controller, resource } of this.entries.values()) {
      if (!resource) continue;
      for (const key of this.manager.informer(resource).keys()) {
        controller.enqueue(key);
        keys++;
      }
    }
    return keys;
  }

  /** Every object of every controller's primary kind, with its kind (e.g. to show which cluster lands where). */
  *primaryObjects(): Generator<{ object: KubernetesObject; resource: ResourceType }> {
    const seen = new Set<ResourceType>();
    for (const { resource } of this.entries.values()) {
      if (!resource || seen.has(resource)) continue;
      seen.add(resource);
      for (const object of this.manager.informer(resource).list()) yield { object, resource };
    }
  }

  status(): ControllerStatus[] {
    return [...this.entries.entries()].map(([name, e]) => ({
      name,
      resource: describeResource(e.resource),
      running: e.controller.running,
      queueDepth: e.controller.queueDepth,
      reconciles: e.counters.reconciles,
      failures: e.counters.failures,
      ...(e.counters.lastError ? { lastError: e.counters.lastError } : {}),
    }));
  }
}
