import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './processes.js';
import { cacheRoot } from './repo.js';

/**
 * Test servers must die with the test run. A run killed with SIGKILL cannot clean up after itself, so each
 * run records its children under its own pid, and the next run stops the children of runs that are gone.
 */
const OUR_BINARIES = /(^|\/)(etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|containerd|dockerd|nats-server)(\s|$)/;

function runDir(): string {
  const dir = join(cacheRoot(), 'run');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function ownFile(): string {
  return join(runDir(), `${process.pid}.json`);
}

function readPids(file: string): number[] {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as number[];
  } catch {
    return [];
  }
}

export function recordProcesses(pids: number[], detached: boolean): void {
  if (detached) return;
  writeFileSync(ownFile(), JSON.stringify([...new Set([...readPids(ownFile()), ...pids])]));
}

export function forgetProcesses(pids: number[]): void {
  const left = readPids(ownFile()).filter((pid) => !pids.includes(pid));
  if (left.length === 0) rmSync(ownFile(), { force: true });
  else writeFileSync(ownFile(), JSON.stringify(left));
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

export function reapOrphans(): void {
  for (const name of readdirSync(runDir())) {
    const owner = Number(name.replace(/\.json$/, ''));
    if (!Number.isInteger(owner) || isAlive(owner)) continue;
    const file = join(runDir(), name);
    for (const pid of readPids(file)) {
      // A recycled pid may now belong to anything: only stop our own kinds of server.
      if (isAlive(pid) && OUR_BINARIES.test(commandLine(pid))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone meanwhile */
        }
      }
    }
    rmSync(file, { force: true });
  }
}
