import {
  closeSync,
  copyFileSync,
  chmodSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { cacheRoot } from '../repo.js';
import { describeImage, runDocker, type BuiltImage } from './docker-cli.js';
import { ImageBuildError } from './image-build-error.js';

export interface StaticBinaryImageOptions {
  socketPath: string;
  /** A statically linked executable (a CGO_ENABLED=0 Go build): nothing else is in the image. */
  binaryPath: string;
  /** The image repository, e.g. capstan.dev/pause. */
  name: string;
  tag: string;
  log?: (line: string) => void;
}

/** ELF program header type of the dynamic loader's path: a binary with one needs libraries no scratch image has. */
const PT_INTERP = 3;

/**
 * An image FROM scratch holding one static binary as /<its file name>, which is the entrypoint (a pod sandbox's pause,
 * CoreDNS). Same binary, same layer: its mtime is fixed.
 */
export async function buildStaticBinaryImage(options: StaticBinaryImageOptions): Promise<BuiltImage> {
  assertStatic(options.binaryPath);
  const file = basename(options.binaryPath);
  const tag = `${options.name}:${options.tag}`;
  const parent = join(cacheRoot(), 'images');
  mkdirSync(parent, { recursive: true });
  const context = mkdtempSync(join(parent, 'static-'));
  try {
    copyFileSync(options.binaryPath, join(context, file));
    chmodSync(join(context, file), 0o755);
    lutimesSync(join(context, file), 0, 0);
    writeFileSync(
      join(context, 'Dockerfile'),
      `FROM scratch\nCOPY ${JSON.stringify([file, `/${file}`])}\nENTRYPOINT ${JSON.stringify([`/${file}`])}\n`,
    );
    options.log?.(`building ${tag} from ${options.binaryPath}`);
    await runDocker({
      socketPath: options.socketPath,
      args: ['build', '--pull=false', `--tag=${tag}`, context],
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return describeImage(options.socketPath, tag);
}

/** Throws unless `path` is a 64-bit little-endian ELF executable without an interpreter (statically linked). */
export function assertStatic(path: string): void {
  const fail = (why: string): never => {
    throw new ImageBuildError(`${path} cannot run FROM scratch: ${why}`, { path });
  };
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(64);
    if (readSync(fd, header, 0, 64, 0) < 64 || header.readUInt32BE(0) !== 0x7f454c46)
      fail('it is not an ELF file');
    if (header[4] !== 2 || header[5] !== 1) fail('only 64-bit little-endian ELF files are checked');
    const programHeaders = Number(header.readBigUInt64LE(0x20));
    const entrySize = header.readUInt16LE(0x36);
    const count = header.readUInt16LE(0x38);
    const entry = Buffer.alloc(4);
    for (let i = 0; i < count; i++) {
      readSync(fd, entry, 0, 4, programHeaders + i * entrySize);
      if (entry.readUInt32LE(0) === PT_INTERP) fail('it is dynamically linked (it names an ELF interpreter)');
    }
  } finally {
    closeSync(fd);
  }
}
