import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, closeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

/** The five services `capstan init --local`, the demo and the end-to-end tests run, in start order. */
export const LOCAL_SERVICES = ['core', 'cluster-provider', 'machine-provider', 'bootstrap-provider', 'control-plane-provider'] as const;
export type LocalServiceName = (typeof LOCAL_SERVICES)[number];

export interface LocalService {
  name: LocalServiceName;
  pid: number;
  url: string;
  logFile: string;
  child: ChildProcess;
}

export interface StartLocalServicesOptions {
  kubeconfigPath: string;
  natsUrl: string;
  logDir: string;
  /** Extra environment for the services (e.g. the sim's shared etcd). */
  env?: NodeJS.ProcessEnv;
  syncPeriodSeconds?: number;
  /** Watch only this namespace (several sets of services can then share one API server). */
  namespace?: string;
  /** Event bus subject root and stream, so several sets of services can share one NATS server. */
  subjectRoot?: string;
  streamName?: string;
  logLevel?: string;
  readyTimeoutMs?: number;
  onProgress?(service: LocalServiceName, state: 'starting' | 'ready'): void;
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
    const ready = await fetch(`${service.url}/readyz`).then((r) => r.ok, () => false);
    if (ready) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new LocalServiceError(service.name, `not ready within ${timeoutMs / 1000}s; see ${service.logFile}`);
}

/**
 * Runs the services as local processes against a management cluster (the embedded default): each logs
 * pino JSON to `<logDir>/<service>.log` and serves /healthz, /readyz, /metrics and /admin on a free port.
 */
export async function startLocalServices(options: StartLocalServicesOptions): Promise<LocalService[]> {
  mkdirSync(options.logDir, { recursive: true });
  const started: LocalService[] = [];
  try {
    for (const name of LOCAL_SERVICES) {
      options.onProgress?.(name, 'starting');
      const port = await freePort();
      const logFile = join(options.logDir, `${name}.log`);
      const fd = openSync(logFile, 'a');
      const args = [
        join(workspaceRoot(), 'apps', name, 'dist', 'main.js'),
        '--kubeconfig',
        options.kubeconfigPath,
        '--nats-url',
        options.natsUrl,
        '--http-host',
        '127.0.0.1',
        '--http-port',
        String(port),
        ...(options.syncPeriodSeconds ? ['--sync-period', String(options.syncPeriodSeconds)] : []),
        ...(options.namespace ? ['--namespace', options.namespace] : []),
        ...(options.subjectRoot ? ['--subject-root', options.subjectRoot] : []),
        ...(options.streamName ? ['--stream-name', options.streamName] : []),
        ...(options.logLevel ? ['--log-level', options.logLevel] : []),
      ];
      const child = spawn(process.execPath, args, { stdio: ['ignore', fd, fd], env: { ...process.env, ...options.env } });
      closeSync(fd);
      const service: LocalService = { name, pid: child.pid!, url: `http://127.0.0.1:${port}`, logFile, child };
      started.push(service);
      await waitReady(service, options.readyTimeoutMs ?? 60_000);
      options.onProgress?.(name, 'ready');
    }
    return started;
  } catch (error) {
    await stopLocalServices(started);
    throw error;
  }
}

/** SIGTERM (graceful: drain reconciles, release leases), then SIGKILL after the grace period. */
export async function stopLocalServices(services: LocalService[], graceMs = 15_000): Promise<void> {
  await Promise.all(
    [...services].reverse().map(
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
}
