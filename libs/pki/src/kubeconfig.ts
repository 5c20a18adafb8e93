import { isMap, isSeq, parseDocument, stringify } from 'yaml';
import type { CertificateAuthority } from './certificate-authority.js';
import { CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE, type ClusterSecretShape } from './cluster-certificates.js';
import { apiServerUrl, type ApiEndpoint } from './endpoint.js';
import { PkiError } from './errors.js';
import { issueClientCertificate } from './issue.js';
import type { KeyType } from './keys.js';

/** Data key of the `<cluster>-kubeconfig` secret (upstream `KubeconfigDataName`). */
export const KUBECONFIG_DATA_KEY = 'value';

/** The admin identity upstream's control planes put in `<cluster>-kubeconfig`. */
export const ADMIN_COMMON_NAME = 'kubernetes-admin';
export const ADMIN_GROUP = 'system:masters';

export interface KubeconfigInput {
  clusterName: string;
  /** The API server URL, `https://host:port`. */
  server: string;
  /** PEM of the CA that signed the API server's serving certificate. */
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

const base64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

/**
 * Renders `<cluster>-kubeconfig` content as upstream does: cluster `<cluster>`, user `<cluster>-admin`,
 * context `<cluster>-admin@<cluster>`, certificates embedded as `*-data`. Keys are in the order Go's
 * clientcmd writes them, so the output is stable.
 */
export function renderKubeconfig(input: KubeconfigInput): string {
  if (!input.clusterName) throw new PkiError('clusterName must not be empty', 'InvalidArgument');
  const user = `${input.clusterName}-admin`;
  const context = `${user}@${input.clusterName}`;
  return stringify(
    {
      apiVersion: 'v1',
      clusters: [
        {
          cluster: { 'certificate-authority-data': base64(input.caPem), server: input.server },
          name: input.clusterName,
        },
      ],
      contexts: [{ context: { cluster: input.clusterName, user }, name: context }],
      'current-context': context,
      kind: 'Config',
      preferences: {},
      users: [
        {
          name: user,
          user: {
            'client-certificate-data': base64(input.clientCertPem),
            'client-key-data': base64(input.clientKeyPem),
          },
        },
      ],
    },
    { lineWidth: 0 },
  );
}

/**
 * The CAs an admin kubeconfig needs. K3s keeps two: the server CA (`<cluster>-ca`) the client trusts, and
 * the client CA (`<cluster>-cca`) that signs the admin certificate. A single CA serves both for kubeadm-style
 * clusters.
 */
export type AdminKubeconfigAuthority =
  CertificateAuthority | { serverCaPem: string; clientCA: CertificateAuthority };

export interface AdminKubeconfigOptions {
  validityMs?: number;
  keyType?: KeyType;
  now?: Date;
}

export interface AdminKubeconfig {
  kubeconfig: string;
  /** When the embedded client certificate expires; renew before (see `expiresWithin`). */
  notAfter: Date;
}

/** Issues a fresh `kubernetes-admin` / `system:masters` client certificate and renders the kubeconfig. */
export async function issueAdminKubeconfig(
  ca: AdminKubeconfigAuthority,
  clusterName: string,
  endpoint: ApiEndpoint | string,
  options: AdminKubeconfigOptions = {},
): Promise<AdminKubeconfig> {
  const { serverCaPem, clientCA } = 'clientCA' in ca ? ca : { serverCaPem: ca.certPem, clientCA: ca };
  const client = await issueClientCertificate(clientCA, {
    commonName: ADMIN_COMMON_NAME,
    organizations: [ADMIN_GROUP],
    ...options,
  });
  const kubeconfig = renderKubeconfig({
    clusterName,
    server: typeof endpoint === 'string' ? endpoint : apiServerUrl(endpoint),
    caPem: serverCaPem,
    clientCertPem: client.certPem,
    clientKeyPem: client.keyPem,
  });
  return { kubeconfig, notAfter: client.notAfter };
}

/**
 * The client certificate (PEM) of the current context's user, for the renewal check. The error says what
 * is missing, never what the kubeconfig holds.
 */
export function kubeconfigClientCertificate(kubeconfig: string): string {
  const doc = parseDocument(kubeconfig, { prettyErrors: false });
  if (doc.errors.length > 0) throw new PkiError('kubeconfig is not valid YAML', 'InvalidKubeconfig');
  const currentContext = doc.get('current-context');
  const contexts = doc.get('contexts');
  const users = doc.get('users');
  if (!isSeq(contexts) || !isSeq(users))
    throw new PkiError('kubeconfig has no contexts or users', 'InvalidKubeconfig');
  const named = (items: typeof contexts, name: unknown) =>
    items.items.find((item) => isMap(item) && item.get('name') === name);
  const context = named(contexts, currentContext);
  const userName = isMap(context) ? context.getIn(['context', 'user']) : undefined;
  const user = named(users, userName);
  const data = isMap(user) ? user.getIn(['user', 'client-certificate-data']) : undefined;
  if (typeof data !== 'string' || data === '') {
    throw new PkiError(
      'kubeconfig: the current context has no user with client-certificate-data',
      'InvalidKubeconfig',
    );
  }
  return Buffer.from(data, 'base64').toString('utf8');
}

export function kubeconfigSecretName(clusterName: string): string {
  return `${clusterName}-kubeconfig`;
}

/** The `<cluster>-kubeconfig` Secret as upstream writes it (key `value`); owner references are the caller's. */
export function kubeconfigSecret(clusterName: string, kubeconfig: string): ClusterSecretShape {
  return {
    name: kubeconfigSecretName(clusterName),
    type: CLUSTER_SECRET_TYPE,
    labels: { [CLUSTER_NAME_LABEL]: clusterName },
    stringData: { [KUBECONFIG_DATA_KEY]: kubeconfig },
  };
}
