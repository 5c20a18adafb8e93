import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASE_PACKAGES, buildBaseRootfs, NONROOT_ID, type BaseRootfs } from './base-rootfs.js';

/** `tar -tv` of the tar as { path: "mode owner/group -> target" }. */
function listing(tarPath: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of execFileSync('tar', ['--list', '--verbose', '--numeric-owner', `--file=${tarPath}`], {
    encoding: 'utf8',
  }).split('\n')) {
    const match = /^(\S+) (\d+)\/(\d+)\s+\d+ \S+ \S+ (\S+)(?: -> (\S+))?$/.exec(line);
    if (match)
      entries.set(
        match[4]!.replace(/^\.\//, '/').replace(/(.)\/$/, '$1'),
        `${match[1]} ${match[2]}/${match[3]}${match[5] ? ` -> ${match[5]}` : ''}`,
      );
  }
  return entries;
}

describe('the base image root filesystem', () => {
  let dir: string;
  let first: BaseRootfs;
  let second: BaseRootfs;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-rootfs-'));
    // The .deb files come from the shared cache (downloaded once); everything else is made twice from scratch.
    first = buildBaseRootfs({ outDir: join(dir, 'first') });
    second = buildBaseRootfs({ outDir: join(dir, 'second') });
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is byte-identical when built twice from the same inputs', () => {
    expect(second.sha256).toBe(first.sha256);
    expect(readFileSync(second.tarPath).equals(readFileSync(first.tarPath))).toBe(true);
  });

  it('holds node, sh, the nonroot user and a sticky /tmp, owned as the image needs them', () => {
    const entries = listing(first.tarPath);
    expect(entries.get('/usr/local/bin/node')).toBe('-rwxr-xr-x 0/0');
    expect(entries.get('/bin/sh')).toBe('lrwxrwxrwx 0/0 -> dash');
    expect(entries.get('/tmp')).toBe('drwxrwxrwt 0/0');
    expect(entries.get('/home/nonroot')).toBe(`drwxr-xr-x ${NONROOT_ID}/${NONROOT_ID}`);
    expect(entries.get('/')).toBe('drwxr-xr-x 0/0');
    const passwd = execFileSync(
      'tar',
      ['--extract', '--to-stdout', `--file=${first.tarPath}`, './etc/passwd'],
      { encoding: 'utf8' },
    );
    expect(passwd).toContain(`nonroot:x:${NONROOT_ID}:${NONROOT_ID}:`);
  });

  it('leaves out what no process reads: documentation, man pages, locales, iconv modules', () => {
    const paths = [...listing(first.tarPath).keys()];
    expect(paths.filter((path) => path.startsWith('/usr/share') || path.includes('/gconv'))).toEqual([]);
  });

  it("records the node version and each package at the host's version", () => {
    expect(first.nodeVersion).toMatch(/^v24\./);
    expect(first.packages.map((p) => p.name)).toEqual([...BASE_PACKAGES]);
    for (const pkg of first.packages) {
      const installed = execFileSync(
        'dpkg-query',
        ['-W', '-f=${Version}', `${pkg.name}:${pkg.architecture}`],
        { encoding: 'utf8' },
      );
      expect([pkg.name, pkg.version]).toEqual([pkg.name, installed]);
    }
    expect(first.labels['dev.capstan.base.debian-packages']).toContain(`libc6=${first.packages[0]!.version}`);
  });
});
