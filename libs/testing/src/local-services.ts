import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localAdminTls, type LocalAdminTls } from './admin-api.js';
import { freePort, isPortFree, retryWhilePortTaken } from './ports.js';
import { isAlive, stopPid } from './processes.js';

/**
 * V8 flags every service runs with, here and in deploy/ (CAPSTAN_NODE_FLAGS, which the image's entrypoint puts on
 * node's command line: NODE_OPTIONS refuses the second). Semi-spaces of 4 MiB instead of V8's 16, and the old
 * generation grown by 20% after a full collection instead of V8's up to 4x: under bench:upstream N = 30 the five
 * services peak about 35% lower, no slower to Running, for 15% more CPU (docs/performance.md).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=20'] as const;

/**
 * The all-in-one process is for small installs, where memory counts more than CPU: V8 also optimizes for size
 * (smaller heap steps and code caches). Under bench:upstream N = 10 its peak RSS is about 12% lower for about 13% more
 * CPU (docs/performance.md).
 */
export const ALL_IN_ONE_NODE_FLAGS = [...SERVICE_NODE_FLAGS, '--optimize-for-size'] as const;

/**
 * Environment every service process gets, here and in the image (Dockerfile ENV): glibc keeps up to 8 malloc arenas
 * per core, one per thread that allocates (the main thread, libuv's pool, V8's helpers), each holding freed memory;
 * two are enough for a Node process and cost less RSS (docs/performance.md).
 */
export const SERVICE_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** The five services `capstan init --local`, the demo and the end-to-end tests run (they start together). */
export const LOCAL_SERVICES = ['core', 'cluster-provider', 'machine-provider', 'bootstrap-provider', 'control-plane-provider'] as const;
/** The fleet dashboard (apps/dashboard): started after the five when asked (`dashboard`), one replica, never sharded. */
export const DASHBOARD_SERVICE = 'dashboard';
export type LocalServiceName = (typeof LOCAL_SERVICES)[number] | typeof DASHBOARD_SERVICE;

export interface LocalService {
  name: LocalServiceName;
  /** Which replica of the service (0 unless `replicas` > 1); its identity is `<name>-<replica>`. */
  replica: number;
  pid: number;
  /** Health and metrics (plain HTTP). */
  url: string;
  /** The admin API (HTTPS). */
  adminUrl: string;
  /** The CA that verifies the admin API's certificate. */
  adminCaPem: string;
  logFile: string;
  child: ChildProcess;
  /** The machine-provider's sim state dir; stopLocalServices stops what its pid files still name. */
  simStateDir?: string;
}

export interface StartLocalServicesOptions {
  kubeconfigPath: string;
  natsUrl: string;
  logDir: string;
  /** Extra environment for the services (e.g. the sim's shared etcd). */
  env?: NodeJS.ProcessEnv;
  /**
   * The machine-provider's CAPSTAN_SIM_STATE_DIR: its workload API servers' certificates and pid files, its node
   * agents' machine roots. Give each environment its own: two providers on one dir take each other's servers for
   * leftovers and stop them. Unset: CAPSTAN_SIM_STATE_DIR from `env` or this process, else `.capstan/sim` under the
   * current directory (next to `capstan init --local`'s default `.capstan/logs`), never the per-user default.
   */
  simStateDir?: string;
  syncPeriodSeconds?: number;
  /** Watch only this namespace (several sets of services can then share one API server). */
  namespace?: string;
  /** Event bus subject root and stream, so several sets of services can share one NATS server. */
  subjectRoot?: string;
  streamName?: string;
  logLevel?: string;
  /**
   * Replicas of every service (default 1). With more than one, every service runs `--sharding`: each replica
   * reconciles the clusters rendezvous hashing gives it.
   */
  replicas?: number;
  /** Run `--sharding` even with one replica. */
  sharding?: boolean;
  /** Lease timings of the membership (and leader election) Leases, Go durations: `{ leaseDuration: '4s', ... }`. */
  leaseTimings?: { leaseDuration: string; renewDeadline: string; retryPeriod: string };
  readyTimeoutMs?: number;
  /** Which services to run (default all five): the compatibility suite runs Capstan's providers under upstream's core. */
  services?: readonly LocalServiceName[];
  /**
   * The core serves the v1beta1 conversion webhook on a free loopback port and points the CRDs at it (as `capstan init
   * --local` and the demo do). Off for tests: every core start would repoint the CRDs all tests share.
   */
  conversionWebhook?: boolean;
  /** With `conversionWebhook`: the core refuses admission reviews without a client certificate this CA signed. */
  webhookClientCaFile?: string;
  /**
   * Run the five services in one process (apps/all-in-one, for small installs) instead of one process each: every
   * returned LocalService then names that process, with the service's own endpoint URL. One replica only.
   */
  allInOne?: boolean;
  /** Also run the fleet dashboard (docs/dashboard.md), as the demo does; not with `allInOne`. */
  dashboard?: boolean;
  onProgress?(service: LocalServiceName, state: 'starting' | 'ready'): void;
  /** How a free port is chosen (default `freePort`); a test hands out a taken one to see the start retried. */
  choosePort?: () => Promise<number>;
}

export class LocalServiceError extends Error {
  constructor(
    readonly service: string,
    message: string,
  ) {
    super(`${service}: ${message}`);
    this.name = 'LocalServiceError';
  }
}

/** The workspace root, where every app's compiled main lives (apps/<name>/dist/main.js). */
function workspaceRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

async function waitReady(service: LocalService, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) {
      throw new LocalServiceError(service.name, `exited with code ${service.child.exitCode}; see ${service.logFile}`);
    }
    // Bounded: whatever holds the port may accept the connection and never answer (another process bound it first).
    const ready = await fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new LocalServiceError(service.name, `not ready within ${timeoutMs / 1000}s; see ${service.logFile}`);
}

/**
 * Runs the services as local processes against a management cluster (the embedded default): each logs
 * pino JSON to `<logDir>/<service>.log` and serves /healthz, /readyz and /metrics on a free port, and the admin API
 * over HTTPS on another, with the certificate in `<logDir>/admin-tls` (its CA is `ca.crt` there).
 */
export async function startLocalServices(options: StartLocalServicesOptions): Promise<LocalService[]> {
  mkdirSync(options.logDir, { recursive: true });
  // Made once before any replica starts: replicas starting together would each make one.
  await localAdminTls(options.logDir);
  const started: LocalService[] = [];
  if (options.allInOne) return startAllInOneProcess(options);
  try {
    const names = LOCAL_SERVICES.filter((s) => options.services?.includes(s) ?? true);
    // The services need nothing of each other to start (each provisions the event streams, idempotently, and makes
    // its own consumers), so they start together; only a core that serves the conversion webhook goes first, as it
    // repoints the CRDs the others watch.
    const first: LocalServiceName[] = options.conversionWebhook ? names.filter((name) => name === 'core') : [];
    for (const group of [first, names.filter((name) => !first.includes(name))]) {
      started.push(...(await startTogether(group, options)));
    }
    if (options.dashboard) {
      options.onProgress?.(DASHBOARD_SERVICE, 'starting');
      started.push(await startLocalService(DASHBOARD_SERVICE, options));
      options.onProgress?.(DASHBOARD_SERVICE, 'ready');
    }
    return started;
  } catch (error) {
    await stopLocalServices(started);
    throw error;
  }
}

/**
 * Starts the services, every replica of each, at once; the ready ones come back in the order given. When one fails,
 * the others are still waited for, then stopped, and its error is thrown.
 */
async function startTogether(names: readonly LocalServiceName[], options: StartLocalServicesOptions): Promise<LocalService[]> {
  const perService = await Promise.all(
    names.map(async (name) => {
      options.onProgress?.(name, 'starting');
      // Replicas of one service start together: sharded, each joins the membership the others already see.
      const replicas = await Promise.allSettled(
        Array.from({ length: Math.max(1, options.replicas ?? 1) }, (_, replica) => startLocalService(name, options, replica)),
      );
      if (replicas.every((r) => r.status === 'fulfilled')) options.onProgress?.(name, 'ready');
      return replicas;
    }),
  );
  const outcomes = perService.flat();
  const ready = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) {
    await stopLocalServices(ready);
    throw failed.reason;
  }
  return ready;
}

function simStateDirOf(options: StartLocalServicesOptions): string {
  return resolve(
    options.simStateDir ?? options.env?.['CAPSTAN_SIM_STATE_DIR'] ?? process.env['CAPSTAN_SIM_STATE_DIR'] ?? join('.capstan', 'sim'),
  );
}

/**
 * One service replica as a local process, logging to `<logDir>/<service>.log` (`<service>-<replica>.log` when there
 * are several; appended), ready when this returns. Its ports are chosen free, but another process can bind one
 * before the service does: a start that exits on EADDRINUSE is made again with other ports.
 */
async function startLocalService(name: LocalServiceName, options: StartLocalServicesOptions, replica = 0): Promise<LocalService> {
  const several = (options.replicas ?? 1) > 1;
  const logFile = join(options.logDir, several ? `${name}-${replica}.log` : `${name}.log`);
  return retryWhilePortTaken(
    () => startLocalServiceOnce(name, options, replica, logFile),
    (error) => error instanceof LocalServiceError && error.message.includes('EADDRINUSE'),
  );
}

/**
 * Ports this process gave its services. A port is free when chosen and taken only once the service binds it: services
 * starting together would otherwise be given the same one now and then, and the one that lost it (exiting on
 * EADDRINUSE) could meanwhile find the other answering its readiness probe.
 */
const claimedPorts = new Set<number>();

async function unclaimedPort(choose: () => Promise<number>): Promise<number> {
  let port = await choose();
  for (let attempt = 0; claimedPorts.has(port) && attempt < 100; attempt++) port = await choose();
  claimedPorts.add(port);
  return port;
}

async function startLocalServiceOnce(name: LocalServiceName, options: StartLocalServicesOptions, replica: number, logFile: string): Promise<LocalService> {
  const choose = options.choosePort ?? (() => freePort());
  const port = await unclaimedPort(choose);
  let adminPort = await unclaimedPort(choose);
  while (adminPort === port) adminPort = await choose();
  // The dashboard serves every user from every replica: it has nothing to share out.
  const sharded = name !== DASHBOARD_SERVICE && ((options.replicas ?? 1) > 1 || options.sharding === true);
  const tls = await localAdminTls(options.logDir);
  const args = await serviceArgs(name === 'core', options, { port, adminPort, tls }, sharded, `${name}-${replica}`);
  const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
  const { child, simStateDir } = spawnServiceProcess(name, args, logFile, options);
  const service: LocalService = {
    name,
    replica,
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    adminUrl: `https://127.0.0.1:${adminPort}`,
    adminCaPem: tls.caPem,
    logFile,
    child,
    ...(name === 'machine-provider' ? { simStateDir } : {}),
  };
  try {
    await waitReady(service, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    // This process only: the sim state dir may be another replica's too, and its workload servers still serve.
    await stopLocalServices([{ ...service, simStateDir: undefined }]);
    // The service says in its log (the part this start appended) when a port it was given was taken.
    const tail = readFileSync(logFile).subarray(logOffset).toString('utf8');
    if (tail.includes('EADDRINUSE')) throw new LocalServiceError(name, `a port it was given was taken (EADDRINUSE); see ${logFile}`);
    throw error;
  }
  return service;
}

/** Runs `apps/<app>/dist/main.js` with the service node flags and `args`, its output appended to `logFile`. */
function spawnServiceProcess(app: string, args: string[], logFile: string, options: StartLocalServicesOptions): { child: ChildProcess; simStateDir: string } {
  const simStateDir = simStateDirOf(options);
  const env = { ...SERVICE_ENV, ...process.env, ...options.env, CAPSTAN_SIM_STATE_DIR: simStateDir };
  const fd = openSync(logFile, 'a');
  const flags = app === 'all-in-one' ? ALL_IN_ONE_NODE_FLAGS : SERVICE_NODE_FLAGS;
  const child = spawn(process.execPath, [...flags, join(workspaceRoot(), 'apps', app, 'dist', 'main.js'), ...args], {
    stdio: ['ignore', fd, fd],
    env,
  });
  closeSync(fd);
  return { child, simStateDir };
}

/** The command line of a service process (a service, or the all-in-one with `withCore`) but its main module. */
async function serviceArgs(
  withCore: boolean,
  options: StartLocalServicesOptions,
  ports: { port: number; adminPort: number; tls: LocalAdminTls },
  sharded: boolean,
  identity: string,
): Promise<string[]> {
  const args = [
    '--kubeconfig',
    options.kubeconfigPath,
    '--nats-url',
    options.natsUrl,
    '--http-host',
    '127.0.0.1',
    '--http-port',
    String(ports.port),
    '--admin-port',
    String(ports.adminPort),
    '--admin-tls-cert-file',
    ports.tls.certFile,
    '--admin-tls-key-file',
    ports.tls.keyFile,
    ...(options.syncPeriodSeconds ? ['--sync-period', String(options.syncPeriodSeconds)] : []),
    ...(options.namespace ? ['--namespace', options.namespace] : []),
    ...(options.subjectRoot ? ['--subject-root', options.subjectRoot] : []),
    ...(options.streamName ? ['--stream-name', options.streamName] : []),
    ...(options.logLevel ? ['--log-level', options.logLevel] : []),
    ...(sharded ? ['--sharding', '--identity', identity, '--leader-election-namespace', options.namespace ?? 'default'] : []),
    ...(options.leaseTimings
      ? [
          '--leader-elect-lease-duration',
          options.leaseTimings.leaseDuration,
          '--leader-elect-renew-deadline',
          options.leaseTimings.renewDeadline,
          '--leader-elect-retry-period',
          options.leaseTimings.retryPeriod,
        ]
      : []),
  ];
  if (withCore && options.conversionWebhook) {
    const webhookPort = await freePort();
    args.push(
      '--webhook-port',
      String(webhookPort),
      '--webhook-bind-address',
      '127.0.0.1',
      '--webhook-url',
      `https://127.0.0.1:${webhookPort}/convert`,
      ...(options.webhookClientCaFile ? ['--webhook-client-ca-file', options.webhookClientCaFile] : []),
      // Its certificates go into a Secret of the core's namespace: one that exists here.
      ...(sharded ? [] : ['--leader-election-namespace', options.namespace ?? 'default']),
    );
  }
  return args;
}

/** A first port from which `count` ports in a row are free (the all-in-one serves service i on port + i). */
async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = await freePort();
    const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => isPortFree(first + 1 + i)));
    if (rest.every(Boolean)) return first;
  }
  throw new LocalServiceError('all-in-one', `no ${count} free ports in a row`);
}

/** The five services in one all-in-one process, ready when every one of them answers /readyz. */
async function startAllInOneProcess(options: StartLocalServicesOptions): Promise<LocalService[]> {
  if ((options.replicas ?? 1) > 1) throw new LocalServiceError('all-in-one', 'runs one replica of each service');
  if (options.dashboard) throw new LocalServiceError('all-in-one', 'runs the five services, not the dashboard');
  const names = LOCAL_SERVICES.filter((s) => options.services?.includes(s) ?? true);
  if (names.length !== LOCAL_SERVICES.length) throw new LocalServiceError('all-in-one', 'runs all five services');
  const port = await freePortRun(names.length);
  const adminPort = await freePortRun(names.length);
  const tls = await localAdminTls(options.logDir);
  const logFile = join(options.logDir, 'all-in-one.log');
  const args = await serviceArgs(true, options, { port, adminPort, tls }, options.sharding === true, 'all-in-one-0');
  const { child, simStateDir } = spawnServiceProcess('all-in-one', args, logFile, options);
  const services: LocalService[] = names.map((name, index) => ({
    name,
    replica: 0,
    pid: child.pid!,
    url: `http://127.0.0.1:${port + index}`,
    adminUrl: `https://127.0.0.1:${adminPort + index}`,
    adminCaPem: tls.caPem,
    logFile,
    child,
    ...(name === 'machine-provider' ? { simStateDir } : {}),
  }));
  try {
    for (const service of services) {
      options.onProgress?.(service.name, 'starting');
      await waitReady(service, options.readyTimeoutMs ?? 60_000);
      options.onProgress?.(service.name, 'ready');
    }
  } catch (error) {
    await stopLocalServices(services);
    throw error;
  }
  return services;
}

/**
 * SIGKILLs one service (no graceful shutdown: leases, queues and in-flight writes are lost, as in a crash) and
 * starts it again with the same options; `services` is updated in place. For crash-and-resume tests.
 */
export async function killAndRestartLocalService(
  services: LocalService[],
  name: LocalServiceName,
  options: StartLocalServicesOptions,
  replica = 0,
): Promise<LocalService> {
  const index = services.findIndex((s) => s.name === name && s.replica === replica);
  if (index < 0) throw new LocalServiceError(name, 'is not running');
  const old = services[index]!;
  if (old.child.exitCode === null && old.child.signalCode === null) {
    await new Promise<void>((resolveExit) => {
      old.child.once('exit', () => resolveExit());
      old.child.kill('SIGKILL');
    });
  }
  const restarted = await startLocalService(name, options, replica);
  services[index] = restarted;
  return restarted;
}

/**
 * SIGTERM (graceful: drain reconciles, release leases), then SIGKILL after the grace period. Then what the
 * machine-provider's sim state dir still records as running (it was killed before it stopped its workload API
 * servers and node agents) is stopped too: only those, so another environment's processes are never touched.
 */
export async function stopLocalServices(services: LocalService[], graceMs = 15_000): Promise<void> {
  // One signal per process: the all-in-one's services share one, and a second SIGTERM would cut its graceful stop.
  const processes = [...new Map([...services].reverse().map((s) => [s.child, s])).values()];
  await Promise.all(
    processes.map(
      (service) =>
        new Promise<void>((resolveStop) => {
          if (service.child.exitCode !== null || service.child.signalCode !== null) return resolveStop();
          const timer = setTimeout(() => service.child.kill('SIGKILL'), graceMs);
          service.child.once('exit', () => {
            clearTimeout(timer);
            resolveStop();
          });
          service.child.kill('SIGTERM');
        }),
    ),
  );
  const simStateDirs = new Set(services.flatMap((s) => (s.simStateDir ? [s.simStateDir] : [])));
  for (const dir of simStateDirs) await stopRecordedSimProcesses(dir);
}

/** One line per service: name, URLs (health and metrics, admin API) and pid, as `capstan init --local` prints them. */
export function localServiceLines(services: readonly LocalService[]): string[] {
  const several = new Set(services.filter((s) => s.replica > 0).map((s) => s.name));
  return services.map(
    (s) => `  ${(several.has(s.name) ? `${s.name}-${s.replica}` : s.name).padEnd(24)} ${s.url}  admin ${s.adminUrl}  pid ${s.pid}`,
  );
}

/** A process a sim state dir's pid file (`<name>.pid.json`, libs/sim's OwnedProcess) names and that still runs it. */
export interface RecordedSimProcess {
  name: string;
  pid: number;
  pidFile: string;
}

/**
 * The live processes recorded under a sim state dir: workload API servers (`clusters/<ns>/<name>/`, `shared/`),
 * node agents (`machines/<ns>/<name>/`) and the sim's own etcd (`etcd/`). A pid whose command line is no longer
 * the recorded one was recycled by the kernel and is left out.
 */
export function recordedSimProcesses(simStateDir: string): RecordedSimProcess[] {
  return pidFilesUnder(simStateDir, 4).flatMap((pidFile) => {
    const record = readPidRecord(pidFile);
    if (!record || !isAlive(record.pid) || !runsCommand(record.pid, [record.command, ...record.args])) return [];
    return [{ name: pidFile.slice(pidFile.lastIndexOf('/') + 1, -'.pid.json'.length), pid: record.pid, pidFile }];
  });
}

/** Stops what `recordedSimProcesses` finds, etcd last (API servers shut down cleanly while it still answers). */
export async function stopRecordedSimProcesses(simStateDir: string): Promise<RecordedSimProcess[]> {
  const found = recordedSimProcesses(simStateDir);
  const etcd = found.filter((p) => p.name === 'etcd');
  await Promise.all(found.filter((p) => p.name !== 'etcd').map((p) => stopPid(p.pid)));
  await Promise.all(etcd.map((p) => stopPid(p.pid)));
  return found;
}

function pidFilesUnder(dir: string, depth: number): string[] {
  if (depth < 0 || !existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return pidFilesUnder(path, depth - 1);
    return entry.isFile() && entry.name.endsWith('.pid.json') ? [path] : [];
  });
}

function readPidRecord(file: string): { pid: number; command: string; args: string[] } | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; command?: unknown; args?: unknown };
    const { pid, command, args } = record;
    if (typeof pid !== 'number' || typeof command !== 'string' || !Array.isArray(args)) return undefined;
    return { pid, command, args: args.map(String) };
  } catch {
    return undefined;
  }
}

function runsCommand(pid: number, commandLine: string[]): boolean {
  try {
    const running = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((part) => part !== '');
    return running.length === commandLine.length && running.every((part, i) => part === commandLine[i]);
  } catch {
    return false;
  }
}
