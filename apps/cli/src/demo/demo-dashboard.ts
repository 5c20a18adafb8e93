import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { DASHBOARD_AUDIENCE } from '@capstan/observability';
import type { LocalService } from '@capstan/testing';

/** The demo's dashboard user: a ServiceAccount of the demo's namespace. */
export const DEMO_DASHBOARD_ACCOUNT = 'capstan-dashboard-demo';

/**
 * What the demo's dashboard user may do, in the demo's namespace only: read the Cluster API objects and their
 * providers', pause, resume and scale, and read Secrets (the kubeconfig download). The dashboard checks nothing
 * itself: the API server decides with these rules.
 */
const RULES = [
  {
    apiGroups: [
      'cluster.x-k8s.io',
      'bootstrap.capstan.dev',
      'controlplane.capstan.dev',
      'infrastructure.capstan.dev',
    ],
    resources: ['*'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machinedeployments'], verbs: ['patch'] },
  { apiGroups: ['controlplane.capstan.dev'], resources: ['k3scontrolplanes'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
];

const alreadyExists = (error: unknown) => (error as { code?: number }).code === 409;

/** Creates (or keeps) the demo's dashboard user and its Role in `namespace`. */
export async function grantDemoDashboardUser(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const name = DEMO_DASHBOARD_ACCOUNT;
  const keep = (error: unknown) => {
    if (!alreadyExists(error)) throw error;
  };
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }).catch(keep);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: RULES } }).catch(keep);
  await rbac
    .createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    })
    .catch(keep);
}

/** Where the dashboard is and how to sign in: the token command, never a token (it would sit in the terminal's log). */
export function dashboardLines(
  dashboard: LocalService,
  kubeconfigPath: string,
  namespace: string,
  caPath: string,
): string[] {
  return [
    `Dashboard: ${dashboard.adminUrl}/dashboard   (certificate signed by the demo's CA: ${caPath})`,
    `  sign in with a token: kubectl --kubeconfig ${kubeconfigPath} -n ${namespace} create token ${DEMO_DASHBOARD_ACCOUNT} --audience ${DASHBOARD_AUDIENCE}`,
  ];
}
