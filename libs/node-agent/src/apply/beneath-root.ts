import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { HostRoot } from './host-root.js';

/**
 * A machine path that leads through a symbolic link, or through something that is not a directory. Carries the
 * system-style code the step reports (`ELOOP`, `ENOTDIR`); never the content.
 */
export class BeneathRootError extends Error {
  constructor(
    readonly machinePath: string,
    readonly code: 'ELOOP' | 'ENOTDIR' | 'EISDIR',
  ) {
    super(`${machinePath}: ${code}`);
    this.name = 'BeneathRootError';
  }
}

export interface FileOwner {
  uid?: number;
  gid?: number;
}

const NO_FOLLOW = constants.O_NOFOLLOW;

/** Whether the caller may hand files to other owners (only root can). */
const canChown = typeof process.getuid === 'function' && process.getuid() === 0;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * The host path of the directory holding `machinePath`, every component below the root checked with `lstat`:
 * a symbolic link anywhere on the way is refused (ELOOP), missing directories are created (mode 0755) when `create`.
 * A machine's tenant can put symlinks into its root (an instruction can run `ln -s`); a writer that followed one
 * would write, chmod, chown or delete a file of the host outside the machine.
 */
function parentBeneath(root: HostRoot, machinePath: string, create: boolean): { parent: string; name: string } | undefined {
  const target = root.resolve(machinePath);
  const parts = machinePath.split('/').filter((part) => part !== '');
  const name = parts.pop();
  if (name === undefined) throw new BeneathRootError(machinePath, 'EISDIR');
  let current = root.dir;
  for (const part of parts) {
    current = join(current, part);
    let found;
    try {
      found = lstatSync(current);
    } catch (error) {
      if (!isMissing(error) || !create) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      mkdirSync(current, { mode: 0o755 });
      found = lstatSync(current);
    }
    if (found.isSymbolicLink()) throw new BeneathRootError(machinePath, 'ELOOP');
    if (!found.isDirectory()) throw new BeneathRootError(machinePath, 'ENOTDIR');
  }
  return { parent: target.slice(0, target.length - name.length - 1) || '/', name };
}

/**
 * Writes a file below the root without following a symbolic link: the content goes to a temporary file with an
 * unpredictable name, opened with O_CREAT|O_EXCL|O_NOFOLLOW, its mode and owner set on the open descriptor, and is
 * renamed over the target (which replaces a symlink there instead of writing through it). A reader never sees a
 * half-written or briefly world-readable file.
 */
export function writeBeneath(root: HostRoot, machinePath: string, content: Buffer | string, mode: number, owner: FileOwner = {}): void {
  const { parent, name } = parentBeneath(root, machinePath, true)!;
  const target = join(parent, name);
  const existing = lstatOrUndefined(target);
  if (existing?.isDirectory()) throw new BeneathRootError(machinePath, 'EISDIR');
  const temporary = join(parent, `.${name}.capstan-${randomBytes(8).toString('hex')}`);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, mode & 0o7777);
  try {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
    fchmodSync(fd, mode & 0o7777);
    if (canChown && (owner.uid !== undefined || owner.gid !== undefined)) fchownSync(fd, owner.uid ?? 0, owner.gid ?? 0);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, target);
}

/** Creates a directory below the root (or keeps it), its mode and owner set through a descriptor opened O_NOFOLLOW. */
export function makeDirectoryBeneath(root: HostRoot, machinePath: string, mode: number, owner: FileOwner = {}): void {
  const { parent, name } = parentBeneath(root, machinePath, true)!;
  const target = join(parent, name);
  try {
    mkdirSync(target, { mode: mode & 0o7777 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (lstatSync(target).isSymbolicLink()) throw new BeneathRootError(machinePath, 'ELOOP');
  let fd: number;
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_DIRECTORY | NO_FOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new BeneathRootError(machinePath, code);
    throw error;
  }
  try {
    fchmodSync(fd, mode & 0o7777);
    if (canChown && (owner.uid !== undefined || owner.gid !== undefined)) fchownSync(fd, owner.uid ?? 0, owner.gid ?? 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes a file, a symbolic link (the link itself) or an empty directory below the root; nothing there is fine.
 * A path through a symlink is refused, so a delete never reaches a file outside the machine.
 */
export function removeBeneath(root: HostRoot, machinePath: string): void {
  const located = parentBeneath(root, machinePath, false);
  if (!located) return;
  const target = join(located.parent, located.name);
  const found = lstatOrUndefined(target);
  if (!found) return;
  if (found.isDirectory()) rmdirSync(target);
  else unlinkSync(target);
}

/**
 * Reads a file below the root without following a symbolic link on the way or at the end; `maxBytes` bounds what is
 * read (a file the tenant controls can be of any size).
 */
export function readBeneath(root: HostRoot, machinePath: string, maxBytes: number): Buffer {
  const located = parentBeneath(root, machinePath, false);
  if (!located) throw Object.assign(new Error(`${machinePath}: ENOENT`), { code: 'ENOENT' });
  let fd: number;
  try {
    fd = openSync(join(located.parent, located.name), constants.O_RDONLY | NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new BeneathRootError(machinePath, 'ELOOP');
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new BeneathRootError(machinePath, stat.isDirectory() ? 'EISDIR' : 'ENOTDIR');
    // Read one byte past the limit rather than trusting the size: the file can grow after fstat.
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n) n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) throw Object.assign(new Error(`${machinePath}: EFBIG`), { code: 'EFBIG' });
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The mode bits and owner of a file below the root, not following a symbolic link (a link is refused). */
export function statBeneath(root: HostRoot, machinePath: string): { mode: number; uid: number } {
  const located = parentBeneath(root, machinePath, false);
  if (!located) throw Object.assign(new Error(`${machinePath}: ENOENT`), { code: 'ENOENT' });
  const found = lstatSync(join(located.parent, located.name));
  if (found.isSymbolicLink()) throw new BeneathRootError(machinePath, 'ELOOP');
  return { mode: found.mode & 0o777, uid: found.uid };
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}
