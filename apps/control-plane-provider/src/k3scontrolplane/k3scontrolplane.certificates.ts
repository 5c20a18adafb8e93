import type { V1Secret } from '@kubernetes/client-node';
import type { K3sControlPlane } from '@capstan/api';
import { isAlreadyExists, setControllerReference, type ResourceClient } from '@capstan/kube';
import {
  CLUSTER_CERTIFICATE_PURPOSES,
  clusterCertificateSecret,
  clusterCertificateSecretName,
  generateClusterCertificate,
  keyPairFromSecretData,
  type ClusterCertificatePurpose,
  type ClusterCertificates,
  type KeyPairPem,
} from '@capstan/pki';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import { findSecret, type SecretAccess } from './secrets.js';

/** Where the phases find cluster secrets: the API, and the cache of secrets with the cluster-name label. */

export interface EnsuredCertificates {
  certificates: ClusterCertificates;
  /** Secrets this call created. */
  created: string[];
}

/**
 * The certificates phase: the cluster certificates exist (see ensureClusterCertificates), and a Kubernetes
 * Event names those this reconcile generated.
 */
export async function reconcileCertificates(
  scope: ControlPlaneScope,
  secrets: SecretAccess,
): Promise<ClusterCertificates> {
  const ensured = await ensureClusterCertificates(scope.kit.obj, scope.clusterName, secrets);
  if (ensured.created.length > 0) {
    scope.log.info({ secrets: ensured.created }, 'cluster certificates generated');
    await scope.record(
      'CertificatesGenerated',
      'GenerateCertificates',
      `Generated ${ensured.created.join(', ')}`,
    );
  }
  return ensured.certificates;
}

/**
 * The cluster certificates in Secrets `<cluster>-ca|cca|proxy|etcd|sa`: each is generated once, when its
 * secret does not exist, and owned by the control plane. Existing ones are used as they are (they may
 * come from a previous control plane or from the user), so servers keep trusting each other.
 */
export async function ensureClusterCertificates(
  kcp: K3sControlPlane,
  clusterName: string,
  secrets: SecretAccess,
): Promise<EnsuredCertificates> {
  const namespace = kcp.metadata.namespace!;
  const pairs: Partial<ClusterCertificates> = {};
  const created: string[] = [];
  for (const purpose of CLUSTER_CERTIFICATE_PURPOSES) {
    const name = clusterCertificateSecretName(clusterName, purpose);
    const existing = await findSecret(secrets, namespace, name);
    if (existing) {
      pairs[purpose] = keyPairFromSecretData(name, existing.data);
      continue;
    }
    const pair = await generateClusterCertificate(clusterName, purpose);
    const outcome = await createCertificateSecret(kcp, clusterName, purpose, pair, secrets.client);
    pairs[purpose] = outcome.pair;
    if (outcome.created) created.push(name);
  }
  return { certificates: pairs as ClusterCertificates, created };
}

async function createCertificateSecret(
  kcp: K3sControlPlane,
  clusterName: string,
  purpose: ClusterCertificatePurpose,
  pair: KeyPairPem,
  secrets: ResourceClient<V1Secret>,
): Promise<{ pair: KeyPairPem; created: boolean }> {
  const shape = clusterCertificateSecret(clusterName, purpose, pair);
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: shape.name, namespace: kcp.metadata.namespace, labels: shape.labels },
    type: shape.type,
    stringData: shape.stringData,
  };
  setControllerReference(kcp, secret);
  try {
    await secrets.create(secret);
    return { pair, created: true };
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    // Another reconcile won the race: its certificate is the cluster's, and it is not reported as generated here.
    const winner = await secrets.get({ namespace: kcp.metadata.namespace!, name: shape.name });
    return { pair: keyPairFromSecretData(shape.name, winner.data), created: false };
  }
}
