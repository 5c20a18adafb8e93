import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { freePort, startS3Server, type TestS3Server } from '@capstan/testing';
import { ObjectStore, ObjectStoreError } from './object-store.js';

// The S3 client against the test environment's S3-compatible server, which checks every request's signature.
describe('ObjectStore against a real S3-compatible server', () => {
  let plain: TestS3Server;
  let tls: TestS3Server;
  let caPem: string;

  beforeAll(async () => {
    const ca = await createCertificateAuthority({ commonName: 's3-test-ca' });
    caPem = ca.certPem;
    const serving = await issueServerCertificate(ca, { commonName: 's3', ipAddresses: ['127.0.0.1'] });
    [plain, tls] = await Promise.all([
      startS3Server({ buckets: ['snapshots'] }),
      startS3Server({ buckets: ['snapshots'], tls: { certPem: serving.certPem, keyPem: serving.keyPem } }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([plain?.stop(), tls?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  // Snapshots go between files and the store, streamed.
  const dir = mkdtempSync(join(tmpdir(), 'capstan-s3-'));
  const fileWith = (name: string, content: Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  const storeOn = (
    server: TestS3Server,
    overrides: { secretKey?: string; bucket?: string; caPem?: string } = {},
  ) =>
    new ObjectStore(
      {
        endpoint: server.endpoint,
        bucket: overrides.bucket ?? 'snapshots',
        folder: 'demo/cluster',
        insecure: server.scheme === 'http',
        ...(overrides.caPem && { caPem: overrides.caPem }),
      },
      { accessKey: server.accessKey, secretKey: overrides.secretKey ?? server.secretKey },
    );

  it('uploads, lists, downloads and deletes objects under the folder', async () => {
    const store = storeOn(plain);
    const body = Buffer.from('etcd snapshot bytes '.repeat(1000));
    expect(await store.putFile('on-demand-a.db', fileWith('a.db', body))).toBe('demo/cluster/on-demand-a.db');
    await store.putFile('on-demand-b.db', fileWith('b.db', Buffer.from('b')));
    const listed = await store.list('on-demand-');
    expect(listed.map((o) => [o.key, o.size])).toEqual([
      ['demo/cluster/on-demand-a.db', body.length],
      ['demo/cluster/on-demand-b.db', 1],
    ]);
    const downloaded = join(dir, 'downloaded-a.db');
    await store.getFile('on-demand-a.db', downloaded, 1 << 20);
    expect(readFileSync(downloaded).equals(body)).toBe(true);
    await store.delete('on-demand-a.db');
    expect((await store.list()).map((o) => o.key)).toEqual(['demo/cluster/on-demand-b.db']);
  });

  it('refuses a wrong secret key with a message that names the endpoint and never the key', async () => {
    const wrong = 'not-the-secret-key-at-all';
    const error = (await storeOn(plain, { secretKey: wrong })
      .putFile('x.db', fileWith('x.db', Buffer.from('x')))
      .catch((e: unknown) => e)) as ObjectStoreError;
    expect(error).toBeInstanceOf(ObjectStoreError);
    expect(error.reason).toBe('S3AccessDenied');
    expect(error.message).toContain(plain.endpoint);
    expect(error.message).not.toContain(wrong);
    expect(error.message).not.toContain(plain.secretKey);
  });

  it('names a missing bucket, a missing object and an unreachable endpoint', async () => {
    await expect(storeOn(plain, { bucket: 'nope' }).list()).rejects.toMatchObject({
      reason: 'S3NoSuchBucket',
    });
    await expect(storeOn(plain).getFile('missing.db', join(dir, 'missing.db'), 1024)).rejects.toMatchObject({
      reason: 'S3NoSuchKey',
    });
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);
    const closed = await freePort();
    const unreachable = new ObjectStore(
      { endpoint: `127.0.0.1:${closed}`, bucket: 'snapshots', insecure: true },
      { accessKey: 'a', secretKey: 'b' },
    );
    await expect(unreachable.list()).rejects.toMatchObject({ reason: 'S3Unreachable' });
  });

  it('stops reading an object larger than the caller allows, and leaves no file of it', async () => {
    const store = storeOn(plain);
    await store.putFile('big.db', fileWith('big.db', Buffer.alloc(64 * 1024, 1)));
    const target = join(dir, 'big-downloaded.db');
    await expect(store.getFile('big.db', target, 1024)).rejects.toMatchObject({ reason: 'S3ObjectTooLarge' });
    expect(readdirSync(dir).filter((name) => name.startsWith('big-downloaded'))).toEqual([]);
  });

  it('streams a snapshot larger than its pieces both ways, signed by its hash', async () => {
    const store = storeOn(plain);
    // 24 MiB of varied bytes: many chunks each way, and a payload hash that must match every byte.
    const content = Buffer.alloc(24 * 1024 * 1024);
    for (let i = 0; i < content.length; i += 4096) content.writeUInt32LE(i, i);
    await store.putFile('large.db', fileWith('large.db', content));
    const target = join(dir, 'large-downloaded.db');
    await store.getFile('large.db', target, 32 * 1024 * 1024);
    expect(readFileSync(target).equals(content)).toBe(true);
  }, 60_000);

  it('speaks HTTPS to an endpoint trusted through its CA, and refuses one it cannot verify', async () => {
    await storeOn(tls, { caPem }).putFile('tls.db', fileWith('tls.db', Buffer.from('t')));
    expect((await storeOn(tls, { caPem }).list()).map((o) => o.key)).toEqual(['demo/cluster/tls.db']);
    await expect(storeOn(tls).list()).rejects.toMatchObject({ reason: 'S3Unreachable' });
  });
});
