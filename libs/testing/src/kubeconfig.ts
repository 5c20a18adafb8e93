/** Renders a kubeconfig (JSON is valid YAML, and every client reads it) for one cluster and one user. */
export interface KubeconfigParts {
  clusterName: string;
  server: string;
  caData?: string;
  insecureSkipTlsVerify?: boolean;
  user: { token?: string; clientCertificateData?: string; clientKeyData?: string };
  namespace?: string;
}

export function renderKubeconfig(parts: KubeconfigParts): string {
  const user: Record<string, string> = {};
  if (parts.user.token) user['token'] = parts.user.token;
  if (parts.user.clientCertificateData) user['client-certificate-data'] = parts.user.clientCertificateData;
  if (parts.user.clientKeyData) user['client-key-data'] = parts.user.clientKeyData;
  const cluster: Record<string, string | boolean> = { server: parts.server };
  if (parts.caData) cluster['certificate-authority-data'] = parts.caData;
  if (parts.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  const context: Record<string, string> = { cluster: parts.clusterName, user: `${parts.clusterName}-admin` };
  if (parts.namespace) context['namespace'] = parts.namespace;
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: parts.clusterName, cluster }],
      users: [{ name: `${parts.clusterName}-admin`, user }],
      contexts: [{ name: parts.clusterName, context }],
      'current-context': parts.clusterName,
    },
    null,
    2,
  );
}
