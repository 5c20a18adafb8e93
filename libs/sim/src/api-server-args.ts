/** Files a workload kube-apiserver reads, all in its own folder of the provider's state dir. */
export interface ApiServerFiles {
  servingCert: string;
  servingKey: string;
  clientCA: string;
  requestHeaderCA: string;
  proxyClientCert: string;
  proxyClientKey: string;
  serviceAccountKey: string;
  tokenFile: string;
  certDir: string;
}

export interface ApiServerArgsInput {
  /** Every etcd member the server may use (its client fails over between them). */
  etcdUrls: readonly string[];
  /** `/capstan-sim/<namespace>/<cluster>` (dedicated) or `/capstan-sim/shared`. */
  etcdPrefix: string;
  bindAddress: string;
  advertiseAddress: string;
  port: number;
  files: ApiServerFiles;
  serviceCIDR: string;
  clusterDomain: string;
  /** Common names the request-header CA's client certificates may carry (the aggregator, the shared-mode proxy). */
  requestHeaderAllowedNames: readonly string[];
  /**
   * The ServiceAccount admission plugin gives pods their service account; it needs the `default` account the
   * controller manager creates, so it is on only where one runs.
   */
  serviceAccountAdmission?: boolean;
  /**
   * The watch cache: off for a cluster's own server (its few watches go to etcd, and it saves the cache's memory), on
   * for the shared server, where each cluster's endpoint watches Nodes with its own label selector: without the cache
   * each of those watches is an etcd watch that asks for every event's previous value, which at hundreds of clusters
   * swamped etcd (gigabytes of buffered events, Nodes no longer registering); with it, one etcd watch per resource
   * feeds every selector.
   */
  watchCache?: boolean;
}

export const PROXY_CLIENT_COMMON_NAME = 'system:auth-proxy';

/**
 * kube-apiserver flags as a K3s server sets them where they matter to clients (authentication, service
 * accounts, Node+RBAC authorization, request-header CA), tuned for a small footprint: no watch cache, no
 * priority-and-fairness, no profiling.
 */
export function workloadApiServerArgs(input: ApiServerArgsInput): string[] {
  const issuer = `https://kubernetes.default.svc.${input.clusterDomain}`;
  const { files } = input;
  return [
    `--etcd-servers=${input.etcdUrls.join(',')}`,
    `--etcd-prefix=${input.etcdPrefix}`,
    `--bind-address=${input.bindAddress}`,
    `--advertise-address=${input.advertiseAddress}`,
    `--secure-port=${input.port}`,
    `--cert-dir=${files.certDir}`,
    `--tls-cert-file=${files.servingCert}`,
    `--tls-private-key-file=${files.servingKey}`,
    `--client-ca-file=${files.clientCA}`,
    `--token-auth-file=${files.tokenFile}`,
    '--anonymous-auth=false',
    `--service-account-key-file=${files.serviceAccountKey}`,
    `--service-account-signing-key-file=${files.serviceAccountKey}`,
    `--service-account-issuer=${issuer}`,
    `--api-audiences=${issuer},k3s`,
    `--requestheader-client-ca-file=${files.requestHeaderCA}`,
    `--requestheader-allowed-names=${input.requestHeaderAllowedNames.join(',')}`,
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${files.proxyClientCert}`,
    `--proxy-client-key-file=${files.proxyClientKey}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    ...(input.serviceAccountAdmission ? [] : ['--disable-admission-plugins=ServiceAccount']),
    `--service-cluster-ip-range=${input.serviceCIDR}`,
    '--allow-privileged=true',
    `--watch-cache=${input.watchCache === true}`,
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=0',
  ];
}
