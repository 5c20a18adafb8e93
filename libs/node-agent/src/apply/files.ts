import type { PlanFile } from '../plan/plan.js';
import { BeneathRootError, makeDirectoryBeneath, removeBeneath, writeBeneath } from './beneath-root.js';
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

/**
 * Writes, creates or deletes one plan file below the host root, never through a symbolic link (beneath-root.ts):
 * content goes to a temporary file and is renamed into place with its mode and owner already set, so a reader (or a
 * crash) never sees a half-written or briefly world-readable file.
 */
export async function applyFile(root: HostRoot, file: PlanFile): Promise<void> {
  const owner = { uid: file.uid, gid: file.gid };
  try {
    if (file.action === 'delete') removeBeneath(root, file.path);
    else if (file.directory) makeDirectoryBeneath(root, file.path, mode(file.permissions, 0o755), owner);
    else writeBeneath(root, file.path, Buffer.from(file.content ?? '', 'base64'), mode(file.permissions, 0o644), owner);
  } catch (error) {
    const code = error instanceof BeneathRootError ? error.code : ((error as NodeJS.ErrnoException).code ?? 'EIO');
    throw new FileStepError(file.path, code);
  }
}
