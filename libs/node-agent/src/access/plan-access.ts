import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import { formatLabelValue, isAlreadyExists, type KubeClient, type ResourceType, HttpMethod } from '@capstan/kube';

/** How long an agent token lives before the bootstrap provider must hand out a new one (1 year). */
export const AGENT_TOKEN_EXPIRATION_SECONDS = 365 * 24 * 3600;

/** Label on every object of a machine's plan access, naming the plan Secret (hashed past 63 characters). */
export const PLAN_SECRET_LABEL = 'capstan.dev/plan-secret-name';

/**
 * The ServiceAccount, Role and RoleBinding that let one machine's agent read and report on its own plan Secret and
 * nothing else: the Role names that one Secret (`resourceNames`), so list and watch work only with the field selector
 * `metadata.name=<secret>`, and no other Secret, bootstrap data included, can be read. All three are named after the
 * Secret and owned by `owner` (the K3sConfig), so they go with it.
 */
export function planAccessObjects(namespace: string, secretName: string, owner?: V1OwnerReference): KubernetesObject[] {
  const metadata = {
    name: secretName,
    namespace,
    labels: { [PLAN_SECRET_LABEL]: formatLabelValue(secretName) },
    ...(owner && { ownerReferences: [owner] }),
  };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [
        {
          apiGroups: [''],
          resources: ['secrets'],
          resourceNames: [secretName],
          verbs: ['get', 'list', 'watch', 'update', 'patch'],
        },
      ],
    } as KubernetesObject,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: secretName },
      subjects: [{ kind: 'ServiceAccount', name: secretName, namespace }],
    } as KubernetesObject,
  ];
}

interface TokenRequestStatus {
  status?: { token?: string; expirationTimestamp?: string };
}

/**
 * A token of the agent's ServiceAccount, bound to the plan Secret: deleting the Secret (and so the machine's plan)
 * invalidates it, as a bound pod token is invalidated with its pod.
 */
export async function requestAgentToken(
  client: KubeClient,
  namespace: string,
  secret: { name: string; uid: string },
  expirationSeconds = AGENT_TOKEN_EXPIRATION_SECONDS,
): Promise<{ token: string; expiresAt?: string }> {
  const response = await client.request<TokenRequestStatus>({
    method: HttpMethod.POST,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(secret.name)}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: secret.name, uid: secret.uid },
      },
    },
  });
  const token = response.status?.token;
  if (!token) throw new Error(`token request for ${namespace}/${secret.name} returned no token`);
  return { token, ...(response.status?.expirationTimestamp && { expiresAt: response.status.expirationTimestamp }) };
}

const ACCESS_KINDS: Record<string, ResourceType> = {
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  Role: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true },
  RoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
  },
};

/** Creates the plan access objects of one machine (those already there stay as they are). */
export async function ensurePlanAccess(
  client: KubeClient,
  namespace: string,
  secretName: string,
  owner?: V1OwnerReference,
): Promise<void> {
  for (const obj of planAccessObjects(namespace, secretName, owner)) {
    try {
      await client.resource(ACCESS_KINDS[obj.kind!]!).create(obj);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
}
