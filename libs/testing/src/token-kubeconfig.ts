import { KubeConfig } from '@kubernetes/client-node';

/**
 * A kubeconfig for the cluster `kc` points at, authenticating with a bearer token (a ServiceAccount's, an agent's),
 * optionally through another address of the same server (a relay the test can cut).
 */
export function kubeConfigForToken(kc: KubeConfig, token: string, options: { server?: string } = {}): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const withToken = new KubeConfig();
  withToken.loadFromOptions({
    clusters: [{ ...cluster, name: 'cluster', ...(options.server && { server: options.server }) }],
    users: [{ name: 'token', token }],
    contexts: [{ name: 'token', cluster: 'cluster', user: 'token' }],
    currentContext: 'token',
  });
  return withToken;
}
