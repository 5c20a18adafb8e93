import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminApiRequest } from '@capstan/testing';
import { adminServer, AdminTlsConfigError, cameOverTls, loadAdminTls, type AdminTls } from './admin-tls.js';

/** Serves `tls` on a loopback port and asks it once with `ca` as the only trusted CA. */
async function ask(tls: AdminTls, ca: string): Promise<{ status: number; body: string }> {
  const server = adminServer(tls, (request, response) => response.end(JSON.stringify({ tls: cameOverTls(request.socket) })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await adminApiRequest({ adminUrl: `https://127.0.0.1:${port}`, adminCaPem: ca }, '/admin/anything');
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('the admin API certificate', () => {
  it('is made at start when none is given, for the loopback address, and verifies with the CA it reports', async () => {
    const tls = await loadAdminTls({ host: '127.0.0.1', service: 'core' });
    expect(tls.selfSigned).toBe(true);
    expect(await ask(tls, tls.caPem)).toMatchObject({ status: 200, body: '{"tls":true}' });
  });

  it('is refused by a client that trusts another CA (no silent fallback to an unverified server)', async () => {
    const [served, other] = await Promise.all([
      loadAdminTls({ host: '127.0.0.1', service: 'core' }),
      loadAdminTls({ host: '127.0.0.1', service: 'other' }),
    ]);
    await expect(ask(served, other.caPem)).rejects.toThrow(/self.signed|unable to verify|certificate/i);
  });

  it('comes from the given files, which go in pairs', async () => {
    const made = await loadAdminTls({ host: '127.0.0.1', service: 'core' });
    const dir = mkdtempSync(join(tmpdir(), 'admin-tls-'));
    try {
      writeFileSync(join(dir, 'tls.crt'), made.certPem);
      writeFileSync(join(dir, 'tls.key'), made.keyPem);
      const given = await loadAdminTls({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), host: '127.0.0.1', service: 'core' });
      expect(given).toMatchObject({ certPem: made.certPem, keyPem: made.keyPem, selfSigned: false });
      expect((await ask(given, made.caPem)).status).toBe(200);
      await expect(loadAdminTls({ certFile: join(dir, 'tls.crt'), host: '127.0.0.1', service: 'core' })).rejects.toThrow(AdminTlsConfigError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
