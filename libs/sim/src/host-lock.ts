import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { isAlive } from '@capstan/testing';
import { SimError } from './errors.js';

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
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
    // A holder that died, or one that had not written its pid yet and whose file is older than a moment.
    if (holder !== undefined && !isAlive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new SimError(`${file} is still held by process ${holder ?? 'unknown'}`, 'APIServerStartFailed', { file });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
