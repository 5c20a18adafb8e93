import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etcdIsRecentEnough, parseEtcdVersion, resolveControlPlaneBinaries } from './binaries.js';
import { TestEnvironmentError } from './errors.js';

describe('etcd version check', () => {
  it('reads the version etcd prints', () => {
    expect(parseEtcdVersion('etcd Version: 3.6.16\nGit SHA: GitNotFound\n')).toEqual([3, 6, 16]);
    expect(parseEtcdVersion('something else')).toBeUndefined();
  });

  it('refuses Debian etcd 3.4 and accepts 3.5.13 or newer', () => {
    expect(etcdIsRecentEnough([3, 4, 23])).toBe(false);
    expect(etcdIsRecentEnough([3, 5, 12])).toBe(false);
    expect(etcdIsRecentEnough([3, 5, 13])).toBe(true);
    expect(etcdIsRecentEnough([3, 6, 0])).toBe(true);
  });
});

describe('resolveControlPlaneBinaries without binaries or Go', () => {
  const saved = { ...process.env };
  let empty: string;

  beforeEach(() => {
    empty = mkdtempSync(join(tmpdir(), 'capstan-nobin-'));
    process.env['PATH'] = empty;
    process.env['KUBEBUILDER_ASSETS'] = empty;
    process.env['XDG_CACHE_HOME'] = empty;
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(empty, { recursive: true, force: true });
  });

  it('stops with one message naming what is missing and how to provide it', () => {
    let error: unknown;
    try {
      resolveControlPlaneBinaries();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TestEnvironmentError);
    const message = (error as Error).message;
    expect(message).toMatch(/etcd v3\.\d+\.\d+ was not found and Go is not installed/);
    expect(message).toContain('KUBEBUILDER_ASSETS');
    expect(message).toContain('install Go');
  });
});
