import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { HostRoot } from '../apply/host-root.js';
import { probeOnce } from './http-probe.js';

// A probe's caCert, clientCert and clientKey are paths a plan's owner writes. On the sim the agent runs on the
// management host: a symlink in the machine must not make it read (and present) a host file.
describe('probeOnce', () => {
  let dir: string;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'http-probe-'));
    const authority = await createCertificateAuthority({ commonName: 'probe-test-ca' });
    const serving = await issueServerCertificate(authority, { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
    // The CA lives on the host, outside the machine.
    writeFileSync(join(dir, 'host-ca.crt'), authority.certPem);
    mkdirSync(join(dir, 'machine/etc'), { recursive: true });
    server = createServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses the machine’s own CA file, and none a symlink points at outside it', async () => {
    const root = new HostRoot(join(dir, 'machine'));
    writeFileSync(join(dir, 'machine/etc/own-ca.crt'), readFileSync(join(dir, 'host-ca.crt')));
    expect(await probeOnce(root, { httpGet: { url, caCert: '/etc/own-ca.crt' } })).toBe(true);
    symlinkSync(join(dir, 'host-ca.crt'), join(dir, 'machine/etc/linked-ca.crt'));
    expect(await probeOnce(root, { httpGet: { url, caCert: '/etc/linked-ca.crt' } })).toBe(false);
  });
});
