import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { readSelfSignedServingCa } from './self-signed-serving-ca.js';

describe('readSelfSignedServingCa', () => {
  const dir = mkdtempSync(join(tmpdir(), 'serving-ca-'));
  const path = join(dir, 'apiserver.crt');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is undefined while the file is missing, empty (created, not yet written) or cut short', async () => {
    expect(readSelfSignedServingCa(path)).toBeUndefined();
    writeFileSync(path, '');
    expect(readSelfSignedServingCa(path)).toBeUndefined();
    const ca = await createCertificateAuthority({ commonName: 'test-ca' });
    writeFileSync(path, ca.certPem.slice(0, ca.certPem.length / 2));
    expect(readSelfSignedServingCa(path)).toBeUndefined();
    writeFileSync(path, ca.certPem.replace(/[A-Za-z0-9+/]{40}/, 'x'.repeat(40)));
    expect(readSelfSignedServingCa(path)).toBeUndefined();
  });

  it('is the bundle once the serving certificate and its CA are written', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test-ca' });
    const serving = await issueServerCertificate(ca, {
      commonName: 'kube-apiserver',
      ipAddresses: ['127.0.0.1'],
    });
    writeFileSync(path, `${serving.certPem}${ca.certPem}`);
    expect(readSelfSignedServingCa(path)).toBe(`${serving.certPem}${ca.certPem}`);
  });
});
