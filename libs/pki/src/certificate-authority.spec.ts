import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { createCertificateAuthority, loadCertificateAuthority } from './certificate-authority.js';
import { PkiError } from './errors.js';
import { issueClientCertificate, issueServerCertificate } from './issue.js';
import { CA_VALIDITY_MS, CLOCK_SKEW_MS } from './validity.js';

describe('createCertificateAuthority', () => {
  it.each(['ecdsa-p256', 'rsa-2048'] as const)(
    'creates a self-signed %s CA that verifies itself',
    async (keyType) => {
      const now = new Date('2030-01-01T00:00:00Z');
      const ca = await createCertificateAuthority({
        commonName: 'test-ca',
        organizations: ['demo'],
        keyType,
        now,
      });
      const cert = new X509Certificate(ca.certPem);

      expect(cert.ca).toBe(true);
      expect(cert.verify(cert.publicKey)).toBe(true);
      expect(cert.checkIssued(cert)).toBe(true);
      expect(cert.subject).toBe('O=demo\nCN=test-ca');
      expect(cert.publicKey.asymmetricKeyType).toBe(keyType === 'rsa-2048' ? 'rsa' : 'ec');
      expect(new Date(cert.validFrom).getTime()).toBe(now.getTime() - CLOCK_SKEW_MS);
      expect(new Date(cert.validTo).getTime()).toBe(now.getTime() + CA_VALIDITY_MS);
      expect(ca.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
    },
  );

  it('gives every CA a different serial number and key', async () => {
    const [a, b] = await Promise.all([
      createCertificateAuthority({ commonName: 'a' }),
      createCertificateAuthority({ commonName: 'a' }),
    ]);
    expect(new X509Certificate(a.certPem).serialNumber).not.toBe(new X509Certificate(b.certPem).serialNumber);
    expect(a.keyPem).not.toBe(b.keyPem);
  });

  it('refuses an empty or over-long common name', async () => {
    await expect(createCertificateAuthority({ commonName: '' })).rejects.toThrow(PkiError);
    await expect(createCertificateAuthority({ commonName: 'x'.repeat(65) })).rejects.toThrow(
      /longer than 64/,
    );
  });
});

describe('loadCertificateAuthority', () => {
  it('loads a CA from its PEM and issues certificates that chain to the original', async () => {
    const original = await createCertificateAuthority({ commonName: 'round-trip' });
    const loaded = await loadCertificateAuthority({ certPem: original.certPem, keyPem: original.keyPem });
    const leaf = await issueClientCertificate(loaded, { commonName: 'someone' });

    expect(new X509Certificate(leaf.certPem).verify(new X509Certificate(original.certPem).publicKey)).toBe(
      true,
    );
  });

  it.each([
    ['RSA PKCS#1', 'rsa', 'pkcs1'],
    ['EC SEC1', 'ec', 'sec1'],
  ] as const)(
    'loads a CA whose key is %s PEM (as openssl and kubeadm write it)',
    async (_label, type, encoding) => {
      // The CA certificate comes from this library; its key is re-encoded in the legacy format.
      const generated = await createCertificateAuthority({
        commonName: 'legacy',
        keyType: type === 'rsa' ? 'rsa-2048' : 'ecdsa-p256',
      });
      const { createPrivateKey } = await import('node:crypto');
      const legacyPem = createPrivateKey(generated.keyPem)
        .export({ type: encoding, format: 'pem' })
        .toString();
      expect(legacyPem).toContain(type === 'rsa' ? 'BEGIN RSA PRIVATE KEY' : 'BEGIN EC PRIVATE KEY');

      const loaded = await loadCertificateAuthority({ certPem: generated.certPem, keyPem: legacyPem });
      const leaf = await issueServerCertificate(loaded, { commonName: 'srv', dnsNames: ['srv.local'] });
      expect(new X509Certificate(leaf.certPem).checkIssued(new X509Certificate(generated.certPem))).toBe(
        true,
      );
    },
  );

  it('refuses a key that does not belong to the certificate', async () => {
    const a = await createCertificateAuthority({ commonName: 'a' });
    const b = await createCertificateAuthority({ commonName: 'b' });
    await expect(loadCertificateAuthority({ certPem: a.certPem, keyPem: b.keyPem })).rejects.toMatchObject({
      reason: 'KeyMismatch',
    });
  });

  it('refuses a leaf certificate as CA', async () => {
    const ca = await createCertificateAuthority({ commonName: 'ca' });
    const leaf = await issueClientCertificate(ca, { commonName: 'leaf' });
    await expect(loadCertificateAuthority(leaf)).rejects.toMatchObject({
      reason: 'NotACertificateAuthority',
    });
  });

  it('refuses PEM that is not a certificate or not a key, without echoing it', async () => {
    const ca = await createCertificateAuthority({ commonName: 'ca' });
    const secretLooking = 'not-a-pem-but-secret-material';
    await expect(
      loadCertificateAuthority({ certPem: secretLooking, keyPem: ca.keyPem }),
    ).rejects.toMatchObject({
      reason: 'InvalidPem',
    });
    const failure = await loadCertificateAuthority({ certPem: ca.certPem, keyPem: secretLooking }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(PkiError);
    expect((failure as PkiError).reason).toBe('InvalidPem');
    expect((failure as PkiError).message).not.toContain(secretLooking);
  });

  it('refuses an unsupported key type', async () => {
    const ca = await createCertificateAuthority({ commonName: 'ca' });
    const ed25519 = generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    await expect(loadCertificateAuthority({ certPem: ca.certPem, keyPem: ed25519 })).rejects.toMatchObject({
      reason: 'UnsupportedKey',
    });
  });
});
