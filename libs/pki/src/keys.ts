import { createPrivateKey, createPublicKey, type KeyObject, type webcrypto as WebCrypto } from 'node:crypto';
import { PkiError } from './errors.js';
import { webcrypto, x509 } from './x509.js';

/** Key types this library generates. ECDSA P-256 is the default: small, fast, accepted by every Kubernetes component. */
export type KeyType = 'ecdsa-p256' | 'ecdsa-p384' | 'rsa-2048' | 'rsa-3072' | 'rsa-4096';

export const DEFAULT_KEY_TYPE: KeyType = 'ecdsa-p256';

export type CryptoKey = WebCrypto.CryptoKey;
export type CryptoKeyPair = WebCrypto.CryptoKeyPair;

/** How a certificate signed by a key is signed: the key's algorithm with a hash. */
export interface SigningAlgorithm {
  name: 'ECDSA' | 'RSASSA-PKCS1-v1_5';
  hash: 'SHA-256' | 'SHA-384' | 'SHA-512';
}

/** The WebCrypto parameters of a key and the signature algorithm a certificate signed with it uses. */
interface KeyParameters {
  importParams: WebCrypto.EcKeyImportParams | WebCrypto.RsaHashedImportParams;
  signingAlgorithm: SigningAlgorithm;
}

const RSA_PUBLIC_EXPONENT = new Uint8Array([1, 0, 1]);

function ecParameters(namedCurve: 'P-256' | 'P-384' | 'P-521'): KeyParameters {
  const hash = namedCurve === 'P-256' ? 'SHA-256' : namedCurve === 'P-384' ? 'SHA-384' : 'SHA-512';
  return { importParams: { name: 'ECDSA', namedCurve }, signingAlgorithm: { name: 'ECDSA', hash } };
}

function rsaParameters(): KeyParameters {
  return {
    importParams: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  };
}

export async function generateKeyPair(keyType: KeyType = DEFAULT_KEY_TYPE): Promise<CryptoKeyPair> {
  switch (keyType) {
    case 'ecdsa-p256':
      return webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    case 'ecdsa-p384':
      return webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign', 'verify']);
    case 'rsa-2048':
    case 'rsa-3072':
    case 'rsa-4096':
      return webcrypto.subtle.generateKey(
        {
          name: 'RSASSA-PKCS1-v1_5',
          modulusLength: Number(keyType.slice('rsa-'.length)),
          publicExponent: RSA_PUBLIC_EXPONENT,
          hash: 'SHA-256',
        },
        true,
        ['sign', 'verify'],
      );
  }
}

/** The signature algorithm for certificates signed by `key` (SHA-256 for P-256 and RSA, as Go's crypto/x509 does). */
export function signingAlgorithmFor(key: CryptoKey): SigningAlgorithm {
  const algorithm = key.algorithm as WebCrypto.KeyAlgorithm & { namedCurve?: string };
  if (algorithm.name === 'ECDSA') {
    return ecParameters(algorithm.namedCurve as 'P-256' | 'P-384' | 'P-521').signingAlgorithm;
  }
  return rsaParameters().signingAlgorithm;
}

export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

export async function exportPublicKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('spki', key);
  return x509.PemConverter.encode(der, 'PUBLIC KEY') + '\n';
}

/**
 * Reads a private key in any PEM form Kubernetes tooling writes (PKCS#8 `PRIVATE KEY`, PKCS#1
 * `RSA PRIVATE KEY`, SEC1 `EC PRIVATE KEY`) so that CAs created by kubeadm, K3s or openssl load too.
 */
export function parsePrivateKeyPem(pem: string, what: string): KeyObject {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    if (key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'rsa') {
      throw new PkiError(`${what}: unsupported key type ${String(key.asymmetricKeyType)}`, 'UnsupportedKey');
    }
    return key;
  } catch (error) {
    if (error instanceof PkiError) throw error;
    throw new PkiError(`${what}: not a PEM private key`, 'InvalidPem');
  }
}

/** Imports a private key for signing with WebCrypto. */
export async function importSigningKey(key: KeyObject, what: string): Promise<CryptoKey> {
  let parameters: KeyParameters;
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const webCurve =
      curve === 'prime256v1'
        ? 'P-256'
        : curve === 'secp384r1'
          ? 'P-384'
          : curve === 'secp521r1'
            ? 'P-521'
            : undefined;
    if (!webCurve)
      throw new PkiError(`${what}: unsupported elliptic curve ${String(curve)}`, 'UnsupportedKey');
    parameters = ecParameters(webCurve);
  } else {
    parameters = rsaParameters();
  }
  const der = key.export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, parameters.importParams, true, ['sign']);
}

/** The DER SubjectPublicKeyInfo of the public half of a private key, to compare with a certificate's key. */
export function publicKeyDer(key: KeyObject): Buffer {
  return createPublicKey(key).export({ type: 'spki', format: 'der' });
}
