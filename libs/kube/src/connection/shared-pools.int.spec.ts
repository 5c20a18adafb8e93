import { KubeClient } from '../client.js';
import { HttpMethod } from '../http-method.js';
import { useWidgetNamespace } from '../testing/widget-namespace.js';
import { ClusterConnection, loadConnection } from './cluster-connection.js';
import { sharedPools } from './shared-pools.js';

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string } };
}

// The sim hosts many identities of one cluster in one process (node agents, kubelets): their clients share a pool
// per server and TLS identity, each request still authenticated as its own client.
describe('KubeClient connection pools', () => {
  const env = useWidgetNamespace('kube-pools');

  async function serviceAccountToken(name: string): Promise<string> {
    const namespace = env.ns.name;
    await env.client.request({
      method: HttpMethod.POST,
      path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
    });
    const response = await env.client.request<{ status: { token: string } }>({
      method: HttpMethod.POST,
      path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    });
    return response.status.token;
  }

  async function whoAmI(client: KubeClient): Promise<string | undefined> {
    const review = await client.request<SelfSubjectReview>({
      method: HttpMethod.POST,
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username;
  }

  it('sends clients that differ only in their bearer token over one connection, each as itself', async () => {
    const admin = loadConnection(env.ns.kc);
    const tokenClient = (token: string) =>
      new KubeClient(new ClusterConnection({ context: 'agent', server: admin.server, caPem: admin.settings.caPem, token }));
    const pools = sharedPools.size;
    const a = tokenClient(await serviceAccountToken('agent-a'));
    const b = tokenClient(await serviceAccountToken('agent-b'));
    try {
      expect(await whoAmI(a)).toBe(`system:serviceaccount:${env.ns.name}:agent-a`);
      expect(await whoAmI(b)).toBe(`system:serviceaccount:${env.ns.name}:agent-b`);
      // One pool for both (the admin client's too, when the test kubeconfig authenticates with a token as well).
      expect(sharedPools.size - pools).toBeLessThanOrEqual(1);
      expect(a.connectionStats().connected).toBe(1);
      expect(b.connectionStats()).toEqual(a.connectionStats());

      await a.close();
      await expect(whoAmI(a)).rejects.toThrow();
      expect(await whoAmI(b)).toBe(`system:serviceaccount:${env.ns.name}:agent-b`);
    } finally {
      await a.close();
      await b.close();
    }
    expect(sharedPools.size).toBe(pools);
    expect(b.connectionStats()).toEqual({ connected: 0, running: 0 });
  });
});
