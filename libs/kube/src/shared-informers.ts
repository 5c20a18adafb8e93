import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeClient } from './client.js';
import { Informer, type InformerOptions } from './informer.js';
import type { ResourceType } from './resource.js';

interface SharedInformer {
  informer: Informer;
  /** The managers that use it; the last to leave stops it. */
  users: Set<object>;
}

/**
 * Informers shared by the managers of one process: services hosted together (the all-in-one) cache each kind and
 * scope once instead of once per service, and open one list and watch for it. Each manager still starts, reads and
 * handles events as with informers of its own; an informer stops when the last manager that used it leaves. The
 * informers read through a client of their own, so a manager that closes its client does not cut the others' caches.
 */
export class SharedInformers {
  private readonly entries = new Map<string, SharedInformer>();
  private client: KubeClient | undefined;

  /** The informer for `key`, created with `options` by the first manager that asks (`user`). */
  informer<T extends KubernetesObject>(
    key: string,
    resource: ResourceType,
    options: InformerOptions<T>,
    user: object,
    connectionOf: KubeClient,
  ): Informer<T> {
    let entry = this.entries.get(key);
    if (!entry) {
      this.client ??= new KubeClient(connectionOf.connection, {
        requestTimeoutMs: connectionOf.requestTimeoutMs,
        userAgent: connectionOf.userAgent,
      });
      entry = { informer: new Informer(this.client, resource, options as InformerOptions) as Informer, users: new Set() };
      this.entries.set(key, entry);
    }
    entry.users.add(user);
    return entry.informer as unknown as Informer<T>;
  }

  /** `user` leaves: the informers no other manager uses stop, and the client closes with the last of them. */
  async release(user: object): Promise<void> {
    const unused: Informer[] = [];
    for (const [key, entry] of this.entries) {
      if (!entry.users.delete(user) || entry.users.size > 0) continue;
      this.entries.delete(key);
      unused.push(entry.informer);
    }
    await Promise.all(unused.map((informer) => informer.stop()));
    if (this.entries.size === 0 && this.client) {
      const client = this.client;
      this.client = undefined;
      await client.close();
    }
  }

  /** Informers in use (for tests and admin pages). */
  get size(): number {
    return this.entries.size;
  }
}
