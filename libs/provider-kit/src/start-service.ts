import { createHash } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Server as HttpsServer } from 'node:https';
import { type AddressInfo } from 'node:net';
import { Global, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type MicroserviceOptions } from '@nestjs/microservices';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { Manager, type SharedInformers } from '@capstan/kube';
import {
  EventBusConnection,
  EventBusMetrics,
  EventPublisher,
  eventBusReadinessCheck,
  eventTopology,
  JetStreamTransportStrategy,
  provisionEventStreams,
} from '@capstan/events';
import {
  ACCESS_REVIEWS,
  createLogger,
  KubernetesAdminGuard,
  Readiness,
  ServiceEndpointsModule,
} from '@capstan/observability';
import { kubeAccessReviews } from './access-reviews.js';
import { adminServer, cameOverTls, loadAdminTls } from './admin-tls.js';
import { AdminController, OpenApiController } from './admin.controller.js';
import { clusterShardKey, shardKeyOfCluster } from './sharding/cluster-shard-key.js';
import { EventOutbox } from './reconciler-kit/event-outbox.js';

/** How long a publish waits for the stream's acknowledgement. */
export const PUBLISH_TIMEOUT_MS = 5_000;
import { ControllerRegistry } from './controller-registry.js';
import { type ServiceContext } from './service-context.js';
import { type ServiceDefinition } from './service-definition.js';
import { type ServiceOptions } from './service-options.js';
import { SERVICE_CONTEXT } from './tokens.js';

export interface RunningService {
  readonly context: ServiceContext;
  readonly app: INestApplication;
  /** Where /healthz, /readyz and /metrics answer (plain HTTP). */
  readonly url: string;
  /** Where /admin answers (HTTPS only). */
  readonly adminUrl: string;
  /** The CA that verifies the admin API's certificate (its own CA when self-signed). */
  readonly adminCaPem: string;
  stop(): Promise<void>;
}

export interface StartServiceOverrides {
  /** Tests pass the test environment's kubeconfig document instead of a path. */
  kubeconfig?: string;
  /** Lease timings for tests (defaults 15 s / 10 s / 2 s), for leader election and shard membership alike. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Services hosted in one process (the all-in-one) share their informers through this. */
  sharedInformers?: SharedInformers;
}

/**
 * Starts one Capstan service: its controllers on a Manager (informers warm on every replica, workers only
 * on the Lease holder), its durable JetStream consumer with the service's @EventPattern handlers, and the
 * HTTP endpoints (/healthz, /readyz, /metrics, /admin). Resolves once the caches are synced.
 */
export async function startService(
  definition: ServiceDefinition,
  options: ServiceOptions,
  overrides: StartServiceOverrides = {},
): Promise<RunningService> {
  const logger = createLogger({ service: definition.name, level: options.logLevel });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const kubeConfigSource = overrides.kubeconfig
    ? { kubeconfig: overrides.kubeconfig }
    : options.kubeconfig
      ? { kubeconfigPath: options.kubeconfig }
      : { default: true as const };
  // Declared before the manager: its leadership callbacks pause and resume the event consumer.
  let strategy: JetStreamTransportStrategy | undefined;
  const manager = new Manager({
    kubeConfig: kubeConfigSource,
    fieldManager: `capstan-${definition.name}`,
    logger,
    registry,
    namespace: options.namespace,
    sharedInformers: overrides.sharedInformers,
    leaderElection: options.leaderElect
      ? {
          namespace: options.leaderElectionNamespace,
          name: options.leaderElectionId,
          identity: options.identity,
          leaseDurationMs: overrides.leaseDurationMs ?? options.leaseDurationMs,
          renewDeadlineMs: overrides.renewDeadlineMs ?? options.renewDeadlineMs,
          retryPeriodMs: overrides.retryPeriodMs ?? options.retryPeriodMs,
          onLeadershipLost: () => {
            logger.warn('lost the lease; controllers and event consumption stopped until it is won again');
            strategy
              ?.pause()
              .catch((err: unknown) => logger.warn({ err }, 'could not pause the event consumer'));
          },
          // Hand-off hints are taken only where the controllers they wake run: never acknowledged and dropped.
          onLeadershipAcquired: () =>
            strategy
              ?.resume()
              .catch((err: unknown) => logger.error({ err }, 'could not resume the event consumer')),
        }
      : undefined,
    sharding: options.sharding
      ? {
          namespace: options.leaderElectionNamespace,
          group: definition.name,
          identity: options.identity,
          leaseDurationMs: overrides.leaseDurationMs ?? options.leaseDurationMs,
          renewDeadlineMs: overrides.renewDeadlineMs ?? options.renewDeadlineMs,
          retryPeriodMs: overrides.retryPeriodMs ?? options.retryPeriodMs,
          shardKeyOf: (obj, type) => clusterShardKey(obj, type),
        }
      : undefined,
  });
  const shards = manager.shards;
  const topology = eventTopology({
    root: options.subjectRoot,
    stream: options.streamName,
    deadLetterStream: `${options.streamName}_DLQ`,
  });
  const bus = await EventBusConnection.connect({
    servers: options.natsUrl,
    name: `capstan-${definition.name}`,
    logger,
  });
  let app: INestApplication | undefined;
  let admin: HttpsServer | undefined;
  let stopHook: void | (() => Promise<void>);
  // Shutdown order: stop taking events and requests, drain the reconciles, the service's own hook, the bus.
  const cleanups: (() => Promise<void>)[] = [
    async () => closeServer(admin),
    async () => app?.close(),
    () => manager.stop(),
    // Sharded: the replica's own durable goes once the replica has left (its clusters' new owners resync them).
    async () => (manager.shards ? strategy?.deleteDurable() : undefined),
    async () => stopHook?.(),
    () => bus.drain(),
  ];
  try {
    await provisionEventStreams(await bus.jsm(), { topology });
    const metrics = EventBusMetrics.on(registry);
    // Bounded like every remote call: a stream that does not acknowledge within this fails the publish (owed).
    const publisher = new EventPublisher(bus, {
      source: `/capstan/${definition.name}`,
      topology,
      metrics,
      logger,
      timeoutMs: PUBLISH_TIMEOUT_MS,
    });
    const readiness = new Readiness();
    readiness.register({
      name: 'caches',
      check: () => ({
        ready: manager.hasSynced(),
        detail: manager.hasSynced() ? undefined : 'informer caches syncing',
      }),
    });
    readiness.register(eventBusReadinessCheck(bus, topology));
    const controllers = new ControllerRegistry(manager);
    const context: ServiceContext = {
      name: definition.name,
      options,
      logger,
      connection: manager.client.connection,
      manager,
      client: manager.client,
      registry,
      bus,
      topology,
      publisher,
      outbox: new EventOutbox({ publisher, bus, logger }),
      readiness,
      controllers,
      recorder: (controller: string) => manager.eventRecorder(`capstan.dev/${controller}`, options.identity),
    };
    stopHook = await definition.setup(context);

    @Global()
    @Module({
      providers: [
        { provide: SERVICE_CONTEXT, useValue: context },
        { provide: ACCESS_REVIEWS, useValue: kubeAccessReviews(manager.client) },
        KubernetesAdminGuard,
      ],
      exports: [SERVICE_CONTEXT, ACCESS_REVIEWS, KubernetesAdminGuard],
    })
    class ServiceContextModule {}

    @Module({
      imports: [
        ServiceContextModule,
        ServiceEndpointsModule.forRoot({ registry, readiness }),
        ...(definition.modules ?? []),
      ],
      controllers: [AdminController, OpenApiController],
    })
    class ServiceAppModule {}

    app = await NestFactory.create(ServiceAppModule, { logger: false, abortOnError: false });
    // One request handler, two listeners: health and metrics in the clear, the admin API (bearer tokens) and the
    // service's own credential-carrying paths on TLS only.
    const tlsOnly = ['/admin', ...(definition.tlsOnlyPaths ?? [])];
    app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
      const path = request.url?.split('?')[0] ?? '';
      if (!tlsOnly.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)) || cameOverTls(request.socket)) return next();
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: `${path} is served over HTTPS on the admin port` }));
    });
    const adminTls = await loadAdminTls({
      certFile: options.adminTlsCertFile,
      keyFile: options.adminTlsKeyFile,
      host: options.httpHost,
      service: definition.name,
    });
    if (definition.consumes) {
      strategy = new JetStreamTransportStrategy({
        connection: bus,
        topology,
        metrics,
        streams: false,
        logger,
        // Sharded: paused until the replica has joined, its durable created before it claims any cluster.
        startPaused: options.leaderElect || shards !== undefined,
        // Sharded: each replica has a durable of its own and sees every hint; it acts on its clusters' hints, leaves
        // the others to their owners (who hold their own copies) and takes back those of clusters it is taking over.
        ...(shards
          ? {
              shard: (event) =>
                shards.route(shardKeyOfCluster(event.data.object.namespace, event.data.clusterName)),
              provisionWhilePaused: true,
            }
          : {}),
        consumer: shards
          ? {
              durable: replicaDurableName(definition.name, options.identity),
              filterSubject: `${topology.root}.${definition.consumes}`,
              deliverPolicy: 'new',
              inactiveThresholdMs: REPLICA_DURABLE_INACTIVE_MS,
            }
          : { durable: definition.name, filterSubject: `${topology.root}.${definition.consumes}` },
      });
      app.connectMicroservice<MicroserviceOptions>({ strategy });
    }
    await app.startAllMicroservices();
    await app.listen(options.httpPort, options.httpHost);
    admin = adminServer(adminTls, app.getHttpAdapter().getInstance());
    await listen(admin, options.adminPort, options.httpHost);
    await manager.start();
    // Sharded: hints are taken once the replica has joined (routed by a known assignment); its durable kept them.
    if (shards) await strategy?.resume();
    const address = app.getHttpServer().address() as AddressInfo;
    const host = options.httpHost === '0.0.0.0' ? '127.0.0.1' : options.httpHost;
    const url = `http://${host}:${address.port}`;
    const adminUrl = `https://${host.includes(':') ? `[${host}]` : host}:${(admin.address() as AddressInfo).port}`;
    logger.info(
      {
        url,
        adminUrl,
        adminTlsSelfSigned: adminTls.selfSigned,
        leaderElect: options.leaderElect,
        sharding: options.sharding,
      },
      'service started',
    );
    let stopped: Promise<void> | undefined;
    return {
      context,
      app,
      url,
      adminUrl,
      adminCaPem: adminTls.caPem,
      stop: () => (stopped ??= runCleanups(cleanups, logger)),
    };
  } catch (error) {
    await runCleanups(cleanups, logger);
    throw error;
  }
}

function listen(server: HttpsServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function closeServer(server: HttpsServer | undefined): Promise<void> {
  if (!server?.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A killed sharded replica's durable goes after this long without a consumer (its clusters moved long before). */
export const REPLICA_DURABLE_INACTIVE_MS = 60 * 60 * 1000;

/** `<service>-<hash of the identity>`: JetStream durable names allow 64 of [A-Za-z0-9_-]. */
export function replicaDurableName(service: string, identity: string): string {
  return `${service.slice(0, 40)}-${createHash('sha256').update(identity).digest('hex').slice(0, 12)}`;
}

async function runCleanups(
  cleanups: (() => Promise<void>)[],
  logger: { warn: (o: object, m: string) => void },
): Promise<void> {
  for (const cleanup of cleanups) {
    await cleanup().catch((error: unknown) => logger.warn({ err: error }, 'shutdown step failed'));
  }
}
