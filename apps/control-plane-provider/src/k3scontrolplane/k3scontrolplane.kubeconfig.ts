import type { V1Secret } from '@kubernetes/client-node';
import type { APIEndpoint, Cluster, K3sControlPlane } from '@capstan/api';
import { isAlreadyExists, PatchHelper, setControllerReference } from '@capstan/kube';
import {
  apiServerUrl,
  issueAdminKubeconfig,
  kubeconfigSecret,
  kubeconfigSecretName,
  KUBECONFIG_DATA_KEY,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import type { SecretAccess } from './secrets.js';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import { kubeconfigRenewalReason } from './kubeconfig.js';
import { findSecret, secretText } from './secrets.js';

/** The endpoint the kubeconfig points at, or why there is none yet. */
export type EndpointGate = { endpoint: APIEndpoint } | { blockedBy: string };

/**
 * The control plane endpoint, once the cluster infrastructure is provisioned and has set it: nothing past the
 * certificates (kubeconfig, machines) is done before, as joining servers and the kubeconfig need it.
 */
export function controlPlaneEndpointOf(cluster: Cluster): EndpointGate {
  const endpoint = cluster.spec?.controlPlaneEndpoint;
  if (
    cluster.status?.initialization?.infrastructureProvisioned !== true ||
    !endpoint?.host ||
    !endpoint.port
  ) {
    return { blockedBy: 'Waiting for the cluster infrastructure and its endpoint' };
  }
  return { endpoint };
}

/** The kubeconfig phase: `<cluster>-kubeconfig` is current (see ensureKubeconfig); returns its text. */
export async function reconcileKubeconfig(
  scope: ControlPlaneScope,
  endpoint: APIEndpoint,
  certificates: ClusterCertificates,
  secrets: SecretAccess,
): Promise<string> {
  const ensured = await ensureKubeconfig(
    scope.kit.obj,
    scope.clusterName,
    endpoint,
    certificates,
    secrets,
    scope.now,
  );
  if (ensured.issued) {
    scope.log.info({ reason: ensured.issued }, 'admin kubeconfig issued');
    await scope.record(
      'KubeconfigIssued',
      'IssueKubeconfig',
      `Issued ${scope.clusterName}-kubeconfig (${ensured.issued})`,
    );
  }
  return ensured.kubeconfig;
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
  secrets: SecretAccess,
  now = new Date(),
): Promise<EnsuredKubeconfig> {
  const namespace = kcp.metadata.namespace!;
  const name = kubeconfigSecretName(clusterName);
  const inputs = { kcp, clusterName, endpoint, certificates, secrets, now };
  const ensured = await ensureFrom(await findSecret(secrets, namespace, name), inputs);
  if (ensured !== 'exists') return ensured;
  // The synced cache did not hold it (no cluster-name label, or written a moment ago): decide from the server's.
  return (await ensureFrom(await secrets.client.get({ namespace, name }), inputs)) as EnsuredKubeconfig;
}

interface KubeconfigInputs {
  kcp: K3sControlPlane;
  clusterName: string;
  endpoint: APIEndpoint;
  certificates: ClusterCertificates;
  secrets: SecretAccess;
  now: Date;
}

/** Renews `existing` when it needs it, or creates the Secret: `exists` when the create finds one. */
async function ensureFrom(
  existing: V1Secret | undefined,
  { kcp, clusterName, endpoint, certificates, secrets, now }: KubeconfigInputs,
): Promise<EnsuredKubeconfig | 'exists'> {
  const current = secretText(existing, KUBECONFIG_DATA_KEY);
  const server = apiServerUrl(endpoint);
  const rotation = kcp.status?.certificateRotation;
  const rotatedAt =
    rotation?.phase === 'Finished' && rotation.completionTime ? new Date(rotation.completionTime) : undefined;
  const reason = kubeconfigRenewalReason(current, server, certificates.ca.certPem, now, rotatedAt);
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
    // Guarded by the version read: a kubeconfig someone replaced meanwhile is looked at again, not overwritten.
    const patch = new PatchHelper(secrets.client, existing);
    const renewed = patch.draft();
    renewed.data = { ...renewed.data, ...base64Values(shape.stringData) };
    await patch.patch(renewed);
  } else {
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: shape.name, namespace: kcp.metadata.namespace, labels: shape.labels },
      type: shape.type,
      stringData: shape.stringData,
    };
    setControllerReference(kcp, secret);
    try {
      await secrets.client.create(secret);
    } catch (error) {
      if (isAlreadyExists(error)) return 'exists';
      throw error;
    }
  }
  return { kubeconfig, issued: reason };
}

function base64Values(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]),
  );
}
