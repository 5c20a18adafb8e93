import { apiServerUrl, PkiError } from '@capstan/pki';
import { BootstrapRenderError } from './errors.js';
import type { K3sBootstrapInput } from './k3s-config-spec.js';

/** The K3s config keys this renderer writes; each is the name of the K3s command-line flag. */
export const K3S_CONFIG_KEYS = {
  clusterInit: 'cluster-init',
  server: 'server',
  token: 'token',
  nodeName: 'node-name',
  nodeLabel: 'node-label',
  nodeTaint: 'node-taint',
  kubeletArg: 'kubelet-arg',
  kubeProxyArg: 'kube-proxy-arg',
  tlsSan: 'tls-san',
  disable: 'disable',
  clusterCidr: 'cluster-cidr',
  serviceCidr: 'service-cidr',
  clusterDns: 'cluster-dns',
  clusterDomain: 'cluster-domain',
  kubeApiserverArg: 'kube-apiserver-arg',
  kubeControllerManagerArg: 'kube-controller-manager-arg',
  kubeSchedulerArg: 'kube-scheduler-arg',
  secretsEncryption: 'secrets-encryption',
} as const;

export const PROVIDER_ID_KUBELET_ARG = 'provider-id';

function serverUrl(input: K3sBootstrapInput): string {
  try {
    return apiServerUrl(input.endpoint);
  } catch (error) {
    if (error instanceof PkiError)
      throw new BootstrapRenderError(`endpoint: ${error.message}`, 'InvalidField', 'endpoint');
    throw error;
  }
}

/**
 * The content of /etc/rancher/k3s/config.yaml for one node, keys sorted so a re-render is byte-identical.
 * The init server gets `cluster-init: true` and the token (so others can join with it); joining servers and
 * agents get `server: https://<endpoint>` and the token. Every server lists the endpoint host in `tls-san`,
 * because a load balancer in front of the endpoint may send a client to any of them.
 */
export function k3sConfigFor(input: K3sBootstrapInput): Record<string, unknown> {
  const { spec, role } = input;
  const agent = spec.agentConfig ?? {};
  const server = spec.serverConfig ?? {};
  const url = serverUrl(input);
  const config: Record<string, unknown> = {};
  const list = (key: string, values: readonly string[] | undefined) => {
    if (values && values.length > 0) config[key] = [...values];
  };

  if (role === 'init-server') config[K3S_CONFIG_KEYS.clusterInit] = true;
  else config[K3S_CONFIG_KEYS.server] = url;
  config[K3S_CONFIG_KEYS.token] = input.token;
  if (agent.nodeName) config[K3S_CONFIG_KEYS.nodeName] = agent.nodeName;
  list(K3S_CONFIG_KEYS.nodeLabel, agent.nodeLabels);
  list(K3S_CONFIG_KEYS.nodeTaint, agent.nodeTaints);
  list(K3S_CONFIG_KEYS.kubeletArg, [
    ...(agent.kubeletArgs ?? []),
    ...(input.providerID ? [`${PROVIDER_ID_KUBELET_ARG}=${input.providerID}`] : []),
  ]);
  list(K3S_CONFIG_KEYS.kubeProxyArg, agent.kubeProxyArgs);

  if (role !== 'agent') {
    const sans = [...(server.tlsSANs ?? [])];
    if (!sans.includes(input.endpoint.host)) sans.push(input.endpoint.host);
    list(K3S_CONFIG_KEYS.tlsSan, sans);
    list(K3S_CONFIG_KEYS.disable, server.disableComponents);
    if (server.clusterCIDR) config[K3S_CONFIG_KEYS.clusterCidr] = server.clusterCIDR;
    if (server.serviceCIDR) config[K3S_CONFIG_KEYS.serviceCidr] = server.serviceCIDR;
    if (server.clusterDNS) config[K3S_CONFIG_KEYS.clusterDns] = server.clusterDNS;
    if (server.clusterDomain) config[K3S_CONFIG_KEYS.clusterDomain] = server.clusterDomain;
    list(K3S_CONFIG_KEYS.kubeApiserverArg, server.kubeAPIServerArgs);
    list(K3S_CONFIG_KEYS.kubeControllerManagerArg, server.kubeControllerManagerArgs);
    list(K3S_CONFIG_KEYS.kubeSchedulerArg, server.kubeSchedulerArgs);
    if (server.secretsEncryption) config[K3S_CONFIG_KEYS.secretsEncryption] = true;
  }
  return Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
