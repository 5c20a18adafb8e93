import { chmod, chown, mkdir, rm, rmdir, stat, writeFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PlanFile } from '../plan/plan.js';
import type { HostRoot } from './host-root.js';

/** A file step that failed: names the path and the system error code, never the content. */
export class FileStepError extends Error {
  constructor(readonly path: string, readonly code: string) {
    super(`file ${path}: ${code}`);
    this.name = 'FileStepError';
  }
}

const mode = (permissions: string | undefined, fallback: number) =>
  permissions === undefined ? fallback : parseInt(permissions, 8);

/** Whether the agent may hand files to other owners (only root can). */
const canChown = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * Writes, creates or deletes one plan file. Content goes to a temporary file first and is renamed into place with
 * its mode already set, so a reader (or a crash) never sees a half-written or briefly world-readable file.
 */
export async function applyFile(root: HostRoot, file: PlanFile): Promise<void> {
  const target = root.resolve(file.path);
  try {
    if (file.action === 'delete') {
      const found = await stat(target).catch(() => undefined);
      if (found?.isDirectory()) await rmdir(target);
      else if (found) await rm(target, { force: true });
      return;
    }
    if (file.directory) {
      await mkdir(target, { recursive: true, mode: mode(file.permissions, 0o755) });
      await chmod(target, mode(file.permissions, 0o755));
    } else {
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      const temporary = `${target}.capstan-tmp-${process.pid}`;
      await writeFile(temporary, Buffer.from(file.content ?? '', 'base64'), { mode: mode(file.permissions, 0o644) });
      await chmod(temporary, mode(file.permissions, 0o644));
      await rename(temporary, target);
    }
    if (canChown && (file.uid !== undefined || file.gid !== undefined)) {
      await chown(target, file.uid ?? 0, file.gid ?? 0);
    }
  } catch (error) {
    throw new FileStepError(file.path, (error as NodeJS.ErrnoException).code ?? 'EIO');
  }
}
