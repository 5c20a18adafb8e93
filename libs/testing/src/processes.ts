import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { TestEnvironmentError } from './errors.js';

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** Resolves once the process has exited. */
  readonly exited: Promise<number | null>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** Detached processes outlive this Node process (used by `env:up`). */
  detached?: boolean;
}

export function startProcess(options: StartProcessOptions): ManagedProcess {
  const fd = openSync(options.logFile, 'a');
  const child = spawn(options.command, options.args, {
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...options.env },
    detached: options.detached ?? false,
  });
  closeSync(fd);
  if (child.pid === undefined) {
    throw new TestEnvironmentError(`could not start ${options.name} (${options.command})`, { name: options.name });
  }
  if (options.detached) child.unref();
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
  return { name: options.name, pid: child.pid, logFile: options.logFile, child, exited };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the pid is gone. */
export async function stopPid(pid: number, graceMs = 5000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    while (isAlive(pid)) await sleep(20);
  }
}

export function tailLog(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it resolves true; fails early when the process exits, with its log tail. */
export async function waitUntilReady(
  process: ManagedProcess | undefined,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void process?.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) {
      throw new TestEnvironmentError(`${what} exited during start-up:\n${tailLog(process!.logFile)}`, { what });
    }
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  throw new TestEnvironmentError(
    `${what} was not ready within ${timeoutMs} ms` + (process ? `:\n${tailLog(process.logFile)}` : ''),
    { what },
  );
}
