import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { jittered } from './backoff.js';
import type { InformerEventHandler } from './informer.js';
import { objectKey, parseKey } from './keys.js';
import { defaultLogger } from './logger.js';
import { RuntimeMetrics, type ReconcileResultLabel } from './metrics.js';
import { getControllerOf } from './owner-references.js';
import type { RateLimiter } from './rate-limiter.js';
import { groupOf, type ResourceType } from './resource.js';
import { isTerminalError } from './terminal-error.js';
import { DEFAULT_RECONCILE_TIMEOUT_MS, runWithCallSignal } from './call-bounds.js';
import { WorkQueue } from './work-queue.js';
import type { ShardGate } from './sharding/shard-membership.js';

export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (the backoff is reset). */
  requeueAfter?: number;
  /** Reconcile again with backoff, as after an error (prefer requeueAfter). */
  requeue?: boolean;
}

export interface ReconcileContext {
  key: string;
  namespace: string | undefined;
  name: string;
  /** A short random id, also on every line of `log`, to follow one reconcile through the logs. */
  reconcileId: string;
  /** Child logger with controller, namespace, name and reconcileID. */
  log: Logger;
  /**
   * Aborted when the reconcile reaches its deadline or the controller stops at once (leadership lost, or the drain
   * timed out). Every API request made during the reconcile is bound to it (see runWithCallSignal); pass it to
   * other remote calls and waits.
   */
  signal: AbortSignal;
}

/** Reads the current state (from the informer caches) and converges it; throwing retries with backoff. */
export type Reconciler = (
  key: string,
  rc: ReconcileContext,
) => Promise<ReconcileResult | void> | ReconcileResult | void;

/** Turns an event on a watched object into the keys of primary objects to reconcile. */
export type MapFunc<T extends KubernetesObject = KubernetesObject> = (obj: T) => string[];

export interface WatchEvent<T extends KubernetesObject = KubernetesObject> {
  type: 'add' | 'update' | 'delete';
  object: T;
  oldObject?: T;
}

/** Enqueues a primary key, at once or after `delayMs` (a burst of wake-ups then reconciles the key once). */
export type Wake = (key: string, delayMs?: number) => void;

/** A source of wake-ups other than an informer (controller-runtime's raw source): subscribes, returns the unsubscribe. */
export type WakeSource = (wake: Wake) => () => void;

/** What a controller needs of an informer (Informer implements it). */
export interface ControllerSource<T extends KubernetesObject = KubernetesObject> {
  readonly resource: ResourceType;
  keys(): string[];
  addEventHandler(handler: InformerEventHandler<T>): () => void;
  waitForSync(timeoutMs?: number): Promise<void>;
}

export interface ControllerOptions<T extends KubernetesObject = KubernetesObject> {
  name: string;
  /** The primary kind: every add/update/delete enqueues its key. */
  for: ControllerSource<T>;
  reconcile: Reconciler;
  /** Kinds this controller creates: an event enqueues the controller owner when it is of the primary kind. */
  owns?: ControllerSource[];
  /**
   * Other kinds whose events map to primary keys; `predicate` skips the events the controller does not read (as
   * controller-runtime's per-watch predicates), e.g. status-only updates of a kind whose spec alone matters.
   */
  watches?: {
    informer: ControllerSource;
    map: MapFunc;
    predicate?: (event: WatchEvent) => boolean;
    /** Reconcile the mapped keys this long after the event: a burst of changes becomes one reconcile per key. */
    delayMs?: number;
  }[];
  /**
   * Wake-ups that come from outside the informers (e.g. a workload cluster's connection coming up): each is started
   * with a function that enqueues a key, at once or after a delay, and returns what stops it.
   */
  sources?: WakeSource[];
  /** Skip primary events the controller does not care about (e.g. status-only updates). */
  predicate?: (event: WatchEvent<T>) => boolean;
  /** Parallel workers; a key still never runs twice at once. Default 1. */
  maxConcurrentReconciles?: number;
  /** Enqueue every primary key this often (with 10 % jitter); 0 turns it off. Default 10 h, as controller-runtime. */
  resyncPeriodMs?: number;
  rateLimiter?: RateLimiter;
  /** How long one reconcile may run before its signal is aborted (default DEFAULT_RECONCILE_TIMEOUT_MS; 0: none). */
  reconcileTimeoutMs?: number;
  metrics?: RuntimeMetrics;
  logger?: Logger;
  cacheSyncTimeoutMs?: number;
  /**
   * Sharded replicas: a key runs only while the gate admits its shard key (its workload cluster), and its reconcile
   * is aborted when the cluster moves away. `keyOf` gives a key's shard key, or undefined when the object is gone
   * from the cache (nothing is left to act on but this replica's own memory, so any replica may run it).
   */
  shard?: { gate: ShardGate; keyOf: (key: string) => string | undefined };
}

export interface StopOptions {
  /** How long in-flight reconciles may take to finish; then their signal is aborted. Default 30 s. */
  drainTimeoutMs?: number;
  /** Abort in-flight reconciles at once (leadership lost) instead of waiting. */
  abort?: boolean;
}

interface Run {
  queue: WorkQueue;
  abort: AbortController;
  workers: Promise<void>;
  resyncTimer?: NodeJS.Timeout;
}

/**
 * Hosts one reconciler: informer events become keys in a rate-limited work queue, served by
 * `maxConcurrentReconciles` workers. Results follow controller-runtime: error = backoff retry,
 * TerminalError = no retry, requeueAfter = forget and add later, success = forget.
 */
export class Controller<T extends KubernetesObject = KubernetesObject> {
  readonly name: string;
  readonly maxConcurrentReconciles: number;
  private readonly log: Logger;
  private readonly metrics: RuntimeMetrics;
  private readonly sources: ControllerSource[];
  private readonly unregister: (() => void)[] = [];
  private run: Run | undefined;
  private previousWorkers: Promise<void> = Promise.resolve();
  /** Bumped by stop(): a start() still waiting for caches must not start workers after a stop. */
  private epoch = 0;

  constructor(private readonly options: ControllerOptions<T>) {
    this.name = options.name;
    this.maxConcurrentReconciles = Math.max(1, options.maxConcurrentReconciles ?? 1);
    this.log = (options.logger ?? defaultLogger()).child({ controller: options.name });
    this.metrics = options.metrics ?? new RuntimeMetrics();
    this.metrics.maxConcurrentReconciles.set({ controller: this.name }, this.maxConcurrentReconciles);
    this.metrics.activeWorkers.set({ controller: this.name }, 0);
    this.sources = [
      options.for as unknown as ControllerSource,
      ...(options.owns ?? []),
      ...(options.watches ?? []).map((w) => w.informer),
    ];
    this.unregister.push(options.for.addEventHandler(this.primaryHandler()));
    const primary = options.for.resource;
    for (const owned of options.owns ?? []) {
      this.unregister.push(
        owned.addEventHandler(mappingHandler((obj) => controllerOwnerKey(obj, primary), this)),
      );
    }
    for (const watch of options.watches ?? []) {
      const delayMs = watch.delayMs ?? 0;
      const target = delayMs > 0 ? { enqueue: (key: string) => this.enqueueAfter(key, delayMs) } : this;
      this.unregister.push(
        watch.informer.addEventHandler(mappingHandler(watch.map, target, watch.predicate)),
      );
    }
    const wake: Wake = (key, delayMs) =>
      delayMs && delayMs > 0 ? this.enqueueAfter(key, delayMs) : this.enqueue(key);
    for (const source of options.sources ?? []) this.unregister.push(source(wake));
  }

  get running(): boolean {
    return this.run !== undefined;
  }

  /** Keys ready in the queue (0 while not running). */
  get queueDepth(): number {
    return this.run?.queue.length ?? 0;
  }

  /** Enqueues a key (e.g. from a NATS hand-off event); ignored while not running, as start() enqueues every key. */
  enqueue(key: string): void {
    this.run?.queue.add(key);
  }

  /** Enqueues every primary key (e.g. clusters moved to this replica: their new owner resyncs them at once). */
  resync(): void {
    const run = this.run;
    if (!run) return;
    for (const key of this.options.for.keys()) run.queue.add(key);
  }

  enqueueAfter(key: string, delayMs: number): void {
    this.run?.queue.addAfter(key, delayMs);
  }

  /** Waits for the caches, enqueues every primary key and starts the workers. */
  async start(): Promise<void> {
    if (this.run) return;
    const epoch = this.epoch;
    await this.previousWorkers;
    await Promise.all(this.sources.map((s) => s.waitForSync(this.options.cacheSyncTimeoutMs)));
    if (this.run || epoch !== this.epoch) return;
    const queue = new WorkQueue({
      name: this.name,
      rateLimiter: this.options.rateLimiter,
      metrics: this.metrics,
    });
    const run: Run = { queue, abort: new AbortController(), workers: Promise.resolve() };
    this.run = run;
    for (const key of this.options.for.keys()) queue.add(key);
    run.workers = Promise.all(
      Array.from({ length: this.maxConcurrentReconciles }, () => this.work(run)),
    ).then(() => undefined);
    this.scheduleResync(run);
    this.log.info({ workers: this.maxConcurrentReconciles }, 'controller started');
  }

  /**
   * Stops taking keys and waits up to the drain timeout for in-flight reconciles; returns whether they all
   * finished. With `abort`, their signal is aborted at once and stop() returns without waiting.
   */
  async stop(options: StopOptions = {}): Promise<boolean> {
    this.epoch++;
    const run = this.run;
    if (!run) return true;
    this.run = undefined;
    clearTimeout(run.resyncTimer);
    run.queue.shutDown();
    this.previousWorkers = run.workers;
    if (options.abort) {
      run.abort.abort();
      this.log.info('controller stopped: in-flight reconciles aborted');
      return run.queue.processingCount === 0;
    }
    const drained = await run.queue.drain(options.drainTimeoutMs ?? 30_000);
    if (!drained) {
      run.abort.abort();
      this.log.warn({ inFlight: run.queue.processingCount }, 'drain timed out: in-flight reconciles aborted');
    } else {
      await run.workers;
    }
    this.log.info({ drained }, 'controller stopped');
    return drained;
  }

  /** Unregisters the event handlers (the informers stay). */
  dispose(): void {
    for (const off of this.unregister.splice(0)) off();
  }

  private primaryHandler(): InformerEventHandler<T> {
    const predicate = this.options.predicate;
    const pass = (event: WatchEvent<T>) => !predicate || predicate(event);
    return {
      onAdd: (obj) => pass({ type: 'add', object: obj }) && this.enqueue(objectKey(obj)),
      onUpdate: (oldObj, newObj) =>
        pass({ type: 'update', object: newObj, oldObject: oldObj }) && this.enqueue(objectKey(newObj)),
      onDelete: (obj) => pass({ type: 'delete', object: obj }) && this.enqueue(objectKey(obj)),
    };
  }

  private scheduleResync(run: Run): void {
    const period = this.options.resyncPeriodMs ?? 10 * 60 * 60 * 1000;
    if (period <= 0) return;
    run.resyncTimer = setTimeout(() => {
      if (this.run !== run) return;
      for (const key of this.options.for.keys()) run.queue.add(key);
      this.scheduleResync(run);
    }, jittered(period));
  }

  private async work(run: Run): Promise<void> {
    for (;;) {
      const key = await run.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileKey(run, key);
      } finally {
        run.queue.done(key);
      }
    }
  }

  private async reconcileKey(run: Run, key: string): Promise<void> {
    const shardKey = this.options.shard?.keyOf(key);
    const ticket = shardKey === undefined ? undefined : this.options.shard?.gate.acquire(shardKey);
    if (shardKey !== undefined && !ticket) {
      // Another replica owns the cluster (or takes it over): it reconciles the key, so it is not retried here.
      run.queue.forget(key);
      return;
    }
    try {
      await this.reconcileAdmitted(run, key, ticket?.signal);
    } finally {
      ticket?.release();
    }
  }

  private async reconcileAdmitted(
    run: Run,
    key: string,
    shardSignal: AbortSignal | undefined,
  ): Promise<void> {
    const { namespace, name } = parseKey(key);
    const reconcileId = randomBytes(4).toString('hex');
    const log = this.log.child({ reconcileID: reconcileId, namespace, name });
    const controller = this.name;
    this.metrics.activeWorkers.inc({ controller });
    const endTimer = this.metrics.reconcileTime.startTimer({ controller });
    let result: ReconcileResultLabel = 'success';
    const deadline = new AbortController();
    const timeoutMs = this.options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => deadline.abort(new ReconcileTimeoutError(this.name, key, timeoutMs)), timeoutMs)
        : undefined;
    const signal = AbortSignal.any([
      run.abort.signal,
      deadline.signal,
      ...(shardSignal ? [shardSignal] : []),
    ]);
    try {
      // Called through a promise so a synchronous throw is handled like a rejection.
      const outcome = await runWithCallSignal(signal, () =>
        Promise.resolve().then(() =>
          this.options.reconcile(key, { key, namespace, name, reconcileId, log, signal }),
        ),
      );
      if (outcome && typeof outcome.requeueAfter === 'number' && outcome.requeueAfter > 0) {
        result = 'requeue_after';
        run.queue.forget(key);
        run.queue.addAfter(key, outcome.requeueAfter);
      } else if (outcome?.requeue) {
        result = 'requeue';
        run.queue.addRateLimited(key);
      } else {
        run.queue.forget(key);
      }
    } catch (err) {
      if (shardSignal?.aborted) {
        // Not a failure: the cluster moved and its new owner reconciles the key. Nothing to retry here.
        run.queue.forget(key);
        log.info('reconcile stopped: the cluster moved to another replica');
        return;
      }
      result = 'error';
      this.metrics.reconcileErrors.inc({ controller });
      if (isTerminalError(err)) {
        this.metrics.terminalReconcileErrors.inc({ controller });
        run.queue.forget(key);
        log.error({ err }, 'reconcile failed terminally: not retried');
      } else {
        if (!(err instanceof Error)) this.metrics.reconcilePanics.inc({ controller });
        run.queue.addRateLimited(key);
        log.error(
          {
            err: err instanceof Error ? err : { message: String(err) },
            requeues: run.queue.numRequeues(key),
          },
          'reconcile failed: retrying with backoff',
        );
      }
    } finally {
      clearTimeout(timer);
      endTimer();
      this.metrics.activeWorkers.dec({ controller });
      this.metrics.reconcileTotal.inc({ controller, result });
    }
  }
}

/** The reason a reconcile's signal was aborted when it ran past its deadline. */
export class ReconcileTimeoutError extends Error {
  constructor(
    readonly controller: string,
    readonly key: string,
    readonly timeoutMs: number,
  ) {
    super(`${controller} ${key}: reconcile ran past its ${timeoutMs} ms deadline`);
    this.name = 'ReconcileTimeoutError';
  }
}

/** The key of the controller owner of `obj` when the owner is of the given kind (group and kind match). */
export function controllerOwnerKey(obj: KubernetesObject, ownerType: ResourceType): string[] {
  const owner = getControllerOf(obj);
  if (!owner || owner.kind !== ownerType.kind || groupOf(owner.apiVersion) !== ownerType.group) return [];
  const namespace = obj.metadata?.namespace;
  return [ownerType.namespaced && namespace ? `${namespace}/${owner.name}` : owner.name];
}

function mappingHandler<T extends KubernetesObject>(
  map: MapFunc<T>,
  target: { enqueue(key: string): void },
  predicate?: (event: WatchEvent<T>) => boolean,
): InformerEventHandler<T> {
  const pass = (event: WatchEvent<T>) => !predicate || predicate(event);
  const enqueueAll = (obj: T) => {
    for (const key of map(obj)) target.enqueue(key);
  };
  return {
    onAdd: (obj) => pass({ type: 'add', object: obj }) && enqueueAll(obj),
    onUpdate: (oldObj, newObj) => {
      if (!pass({ type: 'update', object: newObj, oldObject: oldObj })) return;
      // Each key once: the same key twice in a row is reconciled twice when a worker takes the first at once.
      for (const key of new Set([...map(oldObj), ...map(newObj)])) target.enqueue(key);
    },
    onDelete: (obj) => pass({ type: 'delete', object: obj }) && enqueueAll(obj),
  };
}
