import { ApiException, CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';

const alreadyExists = (error: unknown) => error instanceof ApiException && error.code === 409;

/**
 * A token for ServiceAccount `name` in `namespace`, bound cluster-wide to `clusterRole` and issued for `audience`
 * (the admin API's, for one): the account and its binding are made once and kept. Lives an hour.
 */
export async function serviceAccountToken(
  kc: KubeConfig,
  options: { name: string; namespace: string; clusterRole: string; audience: string },
): Promise<string> {
  const { name, namespace, clusterRole, audience } = options;
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }).catch((error: unknown) => {
    if (!alreadyExists(error)) throw error;
  });
  const bindingName = `${namespace}-${name}-${clusterRole}`;
  await kc
    .makeApiClient(RbacAuthorizationV1Api)
    .createClusterRoleBinding({
      body: {
        metadata: { name: bindingName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    })
    .catch((error: unknown) => {
      if (!alreadyExists(error)) throw error;
    });
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [audience], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token issued for ServiceAccount ${namespace}/${name}`);
  return token;
}

/**
 * A cluster-admin token for `audience` (the admin API's: the environment's own admin token is for the API server
 * only). One account for every test file, so no binding is left per file.
 */
export function clusterAdminToken(kc: KubeConfig, audience: string): Promise<string> {
  return serviceAccountToken(kc, { name: 'capstan-test-admin', namespace: 'kube-system', clusterRole: 'cluster-admin', audience });
}
