import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { savedEtcdSnapshotIn, type SavedEtcdSnapshot } from '@capstan/k3s-bootstrap';
import { runK3sCommand, type K3sCommandHost } from './k3s-commands.js';

// The stand-in k3s's command lines without an etcd: the machine's own snapshot files, and what it refuses.
describe('the sim k3s etcd commands', () => {
  let dir: string;
  let host: K3sCommandHost;
  const restored: string[] = [];

  beforeEach(() => {
    restored.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'capstan-k3s-cmd-'));
    host = {
      root: join(dir, 'root'),
      recordsDir: join(dir, 'records'),
      nodeName: 'demo-cp-0',
      server: true,
      saveSnapshot: async (file) => {
        writeFileSync(file, 'snapshot-bytes');
        return 14;
      },
      restoreSnapshot: async (file) => {
        restored.push(readFileSync(file, 'utf8'));
      },
      now: () => new Date('2026-11-28T10:00:00Z'),
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const savedOf = (output: string): SavedEtcdSnapshot => savedEtcdSnapshotIn(output)!;

  it('saves a local snapshot named as K3s names them, restores it, and deletes it', async () => {
    const result = await runK3sCommand(host, ['etcd-snapshot', 'save', '--name', 'nightly'], '');
    expect(result.code).toBe(0);
    const saved = savedOf(result.output);
    expect(saved).toEqual({
      fileName: 'nightly-demo-cp-0-1795860000',
      location: 'file:///var/lib/rancher/k3s/server/db/snapshots/nightly-demo-cp-0-1795860000',
      sizeBytes: 14,
      createdAt: '2026-11-28T10:00:00Z',
    });
    expect(existsSync(join(host.recordsDir, 'snapshots', saved.fileName))).toBe(true);

    const reset = await runK3sCommand(
      host,
      [
        'server',
        '--cluster-reset',
        `--cluster-reset-restore-path=/var/lib/rancher/k3s/server/db/snapshots/${saved.fileName}`,
      ],
      '',
    );
    expect(reset).toMatchObject({ code: 0 });
    expect(restored).toEqual(['snapshot-bytes']);

    expect(await runK3sCommand(host, ['etcd-snapshot', 'delete', saved.fileName], '')).toMatchObject({
      code: 0,
    });
    expect(existsSync(join(host.recordsDir, 'snapshots', saved.fileName))).toBe(false);
  });

  it('refuses what K3s would refuse, naming the flag and never the secret', async () => {
    const refusal = async (argv: string[], secret = '') => {
      const result = await runK3sCommand(host, argv, secret);
      expect(result.code).toBe(1);
      return result.output;
    };
    expect(await refusal(['etcd-snapshot', 'save', '--bogus'])).toContain('unknown flag --bogus');
    expect(await refusal(['etcd-snapshot', 'save', '--name', '../../etc'])).toContain(
      'is not a snapshot name',
    );
    expect(await refusal(['etcd-snapshot', 'save', '--s3', '--s3-bucket', 'b'])).toContain(
      '--s3 needs --s3-endpoint',
    );
    const badEndpoint = await refusal(
      [
        'etcd-snapshot',
        'save',
        '--s3',
        '--s3-endpoint',
        'http://x/y',
        '--s3-bucket',
        'bucket',
        '--s3-access-key',
        'a',
      ],
      'top-secret',
    );
    expect(badEndpoint).toContain('host[:port]');
    expect(badEndpoint).not.toContain('top-secret');
    const noSecret = await refusal([
      'etcd-snapshot',
      'save',
      '--s3',
      '--s3-endpoint',
      'x:9000',
      '--s3-bucket',
      'bucket',
      '--s3-access-key',
      'a',
    ]);
    expect(noSecret).toContain('AWS_SECRET_ACCESS_KEY');
    expect(
      await refusal(['server', '--cluster-reset', '--cluster-reset-restore-path=missing-snap']),
    ).toContain('is not on this server');
    expect(await refusal(['server'])).toContain('--cluster-reset');
    expect(await refusal(['kubectl', 'get', 'pods'])).toContain('the sim runs');
    expect(await runK3sCommand({ ...host, server: false }, ['etcd-snapshot', 'save'], '')).toMatchObject({
      code: 1,
    });
    expect(restored).toEqual([]);
  });
});
