import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Node, V1Secret } from '@kubernetes/client-node';
import {
  ALL_RESOURCES,
  LABELS,
  RESOURCES,
  getCondition,
  type Cluster,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { createKubeClient, Informer, SECRETS, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually, startCapstan, waitForNoLeftovers, type CapstanUnderTest, type TestNamespace } from '@capstan/testing';
import { controlPlaneName, createObject, createSimK3sCluster, deleteClusterAndWait, FAST_SIM_ENV } from './sim-cluster-fixture.js';

// The whole hand-off with real parts: the five services, sim machines whose servers run a real kube-apiserver
// from the K3s bootstrap data, and kubectl talking to the workload cluster through <cluster>-kubeconfig.

const CLUSTER = 'e2e';
const KCP = controlPlaneName(CLUSTER);
const STEP_TIMEOUT_MS = 240_000;
const run = promisify(execFile);

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false) =>
  eventually(probe, { message: what, timeoutMs: STEP_TIMEOUT_MS, intervalMs: 250 });

const isReady = (m: Machine) => getCondition(m.status?.conditions, 'Ready')?.status === 'True';

/** What the control plane machines looked like after one event. */
interface Snapshot {
  live: number;
  deleting: number;
  notReady: number;
}

describe('a K3s cluster on sim machines, end to end', () => {
  let ns: TestNamespace;
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let controlPlaneMachines: Informer<Machine>;
  let workDir: string;
  const history: Snapshot[] = [];

  const kcps = () => client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  const getKcp = () => kcps().get({ namespace: ns.name, name: KCP });
  const cpMachines = () => controlPlaneMachines.list(ns.name);
  const create = (resource: ResourceType, body: Record<string, unknown>) => createObject(client, resource, body);
  const since = (start: number) => history.slice(start);

  async function kubectl(...args: string[]): Promise<string> {
    const secret = await client
      .resource<V1Secret>(SECRETS)
      .get({ namespace: ns.name, name: `${CLUSTER}-kubeconfig` });
    const path = join(workDir, 'kubeconfig');
    writeFileSync(path, Buffer.from(secret.data!['value']!, 'base64'), { mode: 0o600 });
    const { stdout } = await run('kubectl', ['--kubeconfig', path, '--request-timeout=10s', ...args]);
    return stdout;
  }
  const nodes = async () =>
    (JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as { items: V1Node[] }).items;
  const nodeReady = (n: V1Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

  /** The control plane settled at `replicas` Ready machines, all of `version`, nothing rolling out. */
  const settledAt = (replicas: number, version: string) =>
    until(`${replicas} ready control plane machines at ${version}`, async () => {
      const kcp = await getKcp();
      const machines = cpMachines();
      return (
        kcp.status?.readyReplicas === replicas &&
        kcp.status.replicas === replicas &&
        getCondition(kcp.status.conditions, 'RollingOut')?.status === 'False' &&
        getCondition(kcp.status.conditions, 'Available')?.status === 'True' &&
        machines.length === replicas &&
        machines.every((m) => isReady(m) && m.spec.version === version && !m.metadata.deletionTimestamp) &&
        kcp
      );
    });

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'capstan-e2e-'));
    // The five services as processes, as `capstan init --local` runs them; fast sim heartbeats.
    capstan = await startCapstan('e2e', {
      env: FAST_SIM_ENV,
    });
    ns = capstan.namespace;
    client = createKubeClient(ns.kc);
    controlPlaneMachines = new Informer<Machine>(client, RESOURCES.Machine, {
      namespace: ns.name,
      labelSelector: LABELS.controlPlane,
    });
    const record = () => {
      const machines = controlPlaneMachines.list(ns.name);
      const live = machines.filter((m) => !m.metadata.deletionTimestamp);
      history.push({
        live: live.length,
        deleting: machines.length - live.length,
        notReady: live.filter((m) => !isReady(m)).length,
      });
    };
    controlPlaneMachines.addEventHandler({ onAdd: record, onUpdate: record, onDelete: record });
    controlPlaneMachines.start();
    await controlPlaneMachines.waitForSync();

    await createSimK3sCluster(client, {
      namespace: ns.name,
      name: CLUSTER,
      version: 'v1.34.1',
      controlPlaneReplicas: 3,
      workers: 2,
      k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'] } },
      workerConfig: { agentConfig: { nodeLabels: ['capstan.dev/pool=md-0'] } },
    });
    await create(RESOURCES.MachineHealthCheck, {
      metadata: { name: `${CLUSTER}-control-plane`, namespace: ns.name },
      spec: {
        clusterName: CLUSTER,
        selector: { matchLabels: { [LABELS.controlPlane]: '' } },
        checks: {
          nodeStartupTimeoutSeconds: 600,
          unhealthyNodeConditions: [
            { type: 'Ready', status: 'False', timeoutSeconds: 30 },
            { type: 'Ready', status: 'Unknown', timeoutSeconds: 30 },
          ],
        },
      },
    });
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, ns.name, CLUSTER);
    } finally {
      await controlPlaneMachines?.stop();
      await client?.close();
      await capstan?.stop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    }
  }, STEP_TIMEOUT_MS);

  it(
    'brings 3 control plane and 2 worker machines to Available, with 5 Ready nodes in the workload cluster',
    async () => {
      await until('the Cluster Available', async () => {
        const cluster = await client
          .resource<Cluster>(RESOURCES.Cluster)
          .get({ namespace: ns.name, name: CLUSTER });
        return getCondition(cluster.status?.conditions, 'Available')?.status === 'True';
      });
      const kcp = await settledAt(3, 'v1.34.1');
      expect(kcp.status?.initialization?.controlPlaneInitialized).toBe(true);
      const ready = await until('5 Ready nodes', async () => {
        const list = await nodes();
        return list.length === 5 && list.every(nodeReady) && list;
      });
      expect(ready.filter((n) => n.metadata?.labels?.['capstan.dev/pool'] === 'md-0')).toHaveLength(2);
      const machines = await client.resource<Machine>(RESOURCES.Machine).list({ namespace: ns.name });
      expect(ready.map((n) => n.spec?.providerID).sort()).toEqual(
        machines.items.map((m) => m.spec.providerID).sort(),
      );
      // Control plane machines joined one at a time: never two of them not Ready at once.
      expect(Math.max(...history.map((h) => h.notReady))).toBe(1);
      expect(Math.max(...history.map((h) => h.live))).toBe(3);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'scales the control plane 3 -> 5 -> 3 one machine at a time',
    async () => {
      const start = history.length;
      await kcps().mergePatch({ namespace: ns.name, name: KCP }, { spec: { replicas: 5 } });
      await settledAt(5, 'v1.34.1');
      expect(Math.max(...since(start).map((h) => h.notReady))).toBe(1);
      expect(Math.max(...since(start).map((h) => h.live))).toBe(5);

      const down = history.length;
      await kcps().mergePatch({ namespace: ns.name, name: KCP }, { spec: { replicas: 3 } });
      await settledAt(3, 'v1.34.1');
      expect(Math.max(...since(down).map((h) => h.deleting))).toBe(1);
      expect(Math.min(...since(down).map((h) => h.live - h.notReady))).toBeGreaterThanOrEqual(3);
      expect((await nodes()).filter(nodeReady)).toHaveLength(5);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'replaces every control plane machine one at a time on a version change',
    async () => {
      const start = history.length;
      const before = new Set(cpMachines().map((m) => m.metadata.name));
      await kcps().mergePatch({ namespace: ns.name, name: KCP }, { spec: { version: 'v1.34.2' } });
      await settledAt(3, 'v1.34.2');
      expect(cpMachines().filter((m) => before.has(m.metadata.name))).toHaveLength(0);
      const during = since(start);
      expect(Math.max(...during.map((h) => h.live))).toBe(4);
      expect(Math.max(...during.map((h) => h.deleting))).toBe(1);
      expect(Math.max(...during.map((h) => h.notReady))).toBe(1);
      const list = await until('the new control plane nodes Ready', async () => {
        const all = await nodes();
        return all.length === 5 && all.every(nodeReady) && all;
      });
      const names = new Set(cpMachines().map((m) => m.status?.nodeRef?.name));
      const versions = list
        .filter((n) => names.has(n.metadata?.name))
        .map((n) => n.status?.nodeInfo?.kubeletVersion);
      expect(versions).toEqual(['v1.34.2+k3s1', 'v1.34.2+k3s1', 'v1.34.2+k3s1']);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'replaces a dead control plane machine',
    async () => {
      const [victim] = cpMachines();
      const nodeName = victim!.status!.nodeRef!.name;
      // The host died: its Node is gone from the workload cluster and its kubelet never comes back.
      await kubectl('delete', 'node', nodeName);
      await until(
        'the dead machine remediated',
        () => !cpMachines().some((m) => m.metadata.name === victim!.metadata.name),
      );
      const kcp = await settledAt(3, 'v1.34.2');
      expect(kcp.status?.lastRemediation?.machine).toBe(victim!.metadata.name);
      const replacement = cpMachines().find(
        (m) => m.metadata.annotations?.['controlplane.capstan.dev/remediation-for'],
      );
      expect(replacement).toBeDefined();
      await until('5 Ready nodes again', async () => {
        const all = await nodes();
        return all.length === 5 && all.every(nodeReady);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'deletes the cluster and leaves nothing of it: Secrets, templates and the health check go with it',
    async () => {
      const { uid } = (await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace: ns.name, name: CLUSTER }))
        .metadata;
      await deleteClusterAndWait(client, ns.name, CLUSTER);
      const left = await waitForNoLeftovers(
        ns.kc,
        { namespace: ns.name, name: CLUSTER, uid: uid! },
        ALL_RESOURCES.filter((resource) => resource !== RESOURCES.Cluster),
        { timeoutMs: 60_000 },
      );
      expect(left).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );
});
