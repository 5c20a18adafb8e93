import { exportPrivateKeyPem, exportPublicKeyPem, generateKeyPair, type KeyType } from './keys.js';

/** The key pair the API server signs (private) and verifies (public) service account tokens with. */
export interface ServiceAccountKeyPair {
  publicKeyPem: string;
  privateKeyPem: string;
}

/**
 * RSA-2048 by default, as kubeadm and K3s generate: RS256 tokens are what every OIDC consumer of the
 * cluster's issuer understands. ECDSA keys also work with kube-apiserver (ES256).
 */
export async function generateServiceAccountKeyPair(
  keyType: KeyType = 'rsa-2048',
): Promise<ServiceAccountKeyPair> {
  const keys = await generateKeyPair(keyType);
  return {
    publicKeyPem: await exportPublicKeyPem(keys.publicKey),
    privateKeyPem: await exportPrivateKeyPem(keys.privateKey),
  };
}
