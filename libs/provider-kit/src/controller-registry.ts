import { type KubernetesObject } from '@kubernetes/client-node';
import { type Controller, type ControllerSpec, type Manager, type ResourceType } from '@capstan/kube';

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

  constructor(private readonly manager: Manager) {}

  add<T extends KubernetesObject>(spec: ControllerSpec<T>): Controller<T> {
    const counters: Counters = { reconciles: 0, failures: 0 };
    const reconcile: ControllerSpec<T>['reconcile'] = async (key, ctx) => {
      counters.reconciles++;
      try {
        return await spec.reconcile(key, ctx);
      } catch (error) {
        counters.failures++;
        counters.lastError = { key, message: error instanceof Error ? error.message : String(error), at: new Date().toISOString() };
        throw error;
      }
    };
    const controller = this.manager.addController({ ...spec, reconcile });
    const resource = 'plural' in spec.for ? (spec.for as ResourceType) : (spec.for as { resource: ResourceType }).resource;
    this.entries.set(spec.name, { controller: controller as unknown as Controller, resource, counters });
    return controller;
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
