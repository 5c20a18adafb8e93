import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority } from './certificate-authority.js';
import { PkiError } from './errors.js';
import { issueClientCertificate, issueServerCertificate } from './issue.js';
import { LEAF_VALIDITY_MS, ONE_DAY_MS } from './validity.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

describe('issueServerCertificate', () => {
  it.each(['ecdsa-p256', 'rsa-2048'] as const)(
    'issues a server certificate signed by a %s CA',
    async (keyType) => {
      const ca = await createCertificateAuthority({ commonName: 'server-ca', keyType });
      const issued = await issueServerCertificate(ca, {
        commonName: 'kube-apiserver',
        dnsNames: ['localhost', 'kubernetes.default.svc'],
        ipAddresses: ['127.0.0.1', '::1'],
      });
      const caCert = new X509Certificate(ca.certPem);
      const leaf = new X509Certificate(issued.certPem);

      expect(leaf.verify(caCert.publicKey)).toBe(true);
      expect(leaf.checkIssued(caCert)).toBe(true);
      expect(leaf.ca).toBe(false);
      expect(leaf.keyUsage).toEqual([SERVER_AUTH]);
      expect(leaf.checkHost('localhost')).toBe('localhost');
      expect(leaf.checkHost('kubernetes.default.svc')).toBe('kubernetes.default.svc');
      expect(leaf.checkHost('example.com')).toBeUndefined();
      expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(leaf.checkIP('::1')).toBe('::1');
      expect(leaf.checkIP('10.0.0.1')).toBeUndefined();
      expect(leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(issued.keyPem))).toBe(true);
    },
  );

  it('does not chain to a different CA', async () => {
    const ca = await createCertificateAuthority({ commonName: 'one' });
    const other = await createCertificateAuthority({ commonName: 'other' });
    const issued = await issueServerCertificate(ca, { commonName: 'srv', dnsNames: ['srv'] });
    const leaf = new X509Certificate(issued.certPem);

    expect(leaf.verify(new X509Certificate(other.certPem).publicKey)).toBe(false);
    expect(leaf.checkIssued(new X509Certificate(other.certPem))).toBe(false);
  });

  it('refuses a certificate without names and a malformed IP address', async () => {
    const ca = await createCertificateAuthority({ commonName: 'ca' });
    await expect(issueServerCertificate(ca, { commonName: 'srv' })).rejects.toThrow(PkiError);
    await expect(
      issueServerCertificate(ca, { commonName: 'srv', ipAddresses: ['300.1.1.1'] }),
    ).rejects.toThrow(/not an IP address/);
    await expect(issueServerCertificate(ca, { commonName: 'srv', dnsNames: ['a b'] })).rejects.toThrow(
      /not a DNS name/,
    );
  });
});

describe('issueClientCertificate', () => {
  it('puts the groups in O and the user in CN, for client authentication only', async () => {
    const ca = await createCertificateAuthority({ commonName: 'client-ca' });
    const issued = await issueClientCertificate(ca, {
      commonName: 'kubernetes-admin',
      organizations: ['system:masters', 'team, with comma'],
    });
    const leaf = new X509Certificate(issued.certPem);

    expect(leaf.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(leaf.subject).toBe('O=system:masters\nO=team\\, with comma\nCN=kubernetes-admin');
    expect(leaf.keyUsage).toEqual([CLIENT_AUTH]);
    expect(leaf.issuer).toBe(new X509Certificate(ca.certPem).subject);
  });

  it('lasts one year by default and never outlives its CA', async () => {
    const now = new Date('2031-06-01T00:00:00Z');
    const ca = await createCertificateAuthority({ commonName: 'short-ca', validityMs: 30 * ONE_DAY_MS, now });
    const defaultValidity = await issueClientCertificate(
      await createCertificateAuthority({ commonName: 'long-ca', now }),
      { commonName: 'u', now },
    );
    const clamped = await issueClientCertificate(ca, { commonName: 'u', now });

    expect(defaultValidity.notAfter.getTime()).toBe(now.getTime() + LEAF_VALIDITY_MS);
    expect(clamped.notAfter.getTime()).toBe(now.getTime() + 30 * ONE_DAY_MS);
    expect(new Date(new X509Certificate(clamped.certPem).validTo).getTime()).toBe(clamped.notAfter.getTime());
  });
});
