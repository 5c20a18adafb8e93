// The faults, injected into the real processes: SIGKILL of one service replica (started again at once, as a pod
// restarts), NATS stopped and started again on the same port and store, the management kube-apiserver restarted,
// and the shared workload kube-apiserver frozen with SIGSTOP. Plus a watch on every service process, so an exit
// the suite did not cause is recorded as a crash.
import { sep } from 'node:path';
import {
  killAndRestartLocalService,
  recordedSimProcesses,
  restartApiServer,
  stopNatsServer,
  tailLog,
  type LocalEnvironment,
  type LocalService,
  type LocalServiceName,
  type StartLocalServicesOptions,
} from '@capstan/testing';

export interface UnexpectedExit {
  identity: string;
  pid: number;
  code: number | null;
  signal: string | null;
  at: string;
  logTail: string;
}

/** Records every service exit the suite did not cause. */
export class ProcessWatch {
  private readonly killedByUs = new Set<number>();
  readonly unexpectedExits: UnexpectedExit[] = [];

  watch(service: LocalService): void {
    service.child.once('exit', (code, signal) => {
      if (this.killedByUs.has(service.pid)) return;
      this.unexpectedExits.push({
        identity: `${service.name}-${service.replica}`,
        pid: service.pid,
        code,
        signal,
        at: new Date().toISOString(),
        logTail: tailLog(service.logFile, 40),
      });
    });
  }

  expectExit(pid: number): void {
    this.killedByUs.add(pid);
  }

  /** Stopping the environment at the end: no exit from now on is a crash. */
  stopWatching(services: LocalService[]): void {
    for (const s of services) this.killedByUs.add(s.pid);
  }
}

export interface KillRecord {
  service: LocalServiceName;
  replica: number;
  oldPid: number;
  newPid?: number;
  /** From the SIGKILL to the new process answering /readyz. */
  restartMs?: number;
  restartError?: string;
}

/** SIGKILLs one replica and starts it again (same identity, so it rejoins its shard membership). */
export async function killReplica(
  services: LocalService[],
  options: StartLocalServicesOptions,
  watch: ProcessWatch,
  service: LocalServiceName,
  replica: number,
): Promise<KillRecord> {
  const old = services.find((s) => s.name === service && s.replica === replica);
  if (!old) throw new Error(`${service}-${replica} is not running`);
  watch.expectExit(old.pid);
  const started = performance.now();
  try {
    const restarted = await killAndRestartLocalService(services, service, options, replica);
    watch.watch(restarted);
    return {
      service,
      replica,
      oldPid: old.pid,
      newPid: restarted.pid,
      restartMs: performance.now() - started,
    };
  } catch (error) {
    return { service, replica, oldPid: old.pid, restartError: (error as Error).message };
  }
}

/** Runs while a fault is in force; `lifted()` turns true when the fault is being lifted (stop then). */
export type During = (lifted: () => boolean) => Promise<void>;

/** Holds the fault for `ms` while `during` runs, then waits for `during` to notice and end. */
async function hold(ms: number, during?: During): Promise<void> {
  let over = false;
  const watching = during?.(() => over).catch(() => undefined);
  try {
    await new Promise((r) => setTimeout(r, Math.max(0, ms)));
  } finally {
    over = true;
    await watching;
  }
}

export interface OutageRecord {
  /** performance.now() when the fault was injected and when it was lifted. */
  injectedAt: number;
  liftedAt: number;
  detail: string;
}

/** NATS down for `seconds` (SIGTERM; JetStream's file store is kept), then up again on the same port. */
export async function natsOutage(
  env: LocalEnvironment,
  seconds: number,
  during?: During,
): Promise<OutageRecord> {
  const injectedAt = performance.now();
  const stopped = await stopNatsServer(env);
  try {
    await hold(injectedAt + seconds * 1000 - performance.now(), during);
  } finally {
    await stopped.start({ readyTimeoutMs: 60_000 });
  }
  return {
    injectedAt,
    liftedAt: performance.now(),
    detail: `nats-server stopped for ${seconds} s, started again on ${env.natsUrl}`,
  };
}

/** The management kube-apiserver stopped (SIGTERM) and started again on the same port, certificates and etcd. */
export async function restartManagementApiServer(
  env: LocalEnvironment,
  during?: During,
): Promise<OutageRecord> {
  const injectedAt = performance.now();
  let ready = false;
  const watching = during?.(() => ready).catch(() => undefined);
  try {
    await restartApiServer(env, { readyTimeoutMs: 120_000 });
  } finally {
    ready = true;
    await watching;
  }
  return {
    injectedAt,
    liftedAt: performance.now(),
    detail: `kube-apiserver restarted on ${env.apiServerUrl}`,
  };
}

/** The shared-mode workload kube-apiserver's pid, from the sim state dir's pid files. */
export function sharedApiServerPid(simStateDir: string): number | undefined {
  return recordedSimProcesses(simStateDir).find(
    (p) => p.name === 'kube-apiserver' && p.pidFile.includes(`${sep}shared${sep}`),
  )?.pid;
}

/** SIGSTOP the shared workload API server for `seconds`, then SIGCONT (always, even when `during` fails). */
export async function freezeWorkloadApiServer(
  simStateDir: string,
  seconds: number,
  during?: During,
): Promise<OutageRecord & { pid: number }> {
  const pid = sharedApiServerPid(simStateDir);
  if (pid === undefined)
    throw new Error(`no shared workload kube-apiserver is recorded under ${simStateDir}`);
  const injectedAt = performance.now();
  process.kill(pid, 'SIGSTOP');
  try {
    await hold(seconds * 1000, during);
  } finally {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      /* it was replaced meanwhile: reported by the caller through the pid check */
    }
  }
  return {
    injectedAt,
    liftedAt: performance.now(),
    pid,
    detail: `shared workload kube-apiserver (pid ${pid}) SIGSTOPped for ${seconds} s`,
  };
}
