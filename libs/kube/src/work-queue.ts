import { parseKey } from './keys.js';
import type { WorkQueueMetrics } from './metrics.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface WorkQueueOptions {
  /** The `name` label of the workqueue metrics (controller-runtime uses the controller name). */
  name: string;
  rateLimiter?: RateLimiter;
  metrics?: WorkQueueMetrics;
}

/**
 * client-go's rate-limited work queue for `namespace/name` keys. Fair (FIFO) and stingy: a key is handed to
 * one worker at a time; adds of a key already waiting coalesce; a key added while it is being processed is
 * queued again when the worker calls done().
 */
export class WorkQueue {
  readonly name: string;
  private readonly rateLimiter: RateLimiter;
  private readonly metrics: WorkQueueMetrics | undefined;
  private queue: string[] = [];
  private head = 0;
  /** Keys that need processing: queued, or added again while processing. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { readyAt: number; timer: NodeJS.Timeout }>();
  private getters: ((key: string | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter();
    this.metrics = options.metrics;
  }

  /** Keys ready to be handed out (not counting delayed ones or those being processed). */
  get length(): number {
    return this.queue.length - this.head;
  }

  get processingCount(): number {
    return this.processing.size;
  }

  get delayedCount(): number {
    return this.delayed.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: string): void {
    parseKey(key);
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.addedAt.set(key, performance.now());
    this.metrics?.added(this.name);
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Adds `key` after `delayMs`; a key already waiting keeps the earlier of the two times. */
  addAfter(key: string, delayMs: number): void {
    parseKey(key);
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = Date.now() + delayMs;
    const waiting = this.delayed.get(key);
    if (waiting && waiting.readyAt <= readyAt) return;
    if (waiting) clearTimeout(waiting.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { readyAt, timer });
  }

  /** Adds `key` after the rate limiter's delay: per-key exponential backoff and the overall token bucket. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.metrics?.retried(this.name);
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets the backoff of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /** The next key, once one is ready; undefined once the queue shuts down. Call done(key) when finished. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.metrics?.worked(this.name, (performance.now() - started) / 1000);
    if (this.dirty.has(key)) this.enqueue(key);
    if (this.processing.size === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Stops handing out keys (waiting get() calls resolve undefined) and drops delayed adds. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    const getters = this.getters;
    this.getters = [];
    for (const g of getters) g(undefined);
  }

  /** Resolves true once no key is being processed, or false after `timeoutMs`. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== drained);
        resolve(false);
      }, timeoutMs);
      const drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drainWaiters.push(drained);
    });
  }

  private enqueue(key: string): void {
    const getter = this.shuttingDown ? undefined : this.getters.shift();
    this.queue.push(key);
    if (getter) getter(this.take());
    else this.metrics?.depth(this.name, this.length);
  }

  private take(): string {
    const key = this.queue[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    const now = performance.now();
    if (added !== undefined) this.metrics?.queued(this.name, (now - added) / 1000);
    this.startedAt.set(key, now);
    this.metrics?.depth(this.name, this.length);
    return key;
  }
}
