import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { savedEtcdSnapshotIn, type SavedEtcdSnapshot } from '@capstan/k3s-bootstrap';
import {
  answerK3sRequest,
  runK3sCommand,
  SIM_K3S_REQUEST_PATH,
  type K3sCommandHost,
} from './k3s-commands.js';

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
      servingNames: { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] },
      secretsEncrypt: () => Promise.reject(new Error('no cluster here')),
      renewServingCertificate: async () => undefined,
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

  it('hands secrets-encrypt stages to the cluster and refuses anything else', async () => {
    const asked: string[] = [];
    const encrypting: K3sCommandHost = {
      ...host,
      secretsEncrypt: async (command) => {
        asked.push(command);
        return `Current Rotation Stage: ${command}`;
      },
    };
    expect(await runK3sCommand(encrypting, ['secrets-encrypt', 'prepare'], '')).toEqual({
      code: 0,
      output: 'Current Rotation Stage: prepare',
    });
    expect(await runK3sCommand(encrypting, ['secrets-encrypt', 'disable'], '')).toEqual({
      code: 1,
      output: 'k3s: secrets-encrypt takes status, prepare, rotate, reencrypt, not "disable"',
    });
    expect((await runK3sCommand(encrypting, ['secrets-encrypt', 'rotate', 'x'], '')).code).toBe(1);
    expect(asked).toEqual(['prepare']);
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

  it('reads, removes and answers nothing through a link the machine planted, and names only its own files', async () => {
    // Outside the machine: a directory holding what a request would hold, and a "CA" the tenant would like read.
    const outside = join(dir, 'outside');
    mkdirSync(join(outside, 'sim'), { recursive: true });
    writeFileSync(join(outside, 'sim', 'k3s-request'), '1-1\0\0etcd-snapshot\0save\0');
    writeFileSync(join(outside, 'host-ca.pem'), 'host secret');
    mkdirSync(join(host.root, 'var/lib/capstan'), { recursive: true });
    symlinkSync(join(outside, 'sim'), join(host.root, 'var/lib/capstan/sim'));
    expect(SIM_K3S_REQUEST_PATH).toBe('/var/lib/capstan/sim/k3s-request');
    expect(await answerK3sRequest(host)).toBe(false);
    expect(existsSync(join(outside, 'sim', 'k3s-request'))).toBe(true);
    expect(existsSync(join(outside, 'sim', 'k3s-response'))).toBe(false);

    symlinkSync(join(outside, 'host-ca.pem'), join(host.root, 'ca.pem'));
    const ca = await runK3sCommand(
      host,
      [
        'etcd-snapshot',
        'save',
        '--s3',
        '--s3-endpoint',
        'x:9000',
        '--s3-bucket',
        'bucket',
        '--s3-access-key',
        'a',
        '--s3-endpoint-ca',
        '/ca.pem',
      ],
      'secret',
    );
    expect(ca).toMatchObject({ code: 1 });
    expect(ca.output).toContain('--s3-endpoint-ca /ca.pem cannot be read on this machine');
    expect(ca.output).not.toContain('host secret');

    // A restore path that climbs out is reduced to a file name, looked up in this machine's snapshots only.
    writeFileSync(join(dir, 'passwd'), 'not a snapshot');
    const climb = await runK3sCommand(
      host,
      ['server', '--cluster-reset', '--cluster-reset-restore-path=../../../../passwd'],
      '',
    );
    expect(climb).toMatchObject({ code: 1 });
    expect(climb.output).toContain('snapshot passwd is not on this server');
    expect(restored).toEqual([]);
  });
});
