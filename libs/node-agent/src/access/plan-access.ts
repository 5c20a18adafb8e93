import { type KubernetesObject, type V1OwnerReference } from '@kubernetes/client-node';
import { formatLabelValue, isAlreadyExists, LEASES_V1, type KubeClient, type ResourceType, HttpMethod } from '@capstan/kube';

/**
 * How long an agent token lives (12 hours): the agent renews its own token at half of it (token-renewer.ts), so a
 * token that leaves the machine is worth hours, not a year.
 */
export const AGENT_TOKEN_EXPIRATION_SECONDS = 12 * 3600;

/**
 * How long a machine's agent Lease stays valid without renewal: the agent renews it every third of that, and the
 * bootstrap provider turns `PlanApplied` Unknown (`AgentNotReporting`) when it saw no renewal for that long.
 */
export const AGENT_LEASE_SECONDS = 40;

/** Label on every object of a machine's plan access, naming the plan Secret (hashed past 63 characters). */
export const PLAN_SECRET_LABEL = 'capstan.dev/plan-secret-name';

/**
 * The ServiceAccount, Role and RoleBinding that let one machine's agent read and report on its own plan Secret and
 * nothing else: the Role names that one Secret (`resourceNames`), so list and watch work only with the field selector
 * `metadata.name=<secret>`, and no other Secret, bootstrap data included, can be read. It may also request tokens for
 * its own ServiceAccount (and no other): that is how it renews its short-lived token. All three are named after the
 * Secret and owned by `owner` (the K3sConfig), so they go with it.
 */
export function planAccessObjects(
  namespace: string,
  secretName: string,
  owner?: V1OwnerReference,
  leaseDurationSeconds = AGENT_LEASE_SECONDS,
): KubernetesObject[] {
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
        {
          apiGroups: [''],
          resources: ['serviceaccounts/token'],
          resourceNames: [secretName],
          verbs: ['create'],
        },
        // Its heartbeat: the Lease the provider made for it (RBAC cannot limit create to a name, so it only renews).
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [secretName], verbs: ['get', 'update'] },
      ],
    } as KubernetesObject,
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata,
      spec: { holderIdentity: secretName, leaseDurationSeconds },
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
 * A short-lived token of the agent's ServiceAccount (named after the plan Secret). It is bound to the ServiceAccount
 * alone, not to the plan Secret: a deleted plan Secret is created again by the bootstrap provider and the agent goes
 * on with the token it has, where a Secret-bound token would be dead for good. Deleting the ServiceAccount (it goes
 * with the K3sConfig) invalidates every token of the machine. `client` is the provider's, or the agent's own when it
 * renews.
 */
export async function requestAgentToken(
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
  expirationSeconds = AGENT_TOKEN_EXPIRATION_SECONDS,
  signal?: AbortSignal,
): Promise<{ token: string; expiresAt?: string }> {
  const response = await client.request<TokenRequestStatus>({
    method: HttpMethod.POST,
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
    ...(signal && { signal }),
  });
  const token = response.status?.token;
  if (!token) throw new Error(`token request for ${namespace}/${serviceAccount} returned no token`);
  return { token, ...(response.status?.expirationTimestamp && { expiresAt: response.status.expirationTimestamp }) };
}

const ACCESS_KINDS: Record<string, ResourceType> = {
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  Role: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true },
  Lease: LEASES_V1,
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
  leaseDurationSeconds = AGENT_LEASE_SECONDS,
): Promise<void> {
  for (const obj of planAccessObjects(namespace, secretName, owner, leaseDurationSeconds)) {
    try {
      await client.resource(ACCESS_KINDS[obj.kind!]!).create(obj);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
}
