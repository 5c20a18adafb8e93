import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { createKubeClient, type KubeClient } from './client.js';
import type {
  ClientNodeKubeConfig,
  ClusterConnection,
  KubeConfigSource,
} from './connection/cluster-connection.js';
import { Controller, type MapFunc, type Reconciler, type WakeSource, type WatchEvent } from './controller.js';
import { EventRecorder } from './event-recorder.js';
import { STANDARD_INDEXERS } from './indexers.js';
import { Informer, type InformerOptions } from './informer.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { defaultLogger } from './logger.js';
import { RuntimeMetrics } from './metrics.js';
import type { RateLimiter } from './rate-limiter.js';
import { resourceId, type ResourceType } from './resource.js';
import { ShardMembership, type ShardMembershipOptions } from './sharding/shard-membership.js';
import type { SharedInformers } from './shared-informers.js';

/** Which objects of a kind an informer caches. */
export interface CacheScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** A kind (its shared informer in the manager's scope) or a given informer (e.g. one scoped by label). */
export type InformerRef<T extends KubernetesObject = KubernetesObject> = ResourceType | Informer<T>;

export interface ControllerSpec<T extends KubernetesObject = KubernetesObject> {
  name: string;
  for: InformerRef<T>;
  reconcile: Reconciler;
  owns?: InformerRef<KubernetesObject>[];
  watches?: {
    for: InformerRef<KubernetesObject>;
    map: MapFunc;
    predicate?: (event: WatchEvent) => boolean;
    delayMs?: number;
  }[];
  sources?: WakeSource[];
  predicate?: (event: WatchEvent<T>) => boolean;
  maxConcurrentReconciles?: number;
  resyncPeriodMs?: number;
  rateLimiter?: RateLimiter;
}

export interface ManagerLeaderElection extends Omit<
  LeaderElectionOptions,
  'client' | 'onStartedLeading' | 'onStoppedLeading' | 'logger'
> {
  /** Called after the workers were stopped because the lease was lost (e.g. to exit the process). */
  onLeadershipLost?: () => void;
  /** Called once the lease is won and the workers run (e.g. to start taking events only the leader acts on). */
  onLeadershipAcquired?: () => void;
}

export interface ManagerSharding extends Omit<ShardMembershipOptions, 'client' | 'logger'> {
  /** The shard key of an object: all objects of one workload cluster share one (e.g. `<namespace>/<cluster>`). */
  shardKeyOf: (obj: KubernetesObject, type: ResourceType) => string;
}

export interface ManagerOptions {
  /** An existing client, or where to load one from (with `fieldManager`). */
  client?: KubeClient;
  kubeConfig?: KubeConfigSource | ClusterConnection | ClientNodeKubeConfig;
  /** The field manager of this service, for every write through the manager's client. */
  fieldManager?: string;
  logger?: Logger;
  /** Metrics go here; a new registry by default, so managers in one process don't clash. */
  registry?: Registry;
  /** Cache scope for informers that don't give one (e.g. the namespace a service watches). */
  namespace?: string;
  /** Defaults for every informer (watchdog, backoff, page size). */
  informerDefaults?: Omit<
    InformerOptions,
    'namespace' | 'labelSelector' | 'fieldSelector' | 'indexers' | 'logger' | 'keepManagedFields'
  >;
  /** Kinds whose cached objects keep `metadata.managedFields`, because a controller here reads them. */
  keepManagedFieldsOf?: readonly ResourceType[];
  /** Informers shared with the process's other managers (services hosted together); this manager's own otherwise. */
  sharedInformers?: SharedInformers;
  /** Without it, this manager runs its workers at once. */
  leaderElection?: ManagerLeaderElection;
  /** Active-active replicas: each reconciles only the keys of the clusters it owns (not with leaderElection). */
  sharding?: ManagerSharding;
  /** How long graceful shutdown waits for in-flight reconciles (default 30 s). */
  shutdownTimeoutMs?: number;
  cacheSyncTimeoutMs?: number;
}

/**
 * Runs a service's controllers: shared informers (one per kind and scope, warm on every replica), the
 * controllers, leader election (only the leader runs workers), metrics and graceful shutdown.
 */
export class Manager {
  readonly client: KubeClient;
  readonly registry: Registry;
  readonly metrics: RuntimeMetrics;
  readonly logger: Logger;
  private readonly ownsClient: boolean;
  private readonly informers = new Map<string, Informer>();
  /** Keys of the informers made after start (on demand). */
  private readonly onDemand = new Set<string>();
  private readonly controllerList: Controller[] = [];
  private elector: LeaderElector | undefined;
  /** The replica's shard membership, when sharded. */
  readonly shards: ShardMembership | undefined;
  private started = false;
  private stopping = false;
  private workersRunning = false;

  constructor(private readonly options: ManagerOptions = {}) {
    this.logger = options.logger ?? defaultLogger();
    if (options.client) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      this.client = createKubeClient(options.kubeConfig ?? { default: true }, {
        fieldManager: options.fieldManager,
      });
      this.ownsClient = true;
    }
    this.registry = options.registry ?? new Registry();
    this.metrics = new RuntimeMetrics(this.registry);
    if (options.sharding && options.leaderElection)
      throw new TypeError('a manager is either sharded or leader-elected, not both');
    this.shards = options.sharding
      ? new ShardMembership({ ...options.sharding, client: this.client, logger: this.logger })
      : undefined;
    // Clusters that moved here are reconciled at once, not at the next resync.
    this.shards?.onChange(() => {
      if (this.workersRunning) for (const controller of this.controllerList) controller.resync();
    });
  }

  get controllers(): readonly Controller[] {
    return this.controllerList;
  }

  /** The shared informer for a kind and scope; created (and started, if the manager runs) on first use. */
  informer<T extends KubernetesObject = KubernetesObject>(
    resource: ResourceType,
    scope: CacheScope = {},
  ): Informer<T> {
    const namespace = scope.namespace ?? this.options.namespace;
    const keepManagedFields = this.options.keepManagedFieldsOf?.some(
      (kept) => resourceId(kept) === resourceId(resource),
    );
    const key = JSON.stringify([
      resourceId(resource),
      namespace ?? '',
      scope.labelSelector ?? '',
      scope.fieldSelector ?? '',
      keepManagedFields === true,
    ]);
    let informer = this.informers.get(key);
    if (!informer) {
      const options: InformerOptions = {
        ...this.options.informerDefaults,
        namespace,
        labelSelector: scope.labelSelector,
        fieldSelector: scope.fieldSelector,
        indexers: STANDARD_INDEXERS,
        logger: this.logger,
        keepManagedFields,
      };
      informer = this.options.sharedInformers
        ? this.options.sharedInformers.informer(key, resource, options, this, this.client)
        : new Informer(this.client, resource, options);
      this.informers.set(key, informer);
      if (this.started) this.onDemand.add(key);
      if (this.started && !this.stopping) informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  addController<T extends KubernetesObject>(spec: ControllerSpec<T>): Controller<T> {
    if (this.controllerList.some((c) => c.name === spec.name))
      throw new TypeError(`a controller named ${spec.name} exists`);
    const resolve = <O extends KubernetesObject>(ref: InformerRef<O>): Informer<O> =>
      ref instanceof Informer ? ref : this.informer<O>(ref);
    const primary = resolve(spec.for);
    const sharding = this.options.sharding;
    const shards = this.shards;
    const controller = new Controller<T>({
      name: spec.name,
      for: primary,
      reconcile: spec.reconcile,
      owns: spec.owns?.map(resolve),
      watches: spec.watches?.map((w) => ({
        informer: resolve(w.for),
        map: w.map,
        predicate: w.predicate,
        delayMs: w.delayMs,
      })),
      sources: spec.sources,
      predicate: spec.predicate,
      maxConcurrentReconciles: spec.maxConcurrentReconciles,
      resyncPeriodMs: spec.resyncPeriodMs,
      rateLimiter: spec.rateLimiter,
      metrics: this.metrics,
      logger: this.logger,
      cacheSyncTimeoutMs: this.options.cacheSyncTimeoutMs,
      shard:
        sharding && shards
          ? {
              gate: shards,
              keyOf: (key) => {
                const obj = primary.get(key);
                return obj ? sharding.shardKeyOf(obj, primary.resource) : undefined;
              },
            }
          : undefined,
    });
    this.controllerList.push(controller as unknown as Controller);
    if (this.workersRunning) void this.startController(controller as unknown as Controller);
    return controller;
  }

  eventRecorder(
    reportingController: string,
    reportingInstance = this.elector?.identity ?? process.env['HOSTNAME'] ?? 'local',
  ): EventRecorder {
    return new EventRecorder({
      client: this.client,
      reportingController,
      reportingInstance,
      logger: this.logger,
    });
  }

  /** True while this replica runs workers (the leader, or always without leader election). */
  isLeader(): boolean {
    return this.workersRunning;
  }

  /**
   * True once the first list of every informer the service started with is in its cache (for /readyz). Caches made
   * on demand later (of a kind some object refers to: a template, a remediation template) do not count: a kind that
   * does not exist would keep the whole service unready, for every cluster, over one object that names it (which
   * says so in its own conditions).
   */
  hasSynced(): boolean {
    return [...this.informers.entries()].every(
      ([key, informer]) => this.onDemand.has(key) || informer.hasSynced(),
    );
  }

  /**
   * Starts the informers and waits for their caches, then either runs the workers or campaigns for the
   * lease. Resolves once the caches are warm (a standby replica keeps campaigning in the background).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
    const timeout = this.options.cacheSyncTimeoutMs ?? 120_000;
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(timeout)));
    if (this.stopping) return;
    const election = this.options.leaderElection;
    if (!election) {
      // Sharded: join first, so the first keys run only once this replica knows what it owns.
      await this.shards?.start();
      if (this.stopping) return;
      await this.startWorkers();
      return;
    }
    this.metrics.leaderElectionMasterStatus.set({ name: election.name }, 0);
    this.elector = new LeaderElector({
      ...election,
      client: this.client,
      logger: this.logger,
      onStartedLeading: () => {
        this.metrics.leaderElectionMasterStatus.set({ name: election.name }, 1);
        void this.startWorkers().then(() => {
          if (this.elector?.isLeader() && !this.stopping) election.onLeadershipAcquired?.();
        });
      },
      onStoppedLeading: () => {
        this.metrics.leaderElectionMasterStatus.set({ name: election.name }, 0);
        if (this.stopping) return;
        // Another replica may lead from now on: no reconcile of ours may run on, so abort at once.
        void this.stopWorkers({ abort: true });
        election.onLeadershipLost?.();
      },
    });
    this.elector.start();
  }

  /**
   * Graceful shutdown: stop taking keys, let in-flight reconciles finish (up to the shutdown timeout),
   * hand back the lease, stop the watches, close the connections.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.stopWorkers({ drainTimeoutMs: this.options.shutdownTimeoutMs ?? 30_000 });
    await this.elector?.stop();
    await this.shards?.stop();
    if (this.options.sharedInformers) await this.options.sharedInformers.release(this);
    else await Promise.all([...this.informers.values()].map((i) => i.stop()));
    if (this.ownsClient) await this.client.close();
    this.logger.info('manager stopped');
  }

  private async startWorkers(): Promise<void> {
    this.workersRunning = true;
    await Promise.all(this.controllerList.map((c) => this.startController(c)));
  }

  private async startController(controller: Controller): Promise<void> {
    try {
      await controller.start();
      // Leadership may have been lost while the controller waited for its caches.
      if (!this.workersRunning) await controller.stop({ abort: true });
    } catch (err) {
      this.logger.error({ controller: controller.name, err }, 'controller failed to start');
    }
  }

  private async stopWorkers(options: { abort?: boolean; drainTimeoutMs?: number }): Promise<void> {
    this.workersRunning = false;
    await Promise.all(this.controllerList.map((c) => c.stop(options)));
  }
}
