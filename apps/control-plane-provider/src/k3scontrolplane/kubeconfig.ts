import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { APIEndpoint, K3sControlPlane } from '@capstan/api';
import { setControllerReference, type Informer, type ResourceClient } from '@capstan/kube';
import {
  apiServerUrl,
  expiresWithin,
  issueAdminKubeconfig,
  kubeconfigClientCertificate,
  kubeconfigSecret,
  kubeconfigSecretName,
  KUBECONFIG_DATA_KEY,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import { findSecret, secretText } from './secrets.js';

/** The admin certificate is issued for a year and replaced once it has 30 days left. */
export const KUBECONFIG_RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

/** Why `<cluster>-kubeconfig` must be (re)issued, or undefined while it is good. */
export function kubeconfigRenewalReason(
  existing: string | undefined,
  server: string,
  serverCaPem: string,
  now: Date,
): string | undefined {
  if (!existing) return 'missing';
  try {
    const kc = new KubeConfig();
    kc.loadFromString(existing);
    const cluster = kc.getCurrentCluster();
    if (cluster?.server !== server) return 'endpoint changed';
    if (Buffer.from(cluster.caData ?? '', 'base64').toString('utf8') !== serverCaPem)
      return 'server CA changed';
    if (expiresWithin(kubeconfigClientCertificate(existing), KUBECONFIG_RENEW_BEFORE_MS, now))
      return 'client certificate expires soon';
    return undefined;
  } catch {
    return 'unreadable';
  }
}

export interface EnsuredKubeconfig {
  kubeconfig: string;
  /** Why it was (re)issued by this call, if it was. */
  issued?: string;
}

/**
 * `<cluster>-kubeconfig` (key `value`): the endpoint, the server CA, and a `kubernetes-admin` client
 * certificate signed by the client CA. Issued when missing and issued again when the endpoint or CA
 * changed or the certificate nears its end.
 */
export async function ensureKubeconfig(
  kcp: K3sControlPlane,
  clusterName: string,
  endpoint: APIEndpoint,
  certificates: ClusterCertificates,
  secrets: ResourceClient<V1Secret>,
  cache: Informer<V1Secret>,
  now = new Date(),
): Promise<EnsuredKubeconfig> {
  const namespace = kcp.metadata.namespace!;
  const name = kubeconfigSecretName(clusterName);
  const existing = await findSecret(secrets, cache.getByName(namespace, name), namespace, name);
  const current = secretText(existing, KUBECONFIG_DATA_KEY);
  const server = apiServerUrl(endpoint);
  const reason = kubeconfigRenewalReason(current, server, certificates.ca.certPem, now);
  if (!reason && current) return { kubeconfig: current };

  const clientCA = await loadCertificateAuthority(certificates.cca, 'client CA');
  const { kubeconfig } = await issueAdminKubeconfig(
    { serverCaPem: certificates.ca.certPem, clientCA },
    clusterName,
    server,
    { now },
  );
  const shape = kubeconfigSecret(clusterName, kubeconfig);
  if (existing) {
    await secrets.mergePatch(
      { namespace, name },
      { metadata: { resourceVersion: existing.metadata?.resourceVersion }, stringData: shape.stringData },
    );
  } else {
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels: shape.labels },
      type: shape.type,
      stringData: shape.stringData,
    };
    setControllerReference(kcp, secret);
    await secrets.create(secret);
  }
  return { kubeconfig, issued: reason };
}
