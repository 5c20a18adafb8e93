import type { KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES, type Cluster } from '@capstan/api';
import type { TreeRow } from '@capstan/describe';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  adminApiRequest,
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import {
  CLUSTER_PAGE_RULES,
  cluster,
  createClusterTree,
  createKubeconfigSecret,
  kubeconfigReaderRules,
  treeKindsServed,
  userToken,
} from './testing/dashboard-users.js';
import { startTestDashboard } from './testing/start-test-dashboard.js';

// A Cluster's page against the real API server: the `capstan describe cluster` tree and the kubeconfig, each read as
// the signed-in user (impersonated), so what they get is what RBAC lets them read.

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
  - name: alpha
    cluster: { server: 'https://127.0.0.1:6443' }
contexts:
  - name: alpha-admin@alpha
    context: { cluster: alpha, user: alpha-admin }
current-context: alpha-admin@alpha
users:
  - name: alpha-admin
    user: { token: not-a-real-token }
`;

describe("a Cluster's page", () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewer: string;
  let keeper: string;
  let outsider: string;
  let operator: string;

  beforeAll(async () => {
    [mine, theirs] = await Promise.all([
      createTestNamespace('dash-tree'),
      createTestNamespace('dash-tree-other'),
    ]);
    await installCapstanDefinitions(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewer, keeper, outsider, operator] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', CLUSTER_PAGE_RULES),
      userToken(mine.kc, mine.name, 'keeper', kubeconfigReaderRules('alpha')),
      userToken(mine.kc, theirs.name, 'outsider', CLUSTER_PAGE_RULES),
      userToken(mine.kc, mine.name, 'operator', [
        ...CLUSTER_PAGE_RULES,
        { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: ['patch', 'delete'] },
        { apiGroups: ['controlplane.capstan.dev'], resources: ['k3scontrolplanes'], verbs: ['patch'] },
      ]),
    ]);
    await createClusterTree(admin, mine.name, 'alpha');
    await createKubeconfigSecret(admin, mine.name, 'alpha', KUBECONFIG);
    await treeKindsServed(admin, mine.name);
    service = await startTestDashboard(mine.name, 'dash-tree');
  });
  afterAll(async () => {
    await service?.stop();
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete()]);
  });

  const get = (path: string, token?: string) =>
    adminApiRequest(service, path, { ...(token ? { token } : {}) });

  it('shows a viewer the tree `capstan describe cluster` prints, with conditions, reasons, messages and ages', async () => {
    const answer = await get(`/dashboard/api/clusters/${mine.name}/alpha/tree`, viewer);
    expect(answer.status).toBe(200);
    const { rows } = answer.json<{ rows: TreeRow[] }>();
    const ns = mine.name;
    expect(rows.map((r) => r.name)).toEqual([
      `Cluster ${ns}/alpha`,
      `├─K3sControlPlane ${ns}/alpha, v1.34.4`,
      `│ └─Machine ${ns}/alpha-cp-0, v1.34.4`,
      `├─SimCluster ${ns}/alpha`,
      '└─Workers',
      `  └─MachineDeployment ${ns}/alpha-md-0, v1.34.4`,
      `    └─Machine ${ns}/alpha-md-0-a1-w0, v1.34.4`,
    ]);
    expect(rows[0]).toMatchObject({
      status: 'False',
      reason: 'NotAvailable',
      message: 'the control plane is not available yet',
      health: 'bad',
    });
    expect(rows[0]!.since).toMatch(/^\d+(s|m\d*s?)$/);
    expect(rows[3]).toMatchObject({ status: 'True', reason: 'Provisioned', health: 'good' });
    expect(rows[5]).toMatchObject({ replicas: '0/1' });
    expect(rows[6]).toMatchObject({
      replicas: '1',
      ready: '0',
      status: 'False',
      reason: 'NodeNotReady',
      message: 'waiting for the node',
    });
    // Rows only: nothing of the objects' specs (bootstrap data, secrets) travels.
    expect(answer.body).not.toContain('bootstrap');
  });

  it("refuses a user of another namespace with the API server's 403", async () => {
    const refused = await get(`/dashboard/api/clusters/${mine.name}/alpha/tree`, outsider);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toContain(
      `"system:serviceaccount:${theirs.name}:outsider" cannot get resource "clusters"`,
    );
    expect((await get(`/dashboard/api/clusters/${mine.name}/alpha/tree`)).status).toBe(401);
  });

  it('answers 404 for a Cluster that does not exist', async () => {
    expect((await get(`/dashboard/api/clusters/${mine.name}/nowhere/tree`, viewer)).status).toBe(404);
  });

  it('hands the kubeconfig to a user who may get its Secret, as a file never cached', async () => {
    const download = await get(`/dashboard/api/clusters/${mine.name}/alpha/kubeconfig`, keeper);
    expect(download.status).toBe(200);
    expect(download.body).toBe(KUBECONFIG);
    expect(download.headers['content-type']).toBe('application/yaml');
    expect(download.headers['content-disposition']).toBe('attachment; filename="alpha.kubeconfig"');
    expect(download.headers['cache-control']).toBe('no-store');
  });

  it("refuses the kubeconfig to a viewer who may not get the Secret, with the API server's message", async () => {
    const refused = await get(`/dashboard/api/clusters/${mine.name}/alpha/kubeconfig`, viewer);
    expect(refused.status).toBe(403);
    expect(refused.headers['content-disposition']).toBeUndefined();
    expect(refused.json<{ message: string }>().message).toContain(
      `"system:serviceaccount:${mine.name}:viewer" cannot get resource "secrets"`,
    );
    expect(refused.body).not.toContain('not-a-real-token');
  });

  describe('actions', () => {
    const post = (path: string, token: string, body: unknown) =>
      adminApiRequest(service, `/dashboard/api/clusters/${mine.name}/${path}`, {
        token,
        method: 'POST',
        body,
      });
    const clusters = () => admin.resource<Cluster>(RESOURCES.Cluster);

    it("scales the control plane as the user: the viewer is refused by the API server, the operator's count is written", async () => {
      const refused = await post('alpha/scale-control-plane', viewer, { replicas: 3 });
      expect(refused.status).toBe(403);
      expect(refused.json<{ message: string }>().message).toContain(
        'cannot patch resource "k3scontrolplanes"',
      );
      expect((await post('alpha/scale-control-plane', operator, { replicas: 0 })).status).toBe(400);
      expect((await post('alpha/scale-control-plane', operator, { replicas: 3 })).json()).toEqual({
        kind: 'K3sControlPlane',
        name: 'alpha',
        replicas: 3,
      });
      const controlPlane = await admin
        .resource<{ spec: { replicas: number } } & KubernetesObject>(RESOURCES.K3sControlPlane)
        .get({ namespace: mine.name, name: 'alpha' });
      expect(controlPlane.spec.replicas).toBe(3);
    });

    it('upgrades a topology Cluster through its topology version, and says why a Cluster without one is not', async () => {
      await clusters().create({
        ...cluster(mine.name, 'managed'),
        spec: { topology: { classRef: { name: 'capstan-k3s' }, version: 'v1.34.4' } },
      } as Cluster);
      expect((await post('managed/upgrade', operator, { version: 'latest' })).status).toBe(400);
      expect((await post('managed/upgrade', viewer, { version: 'v1.35.4' })).status).toBe(403);
      expect((await post('managed/upgrade', operator, { version: 'v1.35.4' })).json()).toEqual({
        namespace: mine.name,
        name: 'managed',
        version: 'v1.35.4',
      });
      expect((await clusters().get({ namespace: mine.name, name: 'managed' })).spec?.topology?.version).toBe(
        'v1.35.4',
      );
      const flat = await post('alpha/upgrade', operator, { version: 'v1.35.4' });
      expect(flat.status).toBe(409);
      expect(flat.json<{ message: string }>().message).toContain('capstan upgrade cluster');
    });

    it('deletes a Cluster only once its name is typed, and as the user', async () => {
      const unconfirmed = await post('managed/delete', operator, { confirm: 'alpha' });
      expect(unconfirmed.status).toBe(400);
      expect(unconfirmed.json<{ message: string }>().message).toContain("type the Cluster's name (managed)");
      expect((await post('managed/delete', viewer, { confirm: 'managed' })).status).toBe(403);
      expect(await clusters().getIfExists({ namespace: mine.name, name: 'managed' })).toBeDefined();
      expect((await post('managed/delete', operator, { confirm: 'managed' })).status).toBe(202);
      await eventually(
        async () => (await clusters().getIfExists({ namespace: mine.name, name: 'managed' })) === undefined,
        {
          message: 'managed deleted',
        },
      );
    });
  });
});
