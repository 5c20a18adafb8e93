import { hostname } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';

/** How every Capstan service is started: flags first, then environment variables, then defaults. */
export interface ServiceOptions {
  /** Management cluster kubeconfig; in-cluster or ~/.kube/config when absent. */
  kubeconfig?: string;
  natsUrl: string;
  httpHost: string;
  /** 0 picks a free port (tests, local runs). */
  httpPort: number;
  /** The admin API's HTTPS port, on `httpHost` (0 picks a free port); /admin is not served on `httpPort`. */
  adminPort: number;
  /** The admin API's certificate and key (PEM); a self-signed pair made at start when absent. */
  adminTlsCertFile?: string;
  adminTlsKeyFile?: string;
  leaderElect: boolean;
  /** Active-active: every replica reconciles the clusters rendezvous hashing gives it (docs/reliability.md). */
  sharding: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  /** Lease timings (leader election and shard membership), as upstream's `--leader-elect-*` flags. */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Who this replica is in the Lease. */
  identity: string;
  /** Reconciles that may run at once, per controller. */
  concurrency: number;
  /** Every object is reconciled again at least this often, so a lost event only delays. */
  syncPeriodSeconds: number;
  /** Watch only this namespace (all namespaces when absent). */
  namespace?: string;
  /** JetStream stream and subject root, so test runs and tenants do not share one. */
  streamName: string;
  subjectRoot: string;
  logLevel: string;
}

const positiveInteger = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a whole number');
  return parsed;
};

/** A Go-style duration (`15s`, `500ms`, `1m`), as upstream's flags take them, in milliseconds. */
export function durationMs(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`expected a duration such as 15s or 500ms, got ${JSON.stringify(value)}`);
  const unit = { ms: 1, s: 1000, m: 60_000 }[match[2] as 'ms' | 's' | 'm'];
  return Math.round(Number(match[1]) * unit);
}

export function defaultServiceOptions(service: string, env: NodeJS.ProcessEnv = process.env): ServiceOptions {
  return {
    kubeconfig: env['KUBECONFIG'] || undefined,
    natsUrl: env['NATS_URL'] || 'nats://127.0.0.1:4222',
    httpHost: env['HTTP_HOST'] || '0.0.0.0',
    httpPort: env['HTTP_PORT'] ? positiveInteger(env['HTTP_PORT']) : 8080,
    adminPort: env['ADMIN_PORT'] ? positiveInteger(env['ADMIN_PORT']) : 8443,
    adminTlsCertFile: env['ADMIN_TLS_CERT_FILE'] || undefined,
    adminTlsKeyFile: env['ADMIN_TLS_KEY_FILE'] || undefined,
    leaderElect: env['LEADER_ELECT'] === 'true',
    sharding: env['SHARDING'] === 'true',
    leaderElectionNamespace: env['LEADER_ELECTION_NAMESPACE'] || 'capstan-system',
    leaderElectionId: `capstan-${service}`,
    leaseDurationMs: env['LEASE_DURATION'] ? durationMs(env['LEASE_DURATION']) : 15_000,
    renewDeadlineMs: env['RENEW_DEADLINE'] ? durationMs(env['RENEW_DEADLINE']) : 10_000,
    retryPeriodMs: env['RETRY_PERIOD'] ? durationMs(env['RETRY_PERIOD']) : 2_000,
    identity: env['POD_NAME'] || `${hostname()}-${process.pid}`,
    concurrency: env['CONCURRENCY'] ? positiveInteger(env['CONCURRENCY']) : 10,
    syncPeriodSeconds: env['SYNC_PERIOD_SECONDS'] ? positiveInteger(env['SYNC_PERIOD_SECONDS']) : 600,
    namespace: env['WATCH_NAMESPACE'] || undefined,
    streamName: env['STREAM_NAME'] || 'CAPSTAN',
    subjectRoot: env['SUBJECT_ROOT'] || 'capstan',
    logLevel: env['LOG_LEVEL'] || 'info',
  };
}

/** Parses a service's command line (`node apps/<service>/dist/main.js --help` lists the flags). */
export function parseServiceOptions(
  service: string,
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  helpText?: string,
): ServiceOptions {
  const defaults = defaultServiceOptions(service, env);
  const program = new Command(`capstan-${service}`)
    .description(`Capstan ${service} service`)
    .option('--kubeconfig <path>', 'management cluster kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)')
    .option('--nats-url <url>', 'NATS server with JetStream', defaults.natsUrl)
    .option('--http-host <host>', 'address of the health, metrics and admin endpoints', defaults.httpHost)
    .option('--http-port <port>', 'port of the health and metrics endpoints (0: any free port)', positiveInteger, defaults.httpPort)
    .option('--admin-port <port>', 'HTTPS port of the admin API (0: any free port)', positiveInteger, defaults.adminPort)
    .option('--admin-tls-cert-file <path>', "the admin API's certificate, PEM (default: self-signed at start)", defaults.adminTlsCertFile)
    .option('--admin-tls-key-file <path>', "the admin API's private key, PEM", defaults.adminTlsKeyFile)
    .option('--leader-elect', 'run the controllers only on the replica that holds the Lease', defaults.leaderElect)
    .option('--sharding', 'every replica works: clusters are shared out among the replicas by their membership Leases', defaults.sharding)
    .option('--leader-election-namespace <namespace>', 'namespace of the Lease (and of the membership Leases)', defaults.leaderElectionNamespace)
    .option('--leader-election-id <name>', 'name of the Lease', defaults.leaderElectionId)
    .option('--leader-elect-lease-duration <duration>', 'a Lease not renewed for this long is taken over (e.g. 15s)', durationMs, defaults.leaseDurationMs)
    .option('--leader-elect-renew-deadline <duration>', 'a replica that could not renew for this long stops acting (e.g. 10s)', durationMs, defaults.renewDeadlineMs)
    .option('--leader-elect-retry-period <duration>', 'pause between Lease renewals (e.g. 2s)', durationMs, defaults.retryPeriodMs)
    .option('--identity <id>', 'this replica in the Lease', defaults.identity)
    .option('--concurrency <n>', 'reconciles at once per controller', positiveInteger, defaults.concurrency)
    .option('--sync-period <seconds>', 'reconcile everything at least this often', positiveInteger, defaults.syncPeriodSeconds)
    .option('--namespace <namespace>', 'watch only this namespace')
    .option('--stream-name <name>', 'JetStream stream of the event bus', defaults.streamName)
    .option('--subject-root <token>', 'first subject token of the event bus', defaults.subjectRoot)
    .option('--log-level <level>', 'pino log level', defaults.logLevel)
    .addHelpText('after', helpText ? `\n${helpText}` : '')
    .exitOverride()
    // Errors surface as the thrown CommanderError (the service's main prints it once).
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: () => undefined });
  program.parse(argv, { from: 'user' });
  if (program.opts<{ leaderElect: boolean; sharding: boolean }>().leaderElect && program.opts<{ sharding: boolean }>().sharding)
    program.error('--leader-elect and --sharding exclude each other: a service is either one active leader or all replicas active');
  const flags = program.opts<{
    kubeconfig?: string;
    natsUrl: string;
    httpHost: string;
    httpPort: number;
    adminPort: number;
    adminTlsCertFile?: string;
    adminTlsKeyFile?: string;
    leaderElect: boolean;
    sharding: boolean;
    leaderElectionNamespace: string;
    leaderElectionId: string;
    leaderElectLeaseDuration: number;
    leaderElectRenewDeadline: number;
    leaderElectRetryPeriod: number;
    identity: string;
    concurrency: number;
    syncPeriod: number;
    namespace?: string;
    streamName: string;
    subjectRoot: string;
    logLevel: string;
  }>();
  return {
    kubeconfig: flags.kubeconfig ?? defaults.kubeconfig,
    natsUrl: flags.natsUrl,
    httpHost: flags.httpHost,
    httpPort: flags.httpPort,
    adminPort: flags.adminPort,
    adminTlsCertFile: flags.adminTlsCertFile,
    adminTlsKeyFile: flags.adminTlsKeyFile,
    leaderElect: flags.leaderElect,
    sharding: flags.sharding,
    leaderElectionNamespace: flags.leaderElectionNamespace,
    leaderElectionId: flags.leaderElectionId,
    leaseDurationMs: flags.leaderElectLeaseDuration,
    renewDeadlineMs: flags.leaderElectRenewDeadline,
    retryPeriodMs: flags.leaderElectRetryPeriod,
    identity: flags.identity,
    concurrency: flags.concurrency,
    syncPeriodSeconds: flags.syncPeriod,
    namespace: flags.namespace ?? defaults.namespace,
    streamName: flags.streamName,
    subjectRoot: flags.subjectRoot,
    logLevel: flags.logLevel,
  };
}
