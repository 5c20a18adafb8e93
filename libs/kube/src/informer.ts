import { type KubernetesObject } from '@kubernetes/client-node';
import { HttpMethod } from './http-method.js';
import type { Logger } from 'pino';
import { JitteredBackoff, sleep, type BackoffOptions } from './backoff.js';
import type { KubeClient } from './client.js';
import {
  isGone,
  isServiceUnavailable,
  isTooManyRequests,
  isTransportError,
  KubeApiError,
  KubeTransportError,
  type KubeStatus,
} from './errors.js';
import type { IndexFunc } from './indexers.js';
import { JsonValueSplitter } from './json-stream.js';
import { objectKey } from './keys.js';
import { defaultLogger } from './logger.js';
import type { ResourceClient } from './resource-client.js';
import { resourceId, resourcePath, type ResourceType } from './resource.js';
import { Store } from './store.js';

export interface InformerOptions<T extends KubernetesObject = KubernetesObject> {
  /** Watch one namespace only; all namespaces by default. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per list page. */
  pageSize?: number;
  /**
   * Restart a watch that delivered nothing (no event, no bookmark) for this long (default 180 s). The
   * server sends bookmarks to watches that ask for them every minute or so (gaps up to ~120 s were
   * measured on kube-apiserver 1.34), so a healthy quiet watch does not trip it.
   */
  watchdogMs?: number;
  /** The server ends each watch after a random time in this range; the informer then resumes from its last resourceVersion. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Backoff between restarts after errors. */
  backoff?: BackoffOptions;
  indexers?: Record<string, IndexFunc<T>>;
  logger?: Logger;
  /**
   * Cache `metadata.managedFields` (dropped by default: it is often the largest part of an object and few readers
   * need it; a write without it leaves the server's entries as they are).
   */
  keepManagedFields?: boolean;
}

export interface InformerEventHandler<T extends KubernetesObject = KubernetesObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** Receives the last state known: the deleted object from the watch, or the cached one after a relist. */
  onDelete?(obj: T): void;
}

export interface InformerStats {
  /** Complete lists (the first one and every relist). */
  lists: number;
  watches: number;
  events: number;
  bookmarks: number;
  /** Watches that ended with 410 Gone (resourceVersion too old) and made the informer relist. */
  goneRelists: number;
  watchdogRestarts: number;
  errorRestarts: number;
  lastActivityAt?: number;
}

export class CacheSyncTimeoutError extends Error {
  constructor(
    readonly resource: string,
    readonly timeoutMs: number,
  ) {
    super(`cache of ${resource} did not sync within ${timeoutMs} ms`);
    this.name = 'CacheSyncTimeoutError';
  }
}

type WatchEnd = 'closed' | 'gone';

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubernetesObject;
}

const QUICK_CLOSE_MS = 1000;

/**
 * Keeps a cache of one kind current: a paginated list, then a watch from the list's resourceVersion with
 * bookmarks. 410 Gone relists at once; any other failure restarts with jittered backoff (resuming the
 * watch after connection failures, relisting otherwise); a watchdog restarts a watch that went silent. At most one request is open at a time, and stop() aborts it.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly stats: InformerStats = {
    lists: 0,
    watches: 0,
    events: 0,
    bookmarks: 0,
    goneRelists: 0,
    watchdogRestarts: 0,
    errorRestarts: 0,
  };
  private readonly store = new Store<T>();
  private readonly handlers = new Set<InformerEventHandler<T>>();
  private readonly resources: ResourceClient<T>;
  private readonly log: Logger;
  private readonly watchdogMs: number;
  private resourceVersion = '';
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private loop: Promise<void> | undefined;
  private stopController: AbortController | undefined;
  private cycle: AbortController | undefined;

  constructor(
    readonly client: KubeClient,
    readonly resource: ResourceType,
    private readonly options: InformerOptions<T> = {},
  ) {
    this.resources = client.resource<T>(resource);
    this.watchdogMs = options.watchdogMs ?? 180_000;
    this.log = (options.logger ?? defaultLogger()).child({
      informer: resourceId(resource),
      namespace: options.namespace,
    });
    for (const [name, fn] of Object.entries(options.indexers ?? {})) this.store.addIndexer(name, fn);
  }

  get running(): boolean {
    return this.loop !== undefined;
  }

  start(): void {
    if (this.loop) return;
    const stop = new AbortController();
    this.stopController = stop;
    this.loop = this.supervise(stop.signal).finally(() => {
      this.loop = undefined;
    });
  }

  /** Aborts the open request and waits for the loop to end; the cache keeps its content. */
  async stop(): Promise<void> {
    this.stopController?.abort();
    this.cycle?.abort();
    await this.loop;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the cache; rejects with CacheSyncTimeoutError after `timeoutMs`. */
  waitForSync(timeoutMs = 120_000): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        reject(new CacheSyncTimeoutError(resourceId(this.resource), timeoutMs));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.syncWaiters.push(done);
    });
  }

  /** Registers handlers; objects already cached are replayed as adds. Returns the unregister function. */
  addEventHandler(handler: InformerEventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.store.list()) this.deliver(() => handler.onAdd?.(obj));
    return () => this.handlers.delete(handler);
  }

  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.store.addIndexer(name, fn);
  }

  hasIndexer(name: string): boolean {
    return this.store.hasIndexer(name);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  /**
   * The cached object, else the API server's (the cache lags what was just created, and holds nothing before its
   * first list): as controller-runtime's cached client reads, without a request for what the cache holds. The
   * cached object is shared: not to be changed.
   */
  async getOrFetch(namespace: string | undefined, name: string): Promise<T | undefined> {
    return this.getByName(namespace, name) ?? this.resources.getIfExists({ namespace, name });
  }

  list(namespace?: string): T[] {
    return this.store.list(namespace);
  }

  keys(): string[] {
    return this.store.keys();
  }

  get size(): number {
    return this.store.size;
  }

  byIndex(name: string, value: string): T[] {
    return this.store.byIndex(name, value);
  }

  /** The resourceVersion the cache reflects (from the last list, event or bookmark). */
  lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** The loop handles every API failure itself; this only keeps a bug in it from silently ending the informer. */
  private async supervise(stopSignal: AbortSignal): Promise<void> {
    while (!stopSignal.aborted) {
      try {
        await this.run(stopSignal);
      } catch (err) {
        this.log.error({ err }, 'informer loop failed: restarting it');
        await sleep(1000, stopSignal);
      }
    }
  }

  private async run(stopSignal: AbortSignal): Promise<void> {
    const backoff = new JitteredBackoff(this.options.backoff);
    let needList = true;
    while (!stopSignal.aborted) {
      const cycle = new AbortController();
      this.cycle = cycle;
      let watchdogFired = false;
      let timer: NodeJS.Timeout | undefined;
      const kick = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          watchdogFired = true;
          cycle.abort();
        }, this.watchdogMs);
      };
      let connectedAt: number | undefined;
      let sawActivity = false;
      try {
        kick();
        if (needList) {
          await this.relist(cycle.signal, kick);
          needList = false;
        }
        const end = await this.watch(
          cycle.signal,
          () => {
            connectedAt = Date.now();
            kick();
          },
          () => {
            sawActivity = true;
            kick();
          },
        );
        if (end === 'gone') {
          this.stats.goneRelists++;
          this.log.info({ resourceVersion: this.resourceVersion }, 'watch expired (410 Gone): relisting');
          needList = true;
          backoff.reset();
        } else if (!sawActivity && connectedAt !== undefined && Date.now() - connectedAt < QUICK_CLOSE_MS) {
          // A server that closes every watch at once would otherwise be hammered in a tight loop.
          await sleep(backoff.next(), stopSignal);
        } else {
          backoff.reset();
        }
      } catch (err) {
        if (stopSignal.aborted) break;
        if (watchdogFired) {
          this.stats.watchdogRestarts++;
          this.log.warn(
            { watchdogMs: this.watchdogMs, resourceVersion: this.resourceVersion },
            'watch silent: restarting it',
          );
          continue;
        }
        if (isGone(err)) {
          // A 410 on the watch request itself, or on a list page whose continue token expired.
          this.stats.goneRelists++;
          this.log.info({ err: describe(err) }, 'resourceVersion expired (410 Gone): relisting');
          needList = true;
          continue;
        }
        this.stats.errorRestarts++;
        // As client-go's reflector, an unreachable or overloaded server (connection failure, 429, 503 while
        // starting) resumes the watch from the last resourceVersion, and a 410 then forces the relist; any
        // other failure relists.
        if (!isTransportError(err) && !isTooManyRequests(err) && !isServiceUnavailable(err)) needList = true;
        // A watch that was up and healthy before this failure starts the backoff over, as client-go's reflector does
        // after a healthy period: this is a new outage, not the latest attempt of the last one. Without it a workload
        // API server restarted a few times left its informers waiting 30 s and more after it was back.
        if (connectedAt !== undefined && (sawActivity || Date.now() - connectedAt >= QUICK_CLOSE_MS)) backoff.reset();
        const delayMs = backoff.next();
        this.log.warn(
          { err: describe(err), delayMs, relist: needList },
          'list/watch failed: restarting after backoff',
        );
        await sleep(delayMs, stopSignal);
      } finally {
        clearTimeout(timer);
        cycle.abort();
      }
    }
  }

  /** Reads every page, then brings the cache in line at once, emitting adds, updates and deletes. */
  private async relist(signal: AbortSignal, onPage: () => void): Promise<void> {
    const items: T[] = [];
    let resourceVersion = '';
    let token: string | undefined;
    do {
      const page = await this.resources.list({
        namespace: this.options.namespace,
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        limit: this.options.pageSize ?? 500,
        continue: token,
        signal,
      });
      onPage();
      for (const item of page.items) items.push(this.cacheable(item));
      resourceVersion = page.resourceVersion;
      token = page.continue;
    } while (token);
    this.stats.lists++;
    this.stats.lastActivityAt = Date.now();
    const listed = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      listed.add(key);
      const previous = this.store.upsert(obj);
      if (!previous) this.emitAdd(obj);
      else if (previous.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.emitUpdate(previous, obj);
    }
    for (const key of this.store.keys()) {
      if (listed.has(key)) continue;
      const gone = this.store.delete(key);
      if (gone) this.emitDelete(gone);
    }
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ objects: items.length, resourceVersion }, 'cache synced');
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async watch(
    signal: AbortSignal,
    onConnected: () => void,
    onActivity: () => void,
  ): Promise<WatchEnd> {
    const { min, max } = this.options.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const path = resourcePath(this.resource, { namespace: this.options.namespace });
    const body = await this.client.stream({
      method: HttpMethod.GET,
      path,
      query: {
        watch: 'true',
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: Math.round(min + Math.random() * (max - min)),
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
      },
      signal,
    });
    this.stats.watches++;
    onConnected();
    const decoder = new TextDecoder();
    const splitter = new JsonValueSplitter();
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    try {
      for (;;) {
        let chunk: IteratorResult<Buffer>;
        try {
          chunk = await chunks.next();
        } catch (err) {
          throw new KubeTransportError('WATCH', path, err);
        }
        if (chunk.done) return 'closed';
        // A JSON sequence, not lines: some servers pretty-print each event across lines.
        for (const text of splitter.push(decoder.decode(chunk.value, { stream: true }))) {
          onActivity();
          if (this.apply(JSON.parse(text) as WatchEvent, path) === 'gone') return 'gone';
        }
      }
    } finally {
      // Ends the request when the watch stops early (a 'gone' or an error); nothing is left to fail later.
      await chunks.return?.().catch(() => undefined);
    }
  }

  private apply(event: WatchEvent, path: string): 'gone' | undefined {
    this.stats.lastActivityAt = Date.now();
    const obj = this.cacheable(event.object as T);
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        this.stats.events++;
        this.advance(obj);
        const previous = this.store.upsert(obj);
        if (previous) this.emitUpdate(previous, obj);
        else this.emitAdd(obj);
        return undefined;
      }
      case 'DELETED': {
        this.stats.events++;
        this.advance(obj);
        this.store.delete(objectKey(obj));
        this.emitDelete(obj);
        return undefined;
      }
      case 'BOOKMARK':
        this.stats.bookmarks++;
        this.advance(obj);
        return undefined;
      case 'ERROR': {
        const status = event.object as KubeStatus;
        if (status.code === 410) return 'gone';
        throw new KubeApiError('WATCH', path, status, status.code ?? 500);
      }
      default:
        return undefined;
    }
  }

  private cacheable(obj: T): T {
    if (this.options.keepManagedFields || !obj.metadata?.managedFields) return obj;
    // Rebuilt rather than `delete`d: deleting a property can turn an object into a slower, larger dictionary.
    const { managedFields: _dropped, ...metadata } = obj.metadata;
    obj.metadata = metadata;
    return obj;
  }

  private advance(obj: KubernetesObject): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }

  private emitAdd(obj: T): void {
    for (const h of this.handlers) this.deliver(() => h.onAdd?.(obj));
  }

  private emitUpdate(oldObj: T, newObj: T): void {
    for (const h of this.handlers) this.deliver(() => h.onUpdate?.(oldObj, newObj));
  }

  private emitDelete(obj: T): void {
    for (const h of this.handlers) this.deliver(() => h.onDelete?.(obj));
  }

  /** A failing handler must not stop the informer or starve the other handlers. */
  private deliver(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err: describe(err) }, 'informer event handler threw');
    }
  }
}

function describe(err: unknown): { message: string; code?: number } {
  if (err instanceof KubeApiError) return { message: err.message, code: err.code };
  return { message: err instanceof Error ? err.message : String(err) };
}
