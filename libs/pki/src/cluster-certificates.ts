import { createCertificateAuthority, type KeyPairPem } from './certificate-authority.js';
import { PkiError } from './errors.js';
import type { KeyType } from './keys.js';
import { generateServiceAccountKeyPair } from './service-account.js';

/** Secret type and label every Cluster API secret carries (upstream `ClusterSecretType`, `ClusterNameLabel`). */
export const CLUSTER_SECRET_TYPE = 'cluster.x-k8s.io/secret';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** Data keys of a certificate secret (upstream `TLSCrtDataName` / `TLSKeyDataName`). */
export const TLS_CERT_KEY = 'tls.crt';
export const TLS_KEY_KEY = 'tls.key';

/**
 * The cluster certificates, each stored in Secret `<cluster>-<purpose>`. Names follow upstream Cluster API
 * (`ca`, `etcd`, `proxy`, `sa`) plus k3s-io/cluster-api-k3s's `cca`, because K3s, unlike kubeadm, keeps
 * a separate CA for client certificates. On a K3s server they become (under /var/lib/rancher/k3s/server/tls):
 * - `ca`    server CA: signs serving certificates; the kubeconfig's `certificate-authority-data`. server-ca.*
 * - `cca`   client CA: signs client certificates, including the admin kubeconfig's.           client-ca.*
 * - `proxy` front-proxy CA, K3s's request-header CA (aggregated APIs).                         request-header-ca.*
 * - `etcd`  etcd CA, used by K3s for both the etcd server and peer CAs.                        etcd/server-ca.*, etcd/peer-ca.*
 * - `sa`    service account signing key: `tls.key` private, `tls.crt` the PUBLIC KEY PEM (upstream format). service.key
 */
export type ClusterCertificatePurpose = 'ca' | 'cca' | 'proxy' | 'etcd' | 'sa';

export const CLUSTER_CERTIFICATE_PURPOSES: readonly ClusterCertificatePurpose[] = [
  'ca',
  'cca',
  'proxy',
  'etcd',
  'sa',
];

/** For `sa`, `certPem` is the public key PEM and `keyPem` the private key PEM. */
export type ClusterCertificates = Record<ClusterCertificatePurpose, KeyPairPem>;

/** Common names as K3s gives its own CAs, so tools that inspect a K3s cluster find what they expect. */
const CA_COMMON_NAMES: Record<Exclude<ClusterCertificatePurpose, 'sa'>, string> = {
  ca: 'k3s-server-ca',
  cca: 'k3s-client-ca',
  proxy: 'k3s-request-header-ca',
  etcd: 'etcd-ca',
};

export interface GenerateClusterCertificateOptions {
  /** Key type of the CAs; ECDSA P-256 when unset. */
  keyType?: KeyType;
  /** Key type of the service account key; RSA-2048 when unset. */
  serviceAccountKeyType?: KeyType;
  now?: Date;
}

export function clusterCertificateSecretName(
  clusterName: string,
  purpose: ClusterCertificatePurpose,
): string {
  return `${clusterName}-${purpose}`;
}

/** Generates the material of one purpose; used to fill in whichever `<cluster>-<purpose>` secret is missing. */
export async function generateClusterCertificate(
  clusterName: string,
  purpose: ClusterCertificatePurpose,
  options: GenerateClusterCertificateOptions = {},
): Promise<KeyPairPem> {
  if (!clusterName) throw new PkiError('clusterName must not be empty', 'InvalidArgument');
  if (purpose === 'sa') {
    const keys = await generateServiceAccountKeyPair(options.serviceAccountKeyType);
    return { certPem: keys.publicKeyPem, keyPem: keys.privateKeyPem };
  }
  const ca = await createCertificateAuthority({
    commonName: CA_COMMON_NAMES[purpose],
    organizations: [clusterName],
    keyType: options.keyType,
    now: options.now,
  });
  return { certPem: ca.certPem, keyPem: ca.keyPem };
}

export async function generateClusterCertificates(
  clusterName: string,
  options: GenerateClusterCertificateOptions = {},
): Promise<ClusterCertificates> {
  const pairs = await Promise.all(
    CLUSTER_CERTIFICATE_PURPOSES.map(
      async (purpose) => [purpose, await generateClusterCertificate(clusterName, purpose, options)] as const,
    ),
  );
  return Object.fromEntries(pairs) as ClusterCertificates;
}

/**
 * The Secret a certificate is stored in, as upstream writes it. `stringData` holds plain PEM: send it as
 * `stringData`, or base64 each value for `data`. Owner references are the caller's (the control plane).
 */
export interface ClusterSecretShape {
  name: string;
  type: typeof CLUSTER_SECRET_TYPE;
  labels: Record<typeof CLUSTER_NAME_LABEL, string>;
  stringData: Record<string, string>;
}

export function clusterCertificateSecret(
  clusterName: string,
  purpose: ClusterCertificatePurpose,
  pair: KeyPairPem,
): ClusterSecretShape {
  return {
    name: clusterCertificateSecretName(clusterName, purpose),
    type: CLUSTER_SECRET_TYPE,
    labels: { [CLUSTER_NAME_LABEL]: clusterName },
    stringData: { [TLS_CERT_KEY]: pair.certPem, [TLS_KEY_KEY]: pair.keyPem },
  };
}

export function clusterCertificateSecrets(
  clusterName: string,
  certificates: ClusterCertificates,
): ClusterSecretShape[] {
  return CLUSTER_CERTIFICATE_PURPOSES.map((purpose) =>
    clusterCertificateSecret(clusterName, purpose, certificates[purpose]),
  );
}

/**
 * Reads a certificate secret's `data` as the API returns it (base64 values). The error names the secret
 * and the missing key, never the content.
 */
export function keyPairFromSecretData(
  secretName: string,
  data: Readonly<Record<string, string>> | undefined,
): KeyPairPem {
  const read = (key: string): string => {
    const value = data?.[key];
    if (!value) {
      throw new PkiError(`secret ${secretName} has no ${key}`, 'MissingSecretKey', {
        secret: secretName,
        key,
      });
    }
    return Buffer.from(value, 'base64').toString('utf8');
  };
  return { certPem: read(TLS_CERT_KEY), keyPem: read(TLS_KEY_KEY) };
}
