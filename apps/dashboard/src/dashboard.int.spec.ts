import { CoreV1Api } from '@kubernetes/client-node';
import { RESOURCES, type Cluster, type MachineDeployment } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  adminApiRequest,
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import { DASHBOARD_AUDIENCE } from './auth/dashboard-callers.js';
import type { ClusterSummary } from './fleet/cluster-summary.js';
import { cluster, OPERATOR_RULES, userToken, VIEWER_RULES } from './testing/dashboard-users.js';
import { openEventStream } from './testing/event-stream-reader.js';
import { startTestDashboard } from './testing/start-test-dashboard.js';

// The dashboard service against the real API server: signed in with tokens for its audience, each user sees the
// Clusters RBAC lets them list, live, and acts as themselves (impersonated: the API server decides).

describe('the dashboard', () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewer: string;
  let operator: string;

  beforeAll(async () => {
    [mine, theirs] = await Promise.all([createTestNamespace('dash'), createTestNamespace('dash-other')]);
    await installCapstanDefinitions(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewer, operator] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', VIEWER_RULES),
      userToken(mine.kc, mine.name, 'operator', OPERATOR_RULES),
    ]);
    const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
    await Promise.all([
      clusters.create(cluster(mine.name, 'alpha')),
      clusters.create(cluster(theirs.name, 'hidden')),
    ]);
    service = await startTestDashboard(mine.name, 'dash');
  });
  afterAll(async () => {
    await service?.stop();
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete()]);
  });

  const get = (path: string, token?: string) =>
    adminApiRequest(service, path, { ...(token ? { token } : {}) });
  const post = (path: string, token: string, body: unknown = {}) =>
    adminApiRequest(service, path, { token, method: 'POST', body });

  it('serves the page over HTTPS only, with a policy that keeps scripts and frames its own', async () => {
    expect((await fetch(`${service.url}/dashboard/api/whoami`)).status).toBe(404);
    expect((await fetch(`${service.url}/dashboard`)).status).toBe(404);
    const page = await get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/dashboard/app.js">');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await get('/dashboard/app.js')).status).toBe(200);
  });

  it('signs in only with a token for its own audience, naming it when refused', async () => {
    expect((await get('/dashboard/api/whoami')).status).toBe(401);
    const forTheApiServer = (
      await mine.kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
        namespace: mine.name,
        name: 'viewer',
        body: { spec: { expirationSeconds: 600 } },
      })
    ).status!.token;
    const refused = await get('/dashboard/api/whoami', forTheApiServer);
    expect(refused.status).toBe(401);
    expect(refused.json<{ message: string }>().message).toContain(`for the audience ${DASHBOARD_AUDIENCE}`);
    const me = await get('/dashboard/api/whoami', viewer);
    expect(me.json()).toMatchObject({ username: `system:serviceaccount:${mine.name}:viewer` });
  });

  it("shows a user limited to one namespace that namespace's Clusters and never another's", async () => {
    const listed = await eventually(
      async () => {
        const answer = (await get('/dashboard/api/clusters', viewer)).json<{ items: ClusterSummary[] }>();
        return answer.items.length > 0 && answer;
      },
      { message: 'the viewer sees alpha' },
    );
    expect(listed.items.map((c) => `${c.namespace}/${c.name}`)).toEqual([`${mine.name}/alpha`]);
    expect(listed.items[0]).toMatchObject({ paused: false, controlPlane: { ready: 0, desired: 0 } });
    const filtered = (await get(`/dashboard/api/clusters?namespace=${theirs.name}`, viewer)).json<{
      items: ClusterSummary[];
    }>();
    expect(filtered.items).toEqual([]);
  });

  it("streams the user's fleet live: a change in their namespace arrives, one in another namespace does not", async () => {
    const stream = openEventStream(service, '/dashboard/api/clusters/stream', viewer);
    try {
      await eventually(() => stream.events.some((e) => e.event === 'snapshot'), { message: 'the snapshot' });
      const snapshot = stream.events.find((e) => e.event === 'snapshot')!.data as { items: ClusterSummary[] };
      expect(snapshot.items.map((c) => c.name)).toEqual(['alpha']);
      const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
      await clusters.mergePatch({ namespace: theirs.name, name: 'hidden' }, { spec: { paused: true } });
      await clusters.mergePatch({ namespace: mine.name, name: 'alpha' }, { spec: { paused: true } });
      const update = await eventually(() => stream.events.find((e) => e.event === 'upsert'), {
        message: 'the change of alpha',
      });
      expect(update.data).toMatchObject({ namespace: mine.name, name: 'alpha', paused: true });
      // Events go out in the order of their changes: hidden's, made first, would have come before alpha's.
      expect(
        stream.events.filter((e) => e.event === 'upsert').map((e) => (e.data as ClusterSummary).name),
      ).toEqual(['alpha']);
      await clusters.mergePatch({ namespace: mine.name, name: 'alpha' }, { spec: { paused: false } });
      await clusters.mergePatch({ namespace: theirs.name, name: 'hidden' }, { spec: { paused: false } });
    } finally {
      stream.close();
    }
  });

  it('acts as the user: the API server refuses a viewer, names what is missing, and lets an operator pause and scale', async () => {
    const refused = await post(`/dashboard/api/clusters/${mine.name}/alpha/pause`, viewer);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toContain(
      `"system:serviceaccount:${mine.name}:viewer" cannot patch resource "clusters"`,
    );
    const elsewhere = await post(`/dashboard/api/clusters/${theirs.name}/hidden/pause`, operator);
    expect(elsewhere.status).toBe(403);

    expect((await post(`/dashboard/api/clusters/${mine.name}/alpha/pause`, operator)).json()).toEqual({
      namespace: mine.name,
      name: 'alpha',
      paused: true,
    });
    expect(
      (await admin.resource<Cluster>(RESOURCES.Cluster).get({ namespace: mine.name, name: 'alpha' })).spec
        ?.paused,
    ).toBe(true);
    expect((await post(`/dashboard/api/clusters/${mine.name}/alpha/resume`, operator)).json()).toMatchObject({
      paused: false,
    });

    await admin.resource<MachineDeployment>(RESOURCES.MachineDeployment).create({
      apiVersion: RESOURCES.MachineDeployment.apiVersion,
      kind: 'MachineDeployment',
      metadata: { name: 'alpha-md-0', namespace: mine.name },
      spec: {
        clusterName: 'alpha',
        replicas: 2,
        selector: { matchLabels: { pool: 'md-0' } },
        template: {
          metadata: { labels: { pool: 'md-0' } },
          spec: {
            clusterName: 'alpha',
            bootstrap: {
              configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfigTemplate', name: 'w' },
            },
            infrastructureRef: {
              apiGroup: 'infrastructure.capstan.dev',
              kind: 'SimMachineTemplate',
              name: 'w',
            },
          },
        },
      },
    } as MachineDeployment);
    expect(
      (await post(`/dashboard/api/machinedeployments/${mine.name}/alpha-md-0/scale`, viewer, { replicas: 3 }))
        .status,
    ).toBe(403);
    const bad = await post(`/dashboard/api/machinedeployments/${mine.name}/alpha-md-0/scale`, operator, {
      replicas: -1,
    });
    expect(bad.status).toBe(400);
    expect(
      (
        await post(`/dashboard/api/machinedeployments/${mine.name}/alpha-md-0/scale`, operator, {
          replicas: 3,
        })
      ).json(),
    ).toMatchObject({
      replicas: 3,
    });
    const scaled = await admin
      .resource<MachineDeployment>(RESOURCES.MachineDeployment)
      .get({ namespace: mine.name, name: 'alpha-md-0' });
    expect(scaled.spec.replicas).toBe(3);
  });
});
