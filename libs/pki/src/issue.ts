import { isIP } from 'node:net';
import type { CertificateAuthority, KeyPairPem } from './certificate-authority.js';
import { PkiError } from './errors.js';
import {
  DEFAULT_KEY_TYPE,
  exportPrivateKeyPem,
  generateKeyPair,
  signingAlgorithmFor,
  type KeyType,
} from './keys.js';
import { randomSerialNumber } from './serial.js';
import { distinguishedName } from './subject.js';
import { CLOCK_SKEW_MS, LEAF_VALIDITY_MS } from './validity.js';
import { x509 } from './x509.js';

export interface CertificateRequest {
  commonName: string;
  /** Subject O attributes; Kubernetes reads them as the user's groups (e.g. `system:masters`). */
  organizations?: readonly string[];
  /** Lifetime in milliseconds; one year when unset, never past the CA's own expiry. */
  validityMs?: number;
  keyType?: KeyType;
  now?: Date;
}

export interface ServerCertificateRequest extends CertificateRequest {
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
}

export type ClientCertificateRequest = CertificateRequest;

/** An issued leaf: its certificate (leaf only, no chain) and private key as PEM, and when it expires. */
export interface IssuedCertificate extends KeyPairPem {
  notAfter: Date;
}

type Usage = 'server' | 'client';

export async function issueServerCertificate(
  ca: CertificateAuthority,
  request: ServerCertificateRequest,
): Promise<IssuedCertificate> {
  const dnsNames = request.dnsNames ?? [];
  const ipAddresses = request.ipAddresses ?? [];
  if (dnsNames.length === 0 && ipAddresses.length === 0) {
    throw new PkiError('a server certificate needs at least one DNS name or IP address', 'InvalidArgument');
  }
  for (const ip of ipAddresses) {
    if (isIP(ip) === 0) throw new PkiError(`ipAddresses: "${ip}" is not an IP address`, 'InvalidArgument');
  }
  for (const name of dnsNames) {
    if (!name || /\s/.test(name))
      throw new PkiError(`dnsNames: "${name}" is not a DNS name`, 'InvalidArgument');
  }
  const names: x509.JsonGeneralNames = [
    ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...ipAddresses.map((value) => ({ type: 'ip' as const, value })),
  ];
  return issue(ca, request, 'server', [new x509.SubjectAlternativeNameExtension(names, false)]);
}

export async function issueClientCertificate(
  ca: CertificateAuthority,
  request: ClientCertificateRequest,
): Promise<IssuedCertificate> {
  return issue(ca, request, 'client', []);
}

async function issue(
  ca: CertificateAuthority,
  request: CertificateRequest,
  usage: Usage,
  extra: x509.Extension[],
): Promise<IssuedCertificate> {
  const now = request.now ?? new Date();
  const keyType = request.keyType ?? DEFAULT_KEY_TYPE;
  const keys = await generateKeyPair(keyType);
  const requested = new Date(now.getTime() + (request.validityMs ?? LEAF_VALIDITY_MS));
  const notAfter = requested > ca.certificate.notAfter ? ca.certificate.notAfter : requested;
  // keyEncipherment only means something for RSA key transport; Go's crypto/x509 sets it the same way.
  const keyUsage = keyType.startsWith('rsa')
    ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
    : x509.KeyUsageFlags.digitalSignature;
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: distinguishedName(request.commonName, request.organizations),
    issuer: ca.certificate.subjectName,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter,
    publicKey: keys.publicKey,
    signingKey: ca.signingKey,
    signingAlgorithm: signingAlgorithmFor(ca.signingKey),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(keyUsage, true),
      new x509.ExtendedKeyUsageExtension(
        [usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
        false,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await authorityKeyIdentifier(ca),
      ...extra,
    ],
  });
  return {
    certPem: certificate.toString('pem') + '\n',
    keyPem: await exportPrivateKeyPem(keys.privateKey),
    notAfter: certificate.notAfter,
  };
}

/** Points at the CA's own subject key identifier, so chains build for CAs written by other tools too. */
async function authorityKeyIdentifier(
  ca: CertificateAuthority,
): Promise<x509.AuthorityKeyIdentifierExtension> {
  const keyId = ca.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  return keyId
    ? new x509.AuthorityKeyIdentifierExtension(keyId)
    : x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey);
}
