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
  TEMPLATE_WRITER_RULES,
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
  let creator: string;

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
    creator = await userToken(mine.kc, mine.name, 'creator', [...CLUSTER_PAGE_RULES, ...TEMPLATE_WRITER_RULES]);
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
  const clusters = () => admin.resource<Cluster>(RESOURCES.Cluster);

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

  it('says which actions the user may take and, for each they may not, the right they lack', async () => {
    type Actions = Record<string, { allowed: boolean; reason?: string }>;
    const rights = async (token: string) => {
      const answer = await get(`/dashboard/api/clusters/${mine.name}/alpha/permissions`, token);
      expect(answer.status).toBe(200);
      return answer.json<{ actions: Actions }>().actions;
    };
    const viewerRights = await rights(viewer);
    expect(viewerRights.scaleWorkers).toEqual({
      allowed: false,
      reason: `you may not patch machinedeployments.cluster.x-k8s.io in namespace ${mine.name}`,
    });
    expect(viewerRights.pause).toEqual({
      allowed: false,
      reason: `you may not patch clusters.cluster.x-k8s.io alpha in namespace ${mine.name}`,
    });
    expect(viewerRights.scaleControlPlane?.reason).toBe(
      `you may not patch k3scontrolplanes.controlplane.capstan.dev alpha in namespace ${mine.name}`,
    );
    expect(viewerRights.kubeconfig?.reason).toBe(`you may not get secrets alpha-kubeconfig in namespace ${mine.name}`);
    expect(viewerRights.upgrade?.reason).toContain('capstan upgrade cluster');

    const operatorRights = await rights(operator);
    expect(operatorRights).toMatchObject({
      pause: { allowed: true },
      delete: { allowed: true },
      scaleControlPlane: { allowed: true },
      scaleWorkers: { allowed: false },
      kubeconfig: { allowed: false },
    });
    expect((await rights(keeper)).kubeconfig).toEqual({ allowed: true });
    // A Cluster in a namespace the user cannot see is not there for them.
    expect((await get(`/dashboard/api/clusters/${mine.name}/alpha/permissions`, outsider)).status).toBe(404);
  });

  describe('creating a cluster from a built-in template', () => {
    const create = (token: string, body: unknown) =>
      adminApiRequest(service, '/dashboard/api/clusters', { token, method: 'POST', body });
    const request = (name: string) => ({
      namespace: mine.name,
      name,
      kubernetesVersion: 'v1.34.4',
      controlPlaneMachineCount: 1,
      workerMachineCount: 2,
    });

    it('offers the templates `capstan generate cluster` has', async () => {
      const answer = await get('/dashboard/api/cluster-templates', viewer);
      expect(answer.json<{ templates: { infrastructure: string; flavor?: string }[] }>().templates).toEqual([
        expect.objectContaining({ infrastructure: 'sim' }),
        expect.objectContaining({ infrastructure: 'sim', flavor: 'topology' }),
      ]);
    });

    it("refuses what `capstan generate cluster` refuses, with its rules, and writes nothing", async () => {
      const invalid = await create(creator, { ...request('Not_A_Name'), controlPlaneMachineCount: 2 });
      expect(invalid.status).toBe(400);
      const { problems } = invalid.json<{ problems: string[] }>();
      expect(problems).toEqual([expect.stringContaining('cluster name "Not_A_Name" is not an RFC 1123 label')]);
      const even = await create(creator, { ...request('even'), controlPlaneMachineCount: 2 });
      expect(even.json<{ problems: string[] }>().problems).toEqual([
        expect.stringContaining('needs an odd number of machines'),
      ]);
      expect((await create(creator, { ...request('bad-count'), workerMachineCount: -1 })).status).toBe(400);
      expect(await clusters().getIfExists({ namespace: mine.name, name: 'even' })).toBeUndefined();
    });

    it('writes every object of the template as the user: refused for a viewer, created for a user with the rights', async () => {
      const refused = await create(viewer, request('made'));
      expect(refused.status).toBe(403);
      expect(refused.json<{ message: string }>().message).toContain(`"system:serviceaccount:${mine.name}:viewer"`);

      const made = await create(creator, request('made'));
      expect(made.status).toBe(201);
      expect(made.json<{ objects: { kind: string }[] }>().objects.map((o) => o.kind)).toEqual(
        expect.arrayContaining(['Cluster', 'SimCluster', 'K3sControlPlane', 'MachineDeployment', 'ClusterResourceSet']),
      );
      const written = await admin
        .resource<{ spec: { replicas: number; template: { spec: { version: string } } } } & KubernetesObject>(
          RESOURCES.MachineDeployment,
        )
        .get({ namespace: mine.name, name: 'made-md-0' });
      expect(written.spec.replicas).toBe(2);
      expect(written.spec.template.spec.version).toBe('v1.34.4+k3s1');
      expect(written.metadata?.managedFields?.map((f) => f.manager)).toContain('capstan-dashboard');

      const again = await create(creator, request('made'));
      expect(again.status).toBe(409);
      expect(again.json<{ message: string }>().message).toBe(`Cluster ${mine.name}/made already exists`);
    });

    it('chooses in-place rollouts through the topology template: its in-place worker class and control plane variable', async () => {
      const plain = await create(creator, { ...request('plain-in-place'), inPlace: true });
      expect(plain.status).toBe(400);
      expect(plain.json<{ message: string }>().message).toContain('use the topology template');

      expect((await create(creator, { ...request('managed-in-place'), flavor: 'topology', inPlace: true })).status).toBe(201);
      const topology = (await clusters().get({ namespace: mine.name, name: 'managed-in-place' })).spec?.topology;
      expect(topology?.workers?.machineDeployments?.map((md) => md.class)).toEqual(['in-place-worker']);
      expect(topology?.variables).toContainEqual({ name: 'inPlaceControlPlane', value: true });
      expect(topology?.version).toBe('v1.34.4+k3s1');
    });
  });

  describe('actions', () => {
    const post = (path: string, token: string, body: unknown) =>
      adminApiRequest(service, `/dashboard/api/clusters/${mine.name}/${path}`, {
        token,
        method: 'POST',
        body,
      });

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

    it("scales a topology Cluster through its topology: the control plane's and a pool's replicas", async () => {
      await clusters().create({
        ...cluster(mine.name, 'pooled'),
        spec: {
          topology: {
            classRef: { name: 'capstan-k3s' },
            version: 'v1.34.4',
            controlPlane: { replicas: 1 },
            workers: { machineDeployments: [{ class: 'default-worker', name: 'md-0', replicas: 2 }] },
          },
        },
      } as Cluster);
      // The MachineDeployment as the topology controller names and labels it.
      await admin.resource(RESOURCES.MachineDeployment).create({
        apiVersion: RESOURCES.MachineDeployment.apiVersion,
        kind: 'MachineDeployment',
        metadata: {
          name: 'pooled-md-0-x7k2p',
          namespace: mine.name,
          labels: {
            'cluster.x-k8s.io/cluster-name': 'pooled',
            'topology.cluster.x-k8s.io/owned': '',
            'topology.cluster.x-k8s.io/deployment-name': 'md-0',
          },
        },
        spec: {
          clusterName: 'pooled',
          replicas: 2,
          selector: { matchLabels: { pool: 'md-0' } },
          template: {
            metadata: { labels: { pool: 'md-0' } },
            spec: {
              clusterName: 'pooled',
              version: 'v1.34.4',
              bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name: 'x' } },
              infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 'x' },
            },
          },
        },
      } as KubernetesObject);

      const scaled = await adminApiRequest(service, `/dashboard/api/machinedeployments/${mine.name}/pooled-md-0-x7k2p/scale`, {
        token: creator,
        method: 'POST',
        body: { replicas: 3 },
      });
      expect(scaled.json()).toMatchObject({ replicas: 3, scaled: { kind: 'Cluster', name: 'pooled', replicas: 3 } });
      expect((await post('pooled/scale-control-plane', creator, { replicas: 3 })).json()).toEqual({
        kind: 'Cluster',
        name: 'pooled',
        replicas: 3,
      });
      const topology = (await clusters().get({ namespace: mine.name, name: 'pooled' })).spec?.topology;
      expect(topology?.workers?.machineDeployments?.[0]?.replicas).toBe(3);
      expect(topology?.controlPlane?.replicas).toBe(3);
      // The MachineDeployment is the topology controller's to change: the dashboard wrote nothing to it.
      const deployment = await admin
        .resource<{ spec: { replicas: number } } & KubernetesObject>(RESOURCES.MachineDeployment)
        .get({ namespace: mine.name, name: 'pooled-md-0-x7k2p' });
      expect(deployment.spec.replicas).toBe(2);
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
