import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { isAlive } from '@capstan/testing/local-host';
import { SimError } from './errors.js';

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

const STALE_EMPTY_LOCK_MS = 5_000;

function olderThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

/**
 * Runs `task` holding a lock file on this host: for what replicas of the provider sharing one state dir must not
 * do at once (start the one shared kube-apiserver). The file names the holder's pid; a lock whose holder died
 * (a replica killed while holding it) is taken over.
 */
export async function withHostLock<T>(file: string, timeoutMs: number, task: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (fd !== undefined) {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      try {
        return await task();
      } finally {
        rmSync(file, { force: true });
      }
    }
    const holder = holderOf(file);
    // Taken over when its holder died, or when it names no holder a while after it was made (the holder was killed
    // between creating and writing it). Renamed away first: of two waiters taking it over, one wins the rename.
    if (holder !== undefined ? !isAlive(holder) : olderThan(file, STALE_EMPTY_LOCK_MS)) {
      const aside = `${file}.stale-${randomBytes(4).toString('hex')}`;
      try {
        renameSync(file, aside);
        rmSync(aside, { force: true });
      } catch {
        // Another waiter took it over first.
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new SimError(`${file} is still held by process ${holder ?? 'unknown'}`, 'APIServerStartFailed', { file });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
