import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { jittered, sleep } from '../backoff.js';
import type { KubeClient } from '../client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../errors.js';
import { LEASES_V1, type Lease } from '../leader-election.js';
import { defaultLogger } from '../logger.js';
import { microTime } from '../micro-time.js';
import type { ResourceClient } from '../resource-client.js';
import { rendezvousOwner } from './rendezvous.js';

/** Label on every membership Lease: the service (shard group) the replica belongs to. */
export const SHARD_GROUP_LABEL = 'sharding.capstan.dev/group';
/** Annotation on a membership Lease: the member list whose assignment the replica has adopted (JSON array). */
export const SHARD_VIEW_ANNOTATION = 'sharding.capstan.dev/view';

export interface ShardMembershipOptions {
  client: KubeClient;
  /** Where the membership Leases live (the services' namespace). */
  namespace: string;
  /** The service: replicas of one group share out its clusters. */
  group: string;
  /** Unique per replica (the pod name). */
  identity: string;
  /** A member that has not renewed for this long is gone; its clusters move (default 15 s). */
  leaseDurationMs?: number;
  /** A member that could not renew for this long stops all work itself (default 10 s; below the duration). */
  renewDeadlineMs?: number;
  /** Pause between renewals (default 2 s). */
  retryPeriodMs?: number;
  /**
   * On joining, how long the view must stay unchanged before the replica acts (default: the lease duration).
   * Replicas started together then see each other before any takes a key, so no key moves in the first seconds.
   * One that joins an established group (every other member joined more than this ago: a restart, a scale-out)
   * acts at once; one that starts alone waits this long once. 0 acts at the first renewal.
   */
  joinGraceMs?: number;
  logger?: Logger;
}

/** Held by one reconcile of a shard key; its signal is aborted when the key moves to another replica. */
export interface ShardTicket {
  readonly signal: AbortSignal;
  release(): void;
}

/** What a controller needs to run only the keys its replica may act on. */
export interface ShardGate {
  acquire(shardKey: string): ShardTicket | undefined;
}

/** Releases what a replica holds for keys it no longer owns (see ShardMembership.addReleaseHook). */
export type ReleaseHook = (stillOwned: (shardKey: string) => boolean) => Promise<void> | void;

/** What to do with a hand-off hint for a shard key: act on it, leave it to its owner, or take it later. */
export type ShardRoute = 'act' | 'elsewhere' | 'defer';

export interface ShardMember {
  identity: string;
  live: boolean;
  renewTime?: string;
  /** The member list this member has adopted: it acts only on keys it owns under it. */
  view: string[];
}

export interface ShardSnapshot {
  group: string;
  identity: string;
  /** True while this replica may not act at all (not joined yet, or it could not renew in time). */
  fenced: boolean;
  /** The live members as this replica sees them. */
  view: string[];
  /** The view this replica has published on its Lease. */
  published: string[];
  members: ShardMember[];
}

interface Observation {
  renewTime: string;
  seenAt: number;
  lease: Lease;
}

interface TicketEntry {
  abort: AbortController;
  done: Promise<void>;
  release: () => void;
}

/**
 * Active-active sharding over Leases (after the kubernetes-controller-sharding project): every replica of a
 * service renews a membership Lease, the live members are the view, and a shard key (a workload cluster) is owned
 * by the rendezvous winner of the view.
 *
 * Hand-over with fencing: a replica acts on a key only when (1) it owns the key under its current view, (2) it
 * owns it under the view it has published on its own Lease, and (3) a list of the Leases read from the API server
 * after that publication shows no other live member whose published view gives the key to itself. A replica that
 * loses a key stops dispatching it at once, aborts the reconciles holding it, waits for them to end, and only then
 * publishes its new view. Of two replicas publishing claims on one key, the later one's fresh list sees the
 * earlier one's claim, so the two never act on a key at once. A replica that cannot renew within the renew
 * deadline fences itself (acts on nothing) before others, who wait a whole lease duration from when they last saw
 * its renewal, take its keys over. Clocks are trusted to run at the same rate, as in leader election.
 */
export class ShardMembership implements ShardGate {
  readonly identity: string;
  readonly group: string;
  private readonly leases: ResourceClient<Lease>;
  private readonly log: Logger;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly leaseName: string;
  private view: string[] = [];
  private published: string[] = [];
  private othersClaims: { identity: string; view: string[] }[] = [];
  private lastRenewAt = Number.NEGATIVE_INFINITY;
  private joined = false;
  private readonly joinGraceMs: number;
  /** While joining: since when the view has been unchanged (monotonic ms). */
  private viewSettledAt: number | undefined;
  /** When this process started joining (the Lease's acquireTime). */
  private joinedSince: string | undefined;
  private ownLease: Lease | undefined;
  private readonly observations = new Map<string, Observation>();
  private readonly tickets = new Map<string, Set<TicketEntry>>();
  private readonly listeners = new Set<() => void>();
  private readonly releaseHooks = new Set<ReleaseHook>();
  private readonly ownerCache = new Map<string, string | undefined>();
  private signature = '';
  private loop: Promise<void> | undefined;
  private stopController: AbortController | undefined;
  private fenceTimer: NodeJS.Timeout | undefined;
  private serial: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ShardMembershipOptions) {
    this.identity = options.identity;
    this.group = options.group;
    this.leases = options.client.resource<Lease>(LEASES_V1);
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.joinGraceMs = options.joinGraceMs ?? this.leaseDurationMs;
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new RangeError('renewDeadlineMs must be below leaseDurationMs');
    if (this.retryPeriodMs * 1.2 >= this.renewDeadlineMs)
      throw new RangeError('retryPeriodMs * 1.2 must be below renewDeadlineMs');
    this.leaseName = membershipLeaseName(options.group, options.identity);
    this.log = (options.logger ?? defaultLogger()).child({
      shardGroup: options.group,
      identity: options.identity,
    });
  }

  /**
   * Joins: resolves once this replica has published its view and may act, after the join grace (or, at the
   * latest, after the grace plus the renew deadline).
   */
  async start(): Promise<void> {
    if (this.loop) return;
    this.joinedSince = microTime();
    const stop = new AbortController();
    this.stopController = stop;
    let joined!: () => void;
    const firstJoin = new Promise<void>((resolve) => (joined = resolve));
    const off = this.onChange(() => {
      if (!this.isFenced()) joined();
    });
    this.loop = this.run(stop.signal).finally(() => (this.loop = undefined));
    await Promise.race([firstJoin, sleep(this.joinGraceMs + this.renewDeadlineMs, stop.signal)]);
    off();
  }

  /** Leaves: stops acting on everything, then deletes its Lease so the others take its keys at once. */
  async stop(): Promise<void> {
    this.stopController?.abort();
    await this.loop;
    clearTimeout(this.fenceTimer);
    this.joined = false;
    this.viewSettledAt = undefined;
    this.setView([]);
    await this.exclusive(async () => {
      await this.revoke(() => true, this.renewDeadlineMs);
      await this.runReleaseHooks(() => false, this.renewDeadlineMs);
    });
    this.emitIfChanged();
    if (!this.ownLease) return;
    const ref = { namespace: this.options.namespace, name: this.leaseName };
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    try {
      // Read again: a renewal aborted on our side may have been applied, so the version we hold can be stale.
      const current = await this.leases.getIfExists(ref, signal);
      if (current?.spec?.holderIdentity === this.identity) {
        await this.leases.delete(ref, { preconditions: { resourceVersion: current.metadata?.resourceVersion }, signal });
      }
      this.log.info('left the shard group');
    } catch (err) {
      if (!isNotFound(err)) this.log.warn({ err: errorText(err) }, 'could not delete the membership Lease');
    }
  }

  /** Called whenever what this replica may act on changed (a member joined or left, a hand-over completed). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Called with "does this replica still own the key" before it publishes a view that gives keys away (and when
   * it fences itself): release what the replica holds per key (connections, listeners, timers) here, so the new
   * owner never finds them still held. Bounded by the renew deadline.
   */
  addReleaseHook(hook: ReleaseHook): () => void {
    this.releaseHooks.add(hook);
    return () => this.releaseHooks.delete(hook);
  }

  /** The owner of a key under this replica's current view. */
  ownerOf(shardKey: string): string | undefined {
    if (!this.ownerCache.has(shardKey)) this.ownerCache.set(shardKey, rendezvousOwner(this.view, shardKey));
    return this.ownerCache.get(shardKey);
  }

  /** Whether this replica may act on the key now (see the class comment). */
  admits(shardKey: string): boolean {
    if (this.isFenced()) return false;
    if (this.ownerOf(shardKey) !== this.identity) return false;
    if (rendezvousOwner(this.published, shardKey) !== this.identity) return false;
    return !this.othersClaims.some((other) => rendezvousOwner(other.view, shardKey) === other.identity);
  }

  /**
   * A hint for a key: acted on here; left to the replica that owns it and has claimed it (it holds its own copy);
   * or taken again later, while the key is between owners. A hint that goes with a replica that dies is covered by
   * the resync of the key's new owner.
   */
  route(shardKey: string): ShardRoute {
    if (this.isFenced()) return 'defer';
    const owner = this.ownerOf(shardKey);
    if (owner === this.identity) return this.admits(shardKey) ? 'act' : 'defer';
    const claimed = this.othersClaims.some((o) => o.identity === owner && rendezvousOwner(o.view, shardKey) === owner);
    return claimed ? 'elsewhere' : 'defer';
  }

  acquire(shardKey: string): ShardTicket | undefined {
    if (!this.admits(shardKey)) return undefined;
    const abort = new AbortController();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const entry: TicketEntry = { abort, done, release };
    let held = this.tickets.get(shardKey);
    if (!held) this.tickets.set(shardKey, (held = new Set()));
    held.add(entry);
    return {
      signal: abort.signal,
      release: () => {
        held.delete(entry);
        if (held.size === 0 && this.tickets.get(shardKey) === held) this.tickets.delete(shardKey);
        entry.release();
      },
    };
  }

  /** Reconciles holding a key right now (for tests and the admin view). */
  inFlight(shardKey: string): number {
    return this.tickets.get(shardKey)?.size ?? 0;
  }

  snapshot(): ShardSnapshot {
    const now = monotonicNow();
    const members: ShardMember[] = [...this.observations.entries()].map(([identity, o]) => ({
      identity,
      live: this.isLive(o, now),
      renewTime: o.renewTime,
      view: viewOf(o.lease),
    }));
    return {
      group: this.group,
      identity: this.identity,
      fenced: this.isFenced(),
      view: [...this.view],
      published: [...this.published],
      members: members.sort((a, b) => a.identity.localeCompare(b.identity)),
    };
  }

  private isFenced(): boolean {
    return !this.joined || monotonicNow() - this.lastRenewAt >= this.renewDeadlineMs;
  }

  private async run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const completed = await this.tick(stop).catch((err: unknown) => {
        this.log.warn({ err: errorText(err) }, 'membership round failed');
        return false;
      });
      this.emitIfChanged();
      // A round that completed and saw a new view publishes it at once (the hand-over waits on it); anything else,
      // a failed round included, waits for the period, so a failing API server is never hammered.
      if (completed && !sameList(this.published, this.view) && !stop.aborted) continue;
      // A joining replica whose round completed looks again when its view has been stable for the grace.
      const pause = jittered(this.retryPeriodMs, 0.2);
      await sleep(completed ? Math.min(pause, this.untilSettledMs()) : pause, stop);
    }
  }

  /**
   * One round: give up what the view no longer gives this replica, publish the view, read everyone's. When giving up
   * does not finish in time (a reconcile that ignores its signal, a slow release), the round still renews, with the
   * view published before: the keys stay claimed, so their new owner keeps waiting, and the next round tries again.
   * Returns whether the new view was published.
   */
  private async tick(stop: AbortSignal): Promise<boolean> {
    const candidate = [...this.view];
    if (this.isFenced() && this.joined) {
      this.log.warn('could not renew within the renew deadline: acting on nothing until renewed');
    }
    // Giving up may take what is left before the renew deadline, less a retry period for the renewal itself.
    const sinceRenewal = monotonicNow() - this.lastRenewAt;
    const budget = this.isFenced() ? this.renewDeadlineMs : Math.max(0, this.renewDeadlineMs - sinceRenewal - this.retryPeriodMs);
    const handedOver = await this.exclusive(async () => {
      const fenced = this.isFenced() && this.joined;
      const stillOwned = (key: string) => !fenced && rendezvousOwner(candidate, key) === this.identity;
      if (!(await this.revoke((key) => !stillOwned(key), budget / 2))) {
        this.log.warn('reconciles of clusters moving away did not end in time: keeping the published view this round');
        return false;
      }
      return this.runReleaseHooks(stillOwned, budget / 2);
    });
    const publishing = handedOver ? candidate : [...this.published];
    const startedAt = monotonicNow();
    // Renewing is bounded by what is left of the renew deadline; once fenced, a renewal is a fresh join.
    const left = this.renewDeadlineMs - (startedAt - this.lastRenewAt);
    const signal = AbortSignal.any([stop, AbortSignal.timeout(Math.ceil(left > 0 ? left : this.renewDeadlineMs))]);
    if (!(await this.renew(publishing, signal))) return false;
    const leases = await this.leases.list({
      namespace: this.options.namespace,
      labelSelector: `${SHARD_GROUP_LABEL}=${this.group}`,
      signal,
    });
    this.lastRenewAt = startedAt;
    this.published = publishing;
    const viewChanged = this.observe(leases.items, monotonicNow());
    if (!this.joined) this.settle(viewChanged);
    this.armFence();
    return handedOver;
  }

  /**
   * Joining: the replica acts once its view has not changed for the join grace, so replicas that start together
   * agree on the members before any of them takes a key (and no key moves between them in the first seconds).
   */
  private settle(viewChanged: boolean): void {
    const now = monotonicNow();
    if (viewChanged || this.viewSettledAt === undefined) this.viewSettledAt = now;
    // A replica joining a group whose members have all been there longer than the grace (a restart, a scale-out)
    // has nobody to wait for: its arrival is the one change, and waiting would only keep its clusters idle.
    const established = this.joinsEstablishedGroup();
    if (!established && now - this.viewSettledAt < this.joinGraceMs) return;
    this.joined = true;
    this.log.info({ members: this.view, graceMs: this.joinGraceMs, established }, 'joined the shard group');
  }

  /** Every other live member joined (its Lease's acquireTime, this process's start) more than the grace ago. */
  private joinsEstablishedGroup(): boolean {
    const others = [...this.observations.values()].filter((o) => this.isLive(o, monotonicNow()));
    if (others.length === 0) return false;
    const now = Date.now();
    return others.every((o) => {
      const since = Date.parse(o.lease.spec?.acquireTime ?? '');
      return !Number.isNaN(since) && now - since > this.joinGraceMs;
    });
  }

  /** How long until a joining replica's view has been stable for the grace (a round is due then); else forever. */
  private untilSettledMs(): number {
    if (this.joined || this.viewSettledAt === undefined) return Number.POSITIVE_INFINITY;
    return Math.max(1, this.viewSettledAt + this.joinGraceMs - monotonicNow());
  }

  /** Giving keys up (a round, the fence, leaving) runs one at a time: release hooks never run twice at once. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.serial.then(task, task);
    this.serial = run.catch(() => undefined);
    return run;
  }

  /**
   * Fencing does not wait for the next round (whose renewal may hang up to the deadline): once the deadline passes
   * without a renewal, every reconcile holding a key is aborted, well before the others take the keys over.
   */
  private armFence(): void {
    clearTimeout(this.fenceTimer);
    this.fenceTimer = setTimeout(() => {
      // Renewed meanwhile: its own timer is armed. Not yet due (timers may fire early): wait for the rest.
      if (!this.isFenced()) return this.armFence();
      this.log.warn('no renewal within the renew deadline: fenced, aborting every reconcile');
      void this.exclusive(async () => {
        await this.revoke(() => true, this.renewDeadlineMs);
        await this.runReleaseHooks(() => false, this.renewDeadlineMs);
      }).then(() => this.emitIfChanged());
    }, Math.max(0, this.lastRenewAt + this.renewDeadlineMs - monotonicNow()) + 1);
    this.fenceTimer.unref();
  }

  /** Takes in everyone's Leases; returns whether the view changed. */
  private observe(items: Lease[], now: number): boolean {
    const seen = new Set<string>();
    for (const lease of items) {
      const identity = lease.spec?.holderIdentity;
      if (!identity || identity === this.identity) continue;
      seen.add(identity);
      const renewTime = lease.spec?.renewTime ?? '';
      const previous = this.observations.get(identity);
      const seenAt = previous && previous.renewTime === renewTime ? previous.seenAt : now;
      const observation = { renewTime, seenAt, lease };
      this.observations.set(identity, observation);
      if (!this.isLive(observation, now) && now - seenAt > 2 * leaseMs(lease)) void this.deleteDead(lease);
    }
    for (const identity of [...this.observations.keys()]) if (!seen.has(identity)) this.observations.delete(identity);
    const live = [...this.observations.entries()].filter(([, o]) => this.isLive(o, now));
    this.othersClaims = live.map(([identity, o]) => ({ identity, view: viewOf(o.lease) }));
    const view = [this.identity, ...live.map(([identity]) => identity)].sort();
    if (sameList(view, this.view)) return false;
    this.log.info({ members: view }, 'shard membership changed');
    this.setView(view);
    return true;
  }

  /** The owner cache holds answers for one view: it is emptied when the view changes, not checked on every call. */
  private setView(view: string[]): void {
    this.view = view;
    this.ownerCache.clear();
  }

  private isLive(o: Observation, now: number): boolean {
    return now - o.seenAt < leaseMs(o.lease);
  }

  private async renew(view: string[], signal: AbortSignal): Promise<boolean> {
    const ref = { namespace: this.options.namespace, name: this.leaseName };
    const now = microTime();
    const desired: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...ref,
        labels: { [SHARD_GROUP_LABEL]: this.group },
        annotations: { [SHARD_VIEW_ANNOTATION]: JSON.stringify(view) },
      },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(this.leaseDurationMs / 1000)),
        // When this process joined: others tell a member that is itself still joining from an established one.
        acquireTime: this.joinedSince ?? now,
        renewTime: now,
      },
    };
    try {
      if (!this.ownLease) {
        const existing = await this.leases.getIfExists(ref, signal);
        this.ownLease = existing ?? (await this.leases.create(desired, { signal }));
        if (!existing) return true;
      }
      desired.metadata!.resourceVersion = this.ownLease.metadata?.resourceVersion;
      this.ownLease = await this.leases.replace(desired, { signal });
      return true;
    } catch (err) {
      // Someone else wrote or deleted it (a long partition): read it again next round.
      if (isConflict(err) || isNotFound(err) || isAlreadyExists(err)) this.ownLease = undefined;
      else if (!signal.aborted) this.log.warn({ err: errorText(err) }, 'could not renew the membership Lease');
      return false;
    }
  }

  /** Aborts the reconciles holding keys that match and waits (bounded) until they have all ended. */
  private async revoke(matches: (key: string) => boolean, timeoutMs: number): Promise<boolean> {
    const waiting: Promise<void>[] = [];
    for (const [key, held] of this.tickets) {
      if (!matches(key)) continue;
      for (const entry of held) {
        entry.abort.abort(new Error(`cluster ${key} moved to another replica`));
        waiting.push(entry.done);
      }
    }
    if (waiting.length === 0) return true;
    const stop = new AbortController();
    const ended = await Promise.race([
      Promise.all(waiting).then(() => true),
      sleep(timeoutMs, stop.signal).then(() => false),
    ]);
    stop.abort();
    return ended;
  }

  private async runReleaseHooks(stillOwned: (shardKey: string) => boolean, timeoutMs: number): Promise<boolean> {
    if (this.releaseHooks.size === 0) return true;
    const stop = new AbortController();
    const hooks = Promise.all(
      [...this.releaseHooks].map((hook) =>
        Promise.resolve()
          .then(() => hook(stillOwned))
          .catch((err: unknown) => this.log.error({ err: errorText(err) }, 'releasing moved clusters failed')),
      ),
    ).then(() => true);
    const done = await Promise.race([hooks, sleep(timeoutMs, stop.signal).then(() => false)]);
    stop.abort();
    if (!done) this.log.warn('releasing moved clusters did not end in time: not publishing the new view yet');
    return done;
  }

  private async deleteDead(lease: Lease): Promise<void> {
    try {
      await this.leases.delete(
        { namespace: this.options.namespace, name: lease.metadata?.name ?? '' },
        { preconditions: { resourceVersion: lease.metadata?.resourceVersion }, signal: AbortSignal.timeout(this.renewDeadlineMs) },
      );
      this.log.info({ member: lease.spec?.holderIdentity }, 'deleted the Lease of a member long gone');
    } catch {
      // Renewed or deleted meanwhile: nothing to do.
    }
  }

  private emitIfChanged(): void {
    const signature = JSON.stringify([this.isFenced(), this.view, this.published, this.othersClaims]);
    if (signature === this.signature) return;
    this.signature = signature;
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.log.error({ err: errorText(err) }, 'shard change listener failed');
      }
    }
  }
}

/** The membership Lease of a replica: DNS-safe whatever the identity looks like. */
export function membershipLeaseName(group: string, identity: string): string {
  const digest = createHash('sha256').update(identity).digest('hex').slice(0, 10);
  return `${group.slice(0, 40)}-shard-${digest}`;
}

/** Fencing and liveness are measured on a clock that a wall-clock step cannot move backwards. */
function monotonicNow(): number {
  return performance.now();
}

function viewOf(lease: Lease): string[] {
  const raw = lease.metadata?.annotations?.[SHARD_VIEW_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((m): m is string => typeof m === 'string') : [];
  } catch {
    return [];
  }
}

function leaseMs(lease: Lease): number {
  return (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
