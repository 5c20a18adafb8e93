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
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
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

export function defaultServiceOptions(service: string, env: NodeJS.ProcessEnv = process.env): ServiceOptions {
  return {
    kubeconfig: env['KUBECONFIG'] || undefined,
    natsUrl: env['NATS_URL'] || 'nats://127.0.0.1:4222',
    httpHost: env['HTTP_HOST'] || '0.0.0.0',
    httpPort: env['HTTP_PORT'] ? positiveInteger(env['HTTP_PORT']) : 8080,
    leaderElect: env['LEADER_ELECT'] === 'true',
    leaderElectionNamespace: env['LEADER_ELECTION_NAMESPACE'] || 'capstan-system',
    leaderElectionId: `capstan-${service}`,
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
    .option('--http-port <port>', 'port of the health, metrics and admin endpoints (0: any free port)', positiveInteger, defaults.httpPort)
    .option('--leader-elect', 'run the controllers only on the replica that holds the Lease', defaults.leaderElect)
    .option('--leader-election-namespace <namespace>', 'namespace of the Lease', defaults.leaderElectionNamespace)
    .option('--leader-election-id <name>', 'name of the Lease', defaults.leaderElectionId)
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
  const flags = program.opts<{
    kubeconfig?: string;
    natsUrl: string;
    httpHost: string;
    httpPort: number;
    leaderElect: boolean;
    leaderElectionNamespace: string;
    leaderElectionId: string;
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
    leaderElect: flags.leaderElect,
    leaderElectionNamespace: flags.leaderElectionNamespace,
    leaderElectionId: flags.leaderElectionId,
    identity: flags.identity,
    concurrency: flags.concurrency,
    syncPeriodSeconds: flags.syncPeriod,
    namespace: flags.namespace ?? defaults.namespace,
    streamName: flags.streamName,
    subjectRoot: flags.subjectRoot,
    logLevel: flags.logLevel,
  };
}
