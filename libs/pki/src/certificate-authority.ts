import { PkiError } from './errors.js';
import {
  DEFAULT_KEY_TYPE,
  exportPrivateKeyPem,
  generateKeyPair,
  importSigningKey,
  parsePrivateKeyPem,
  publicKeyDer,
  signingAlgorithmFor,
  type CryptoKey,
  type KeyType,
} from './keys.js';
import { randomSerialNumber } from './serial.js';
import { distinguishedName } from './subject.js';
import { CA_VALIDITY_MS, CLOCK_SKEW_MS } from './validity.js';
import { x509 } from './x509.js';

/** A certificate and its private key, both PEM (the key as PKCS#8 when this library wrote it). */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** A CA that can sign: its PEM material plus the parsed certificate and the imported signing key. */
export interface CertificateAuthority extends KeyPairPem {
  readonly certificate: x509.X509Certificate;
  readonly signingKey: CryptoKey;
}

export interface CreateCertificateAuthorityOptions {
  commonName: string;
  organizations?: readonly string[];
  /** Lifetime in milliseconds; ten years when unset. */
  validityMs?: number;
  keyType?: KeyType;
  /** The issuing time; the current time when unset. */
  now?: Date;
}

export async function createCertificateAuthority(
  options: CreateCertificateAuthorityOptions,
): Promise<CertificateAuthority> {
  const now = options.now ?? new Date();
  const keys = await generateKeyPair(options.keyType ?? DEFAULT_KEY_TYPE);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: distinguishedName(options.commonName, options.organizations),
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + (options.validityMs ?? CA_VALIDITY_MS)),
    signingAlgorithm: signingAlgorithmFor(keys.privateKey),
    keys,
    extensions: [
      // Path length 0: the CA signs only end-entity certificates, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certPem: certificate.toString('pem') + '\n',
    keyPem: await exportPrivateKeyPem(keys.privateKey),
    certificate,
    signingKey: keys.privateKey,
  };
}

/**
 * Loads a CA from PEM (for example a `<cluster>-ca` secret's `tls.crt` / `tls.key`). When the certificate
 * PEM holds a chain, the first certificate is the CA. Refuses a certificate that is not a CA and a key that
 * does not belong to the certificate.
 */
export async function loadCertificateAuthority(
  pair: KeyPairPem,
  what = 'certificate authority',
): Promise<CertificateAuthority> {
  const certificate = parseCertificatePem(pair.certPem, what);
  const basicConstraints = certificate.getExtension(x509.BasicConstraintsExtension);
  if (!basicConstraints?.ca) {
    throw new PkiError(
      `${what}: the certificate is not a CA (basic constraints CA:FALSE or missing)`,
      'NotACertificateAuthority',
    );
  }
  const key = parsePrivateKeyPem(pair.keyPem, `${what} key`);
  if (!publicKeyDer(key).equals(Buffer.from(certificate.publicKey.rawData))) {
    throw new PkiError(`${what}: the private key does not belong to the certificate`, 'KeyMismatch');
  }
  return {
    certPem: pair.certPem,
    keyPem: pair.keyPem,
    certificate,
    signingKey: await importSigningKey(key, `${what} key`),
  };
}

/** Parses the first certificate of a PEM bundle. */
export function parseCertificatePem(pem: string, what = 'certificate'): x509.X509Certificate {
  let blocks: ArrayBuffer[];
  try {
    blocks = x509.PemConverter.decodeWithHeaders(pem)
      .filter((block) => block.type === 'CERTIFICATE')
      .map((block) => block.rawData);
  } catch {
    throw new PkiError(`${what}: not PEM`, 'InvalidPem');
  }
  const first = blocks[0];
  if (!first) throw new PkiError(`${what}: no CERTIFICATE block in the PEM`, 'InvalidPem');
  try {
    return new x509.X509Certificate(first);
  } catch {
    throw new PkiError(`${what}: the CERTIFICATE block is not a valid X.509 certificate`, 'InvalidPem');
  }
}
