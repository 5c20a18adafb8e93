import type { V1Secret } from '@kubernetes/client-node';
import {
  CLUSTER_CERTIFICATE_PURPOSES,
  clusterCertificateSecretName,
  keyPairFromSecretData,
  type ClusterCertificatePurpose,
  type ClusterCertificates,
} from '@capstan/pki';
import type { Informer } from '@capstan/kube';

export type CertificateLookup =
  { found: true; certificates: ClusterCertificates } | { found: false; missing: string[] };

/**
 * The cluster certificates the control plane provider generated (`<cluster>-ca|cca|proxy|etcd|sa`), read from
 * the cache, else from the API (a secret made by someone else may lack the cluster-name label the cache
 * selects on). Names the secrets still missing.
 */
export async function readClusterCertificates(
  namespace: string,
  clusterName: string,
  cache: Pick<Informer<V1Secret>, 'getOrFetch'>,
): Promise<CertificateLookup> {
  const pairs: Partial<ClusterCertificates> = {};
  const missing: string[] = [];
  for (const purpose of CLUSTER_CERTIFICATE_PURPOSES) {
    const name = clusterCertificateSecretName(clusterName, purpose);
    const secret = await cache.getOrFetch(namespace, name);
    if (!secret) {
      missing.push(name);
      continue;
    }
    pairs[purpose as ClusterCertificatePurpose] = keyPairFromSecretData(name, secret.data);
  }
  return missing.length > 0
    ? { found: false, missing }
    : { found: true, certificates: pairs as ClusterCertificates };
}
