import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertStatic } from './static-binary-image.js';

/** A 64-bit little-endian ELF header followed by program headers of the given types (p_type only; the rest zero). */
function elf(programHeaderTypes: readonly number[]): Buffer {
  const header = Buffer.alloc(64 + 56 * programHeaderTypes.length);
  header.writeUInt32BE(0x7f454c46, 0);
  header[4] = 2; // ELFCLASS64
  header[5] = 1; // little-endian
  header.writeBigUInt64LE(64n, 0x20); // e_phoff
  header.writeUInt16LE(56, 0x36); // e_phentsize
  header.writeUInt16LE(programHeaderTypes.length, 0x38); // e_phnum
  programHeaderTypes.forEach((type, i) => header.writeUInt32LE(type, 64 + 56 * i));
  return header;
}

describe('which binaries may go into an image FROM scratch', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'capstan-elf-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts a static executable (program headers without PT_INTERP)', () => {
    writeFileSync(join(dir, 'static'), elf([1, 1, 4])); // PT_LOAD, PT_LOAD, PT_NOTE
    expect(() => assertStatic(join(dir, 'static'))).not.toThrow();
  });

  it('refuses a dynamically linked one, which would fail in the container with "no such file or directory"', () => {
    writeFileSync(join(dir, 'dynamic'), elf([6, 3, 1])); // PT_PHDR, PT_INTERP, PT_LOAD
    expect(() => assertStatic(join(dir, 'dynamic'))).toThrow(/dynamically linked/);
    // The node running this test is linked against glibc.
    expect(() => assertStatic(process.execPath)).toThrow(/dynamically linked/);
  });

  it('refuses what is not an ELF executable', () => {
    writeFileSync(join(dir, 'script'), '#!/bin/sh\necho hi\n'.padEnd(64, ' '));
    expect(() => assertStatic(join(dir, 'script'))).toThrow(/not an ELF file/);
  });
});
