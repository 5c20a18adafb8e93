import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { jittered, sleep } from './backoff.js';
import type { KubeClient } from './client.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { defaultLogger } from './logger.js';
import { microTime } from './micro-time.js';
import type { ResourceClient } from './resource-client.js';
import type { ResourceType } from './resource.js';

export const LEASES_V1: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};

export interface Lease extends KubernetesObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  /** The Lease name, one per service (e.g. `capstan-core`). */
  name: string;
  /** Unique per replica; default `<hostname>_<uuid>` as client-go. */
  identity?: string;
  /** How long a lease is valid without renewal (default 15 s; whole seconds on the Lease). */
  leaseDurationMs?: number;
  /** The leader gives up when it could not renew for this long (default 10 s); must be below the lease duration. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew (default 2 s). */
  retryPeriodMs?: number;
  /** On stop(), hand the lease back so another replica takes over at once (default true). */
  releaseOnStop?: boolean;
  onStartedLeading?: () => void;
  /** Called at once when the lease is lost; the caller must stop its workers. */
  onStoppedLeading?: () => void;
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
}

/**
 * Lease-based leader election on coordination.k8s.io/v1, after client-go's leaderelection: optimistic
 * concurrency on the Lease's resourceVersion; other replicas judge expiry by when *they* saw the record
 * change (no clock comparison across machines).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly leases: ResourceClient<Lease>;
  private readonly log: Logger;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private leading = false;
  private observed: Lease | undefined;
  private observedAt = 0;
  private lastLeader: string | undefined;
  private loop: Promise<void> | undefined;
  private stopController: AbortController | undefined;

  constructor(private readonly options: LeaderElectionOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leases = options.client.resource<Lease>(LEASES_V1);
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs)
      throw new RangeError('renewDeadlineMs must be below leaseDurationMs');
    if (this.retryPeriodMs * 1.2 >= this.renewDeadlineMs)
      throw new RangeError('retryPeriodMs * 1.2 must be below renewDeadlineMs');
    this.log = (options.logger ?? defaultLogger()).child({
      lease: `${options.namespace}/${options.name}`,
      identity: this.identity,
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last seen on the Lease. */
  get leader(): string | undefined {
    return this.observed?.spec?.holderIdentity || undefined;
  }

  start(): void {
    if (this.loop) return;
    const stop = new AbortController();
    this.stopController = stop;
    this.loop = this.run(stop.signal).finally(() => (this.loop = undefined));
  }

  /** Stops campaigning; a leader releases the lease (unless releaseOnStop is false). */
  async stop(): Promise<void> {
    this.stopController?.abort();
    await this.loop;
  }

  private async run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      while (!stop.aborted && !(await this.tryAcquireOrRenew(stop, this.renewDeadlineMs))) {
        await sleep(jittered(this.retryPeriodMs, 0.2), stop);
      }
      if (stop.aborted) break;
      this.becomeLeader();
      let renewedAt = Date.now();
      while (!stop.aborted) {
        await sleep(this.retryPeriodMs, stop);
        if (stop.aborted) break;
        const left = this.renewDeadlineMs - (Date.now() - renewedAt);
        if (left > 0 && (await this.tryAcquireOrRenew(stop, left))) {
          renewedAt = Date.now();
          continue;
        }
        const takenOver = this.leader !== undefined && this.leader !== this.identity;
        if (takenOver || Date.now() - renewedAt >= this.renewDeadlineMs) {
          this.loseLeadership(takenOver ? `lease taken by ${this.leader}` : 'renew deadline passed');
          break;
        }
      }
    }
    const wasLeading = this.leading;
    this.leading = false;
    // Also when stop() came between winning the lease and acting on it.
    if (this.options.releaseOnStop ?? true) await this.release();
    if (wasLeading) this.options.onStoppedLeading?.();
  }

  private becomeLeader(): void {
    this.leading = true;
    this.log.info('acquired the lease: leading');
    this.options.onStartedLeading?.();
  }

  private loseLeadership(why: string): void {
    this.leading = false;
    this.log.warn({ why }, 'lost the lease: stopping work');
    this.options.onStoppedLeading?.();
  }

  /** One attempt, bounded by `timeoutMs`; true when this replica holds the lease afterwards. */
  private async tryAcquireOrRenew(stop: AbortSignal, timeoutMs: number): Promise<boolean> {
    const signal = AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]);
    const ref = { namespace: this.options.namespace, name: this.options.name };
    const now = new Date();
    try {
      let lease: Lease;
      try {
        lease = await this.leases.get(ref, signal);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const created = await this.leases.create(
          {
            metadata: ref,
            spec: {
              holderIdentity: this.identity,
              leaseDurationSeconds: this.leaseSeconds(),
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          },
          { signal },
        );
        this.observe(created);
        return true;
      }
      this.observe(lease);
      const spec = lease.spec ?? {};
      const holder = spec.holderIdentity;
      const validMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== this.identity && this.observedAt + validMs > Date.now()) return false;
      const renewing = holder === this.identity;
      const updated = await this.leases.replace(
        {
          metadata: { ...ref, resourceVersion: lease.metadata?.resourceVersion },
          spec: {
            holderIdentity: this.identity,
            leaseDurationSeconds: this.leaseSeconds(),
            acquireTime: renewing && spec.acquireTime ? spec.acquireTime : microTime(now),
            renewTime: microTime(now),
            leaseTransitions: renewing ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
          },
        },
        { signal },
      );
      this.observe(updated);
      return true;
    } catch (err) {
      if (!stop.aborted && !isConflict(err) && !isAlreadyExists(err)) {
        this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease request failed');
      }
      return false;
    }
  }

  /** Hands the lease back: no holder and a 1 s duration, so a waiting replica takes it on its next try. */
  private async release(): Promise<void> {
    const lease = this.observed;
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    const now = microTime();
    try {
      await this.leases.replace(
        {
          metadata: {
            namespace: this.options.namespace,
            name: this.options.name,
            resourceVersion: lease.metadata?.resourceVersion,
          },
          spec: {
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: lease.spec?.leaseTransitions ?? 0,
          },
        },
        { signal: AbortSignal.timeout(this.renewDeadlineMs) },
      );
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not release the lease');
    }
  }

  private observe(lease: Lease): void {
    const changed =
      !this.observed || this.observed.metadata?.resourceVersion !== lease.metadata?.resourceVersion;
    if (changed) {
      this.observed = lease;
      this.observedAt = Date.now();
    }
    const holder = lease.spec?.holderIdentity;
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      this.options.onNewLeader?.(holder);
    }
  }

  private leaseSeconds(): number {
    return Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
  }
}
