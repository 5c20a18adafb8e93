import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { RESOURCES, type Cluster } from '@capstan/api';
import { DASHBOARD_AUDIENCE } from '../auth/dashboard-callers.js';

// The dashboard's users as the tests make them: ServiceAccounts with namespace-scoped Roles and tokens for the
// dashboard's audience, and the Clusters they look at.

/** Reads the fleet: what a viewer may do. */
export const VIEWER_RULES = [
  {
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['clusters', 'machinedeployments'],
    verbs: ['get', 'list', 'watch'],
  },
];

/** A viewer who may also pause, resume and scale. */
export const OPERATOR_RULES = [
  ...VIEWER_RULES,
  { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machinedeployments'], verbs: ['patch'] },
];

/** A ServiceAccount of `namespace` with `rules` there only, and a token for the dashboard's audience. */
export async function userToken(
  kc: KubeConfig,
  namespace: string,
  name: string,
  rules: object[],
): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } as never });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const issued = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [DASHBOARD_AUDIENCE], expirationSeconds: 3600 } },
  });
  const token = issued.status?.token;
  if (!token) throw new Error(`no token issued for ${namespace}/${name}`);
  return token;
}

/** A minimal Cluster `namespace/name`: no topology, no controllers needed to show it. */
export function cluster(namespace: string, name: string): Cluster {
  return {
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name, namespace },
    spec: {
      controlPlaneRef: { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane', name },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name },
    },
  } as Cluster;
}
