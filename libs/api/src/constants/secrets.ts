/** Type of every Secret the core and the providers create (bootstrap data, kubeconfig, certificates). */
export const CLUSTER_SECRET_TYPE = 'cluster.x-k8s.io/secret';

/** Data keys of bootstrap data and kubeconfig secrets. */
export const SECRET_KEYS = { value: 'value', format: 'format' } as const;

/** Purposes of the per-cluster secrets named `<cluster>-<purpose>` (upstream util/secret). */
export const ClusterSecretPurpose = {
  Kubeconfig: 'kubeconfig',
  ClusterCA: 'ca',
  EtcdCA: 'etcd',
  FrontProxyCA: 'proxy',
  ServiceAccount: 'sa',
  Token: 'token',
} as const;
export type ClusterSecretPurpose = (typeof ClusterSecretPurpose)[keyof typeof ClusterSecretPurpose];

/** `<cluster>-<purpose>`, e.g. `demo-kubeconfig`. */
export function clusterSecretName(clusterName: string, purpose: ClusterSecretPurpose): string {
  return `${clusterName}-${purpose}`;
}
