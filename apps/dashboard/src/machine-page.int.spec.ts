import { RESOURCES } from '@capstan/api';
import { createKubeClient, NODES, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  adminApiRequest,
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  type TestNamespace,
} from '@capstan/testing';
import type { MachineDetail } from './machines/machine-detail.js';
import type { MachineRow } from './machines/machine-row.js';
import {
  CLUSTER_PAGE_RULES,
  createClusterTree,
  createKubeconfigSecret,
  treeKindsServed,
  userToken,
} from './testing/dashboard-users.js';
import {
  createNode,
  createPlanSecret,
  createSimMachines,
  MACHINE_PAGE_RULES,
  machineReaderRules,
  setMachineNode,
  testApiServerKubeconfig,
} from './testing/machine-page-objects.js';
import { startTestDashboard } from './testing/start-test-dashboard.js';

// A Cluster's Machines and a Machine's page against the real API server: the list from the shared informer for users
// RBAC lets list Machines there, the page read as the user, so the Node and the plan's state only for a user who may
// get the Secrets they come from, and never a plan's content or a secret.

const FILE_SECRET = 'agent-token: K10feedfacefeedface0123::server:file-secret-value';
const ENV_SECRET = 'env-secret-value-31415926';

describe("a Machine's page", () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewer: string;
  let reader: string;
  let outsider: string;
  const worker = 'alpha-md-0-a1-w0';
  let nodeName: string;

  beforeAll(async () => {
    [mine, theirs] = await Promise.all([
      createTestNamespace('dash-mach'),
      createTestNamespace('dash-mach-other'),
    ]);
    nodeName = `${mine.name}-node`;
    await installCapstanDefinitions(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewer, reader, outsider] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', MACHINE_PAGE_RULES),
      userToken(mine.kc, mine.name, 'reader', machineReaderRules('alpha', worker)),
      userToken(mine.kc, theirs.name, 'outsider', CLUSTER_PAGE_RULES),
    ]);
    await Promise.all([
      createClusterTree(admin, mine.name, 'alpha'),
      createClusterTree(admin, theirs.name, 'hidden'),
    ]);
    await Promise.all([
      createSimMachines(admin, mine.name, ['alpha-cp-0', worker]),
      createKubeconfigSecret(admin, mine.name, 'alpha', testApiServerKubeconfig()),
      createNode(admin, nodeName),
      createPlanSecret(
        admin,
        mine.name,
        worker,
        {
          files: [{ path: '/etc/capstan/agent.yaml', content: Buffer.from(FILE_SECRET).toString('base64') }],
          instructions: [
            { name: 'install', command: 'sh', args: ['-c', 'install'], env: [`SECRET=${ENV_SECRET}`] },
          ],
        },
        {
          state: 'failed',
          failure: 'instruction install exited 1',
          output: { install: `read ${FILE_SECRET}\nSECRET=${ENV_SECRET}\ninstall: cannot reach the server` },
          probes: { 'kube-apiserver': { healthy: false, successCount: 0, failureCount: 3 } },
        },
      ),
    ]);
    await setMachineNode(admin, mine.name, worker, nodeName);
    await admin
      .resource(RESOURCES.Machine)
      .mergePatch(
        { namespace: mine.name, name: worker },
        {
          metadata: { labels: { 'cluster.x-k8s.io/deployment-name': 'alpha-md-0' } },
          spec: { providerID: `sim://${mine.name}/${worker}` },
        },
      );
    await treeKindsServed(admin, mine.name);
    service = await startTestDashboard(mine.name, 'dash-mach');
  });
  afterAll(async () => {
    await service?.stop();
    await admin
      ?.resource(NODES)
      .delete({ name: nodeName })
      .catch(() => undefined);
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete()]);
  });

  const get = (path: string, token?: string) =>
    adminApiRequest(service, path, { ...(token ? { token } : {}) });

  it("lists a Cluster's Machines from the shared informer, control plane first, to a user who may list them", async () => {
    const rows = await eventually(
      async () => {
        const answer = (await get(`/dashboard/api/clusters/${mine.name}/alpha/machines`, viewer)).json<{
          machines: MachineRow[];
        }>();
        return answer.machines.some((m) => m.nodeName && m.deployment) && answer.machines;
      },
      { message: "the viewer sees alpha's Machines with the worker's Node" },
    );
    expect(rows.map((m) => m.name)).toEqual(['alpha-cp-0', worker]);
    expect(rows[0]).toMatchObject({ controlPlane: true, version: 'v1.34.4', deleting: false });
    expect(rows[1]).toMatchObject({
      namespace: mine.name,
      controlPlane: false,
      deployment: 'alpha-md-0',
      phase: 'Running',
      nodeName,
      providerID: `sim://${mine.name}/${worker}`,
      infrastructure: { kind: 'SimMachine', name: worker },
      ready: { type: 'Ready', status: 'False', reason: 'NodeNotReady', message: 'waiting for the node' },
    });
    expect(rows[1]!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("refuses a user of another namespace the list with 403, and shows them only their own namespace's Machines", async () => {
    const refused = await get(`/dashboard/api/clusters/${mine.name}/alpha/machines`, outsider);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toBe(
      `system:serviceaccount:${theirs.name}:outsider may not list machines.cluster.x-k8s.io ${mine.name}/*`,
    );
    expect(refused.body).not.toContain('alpha-cp-0');
    const own = await eventually(
      async () => {
        const { machines } = (
          await get(`/dashboard/api/clusters/${theirs.name}/hidden/machines`, outsider)
        ).json<{
          machines: MachineRow[];
        }>();
        return machines.length === 2 && machines;
      },
      { message: "the outsider sees hidden's Machines" },
    );
    expect(own.every((m) => m.namespace === theirs.name)).toBe(true);
    expect((await get(`/dashboard/api/clusters/${mine.name}/alpha/machines`)).status).toBe(401);
  });

  it('shows a user who may get the Secrets the Machine, its infrastructure, its Node and its plan, never a secret', async () => {
    const answer = await get(`/dashboard/api/machines/${mine.name}/${worker}`, reader);
    expect(answer.status).toBe(200);
    const detail = answer.json<MachineDetail>();
    expect(detail.machine).toMatchObject({
      name: worker,
      phase: 'Running',
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
      nodeInfo: { kubeletVersion: 'v1.34.4', osImage: 'Capstan Test' },
    });
    expect(detail.machine.conditions.map((c) => c.type)).toEqual(['Ready']);
    expect(detail.infrastructure).toMatchObject({
      kind: 'SimMachine',
      name: worker,
      ready: true,
      providerID: `sim://${mine.name}/${worker}`,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned' }],
    });
    expect(detail.node).toMatchObject({
      name: nodeName,
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      nodeInfo: { osImage: 'Capstan Test', kubeletVersion: 'v1.34.4' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
    });
    expect(detail.plan).toMatchObject({
      state: 'failed',
      failures: 1,
      failureMessage: 'instruction install exited 1',
      probes: [{ name: 'kube-apiserver', healthy: false, successCount: 0, failureCount: 3 }],
    });
    expect(detail.plan?.failureOutput).toContain('install: cannot reach the server');
    for (const secret of [
      FILE_SECRET,
      Buffer.from(FILE_SECRET).toString('base64'),
      ENV_SECRET,
      'file-secret-value',
    ])
      expect(answer.body).not.toContain(secret);
    // Nothing of the workload cluster's kubeconfig either.
    expect(answer.body).not.toMatch(/client-key|certificate-authority|BEGIN|token:/);
  });

  it('tells a viewer who may not get the Secrets why the Node and the plan are missing', async () => {
    const answer = await get(`/dashboard/api/machines/${mine.name}/${worker}`, viewer);
    expect(answer.status).toBe(200);
    const detail = answer.json<MachineDetail>();
    expect(detail.infrastructure?.ready).toBe(true);
    expect(detail.node).toBeUndefined();
    expect(detail.nodeUnavailable).toBe(
      `reading the Node takes the workload cluster's kubeconfig (Secret ${mine.name}/alpha-kubeconfig), which you may not get`,
    );
    expect(detail.plan).toBeUndefined();
    expect(detail.planUnavailable).toContain(
      `Secret ${mine.name}/${worker}-machine-plan, which you may not get`,
    );
    const controlPlane = (
      await get(`/dashboard/api/machines/${mine.name}/alpha-cp-0`, viewer)
    ).json<MachineDetail>();
    expect(controlPlane.nodeUnavailable).toBe('the Machine has no Node yet');
  });

  it("refuses a user of another namespace the Machine with the API server's 403, and answers 404 for none", async () => {
    const refused = await get(`/dashboard/api/machines/${mine.name}/${worker}`, outsider);
    expect(refused.status).toBe(403);
    expect(refused.json<{ message: string }>().message).toContain(
      `"system:serviceaccount:${theirs.name}:outsider" cannot get resource "machines"`,
    );
    expect((await get(`/dashboard/api/machines/${mine.name}/nowhere`, viewer)).status).toBe(404);
  });
});
