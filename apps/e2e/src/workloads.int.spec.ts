import 'reflect-metadata';
import {
  KubeConfig,
  type V1DaemonSet,
  type V1Deployment,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1Secret,
} from '@kubernetes/client-node';
import { getCondition, LABELS, RESOURCES, type Machine, type MachineDeployment } from '@capstan/api';
import { createKubeClient, Informer, NODES, PODS, SECRETS, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually, startCapstan, type CapstanUnderTest, type TestNamespace } from '@capstan/testing';
import { createSimK3sCluster, deleteClusterAndWait, deploymentName, FAST_SIM_ENV, waitForClusterAvailable } from './sim-cluster-fixture.js';

// Workloads through Cluster API operations: a 1 + 3 sim cluster (real controller manager and scheduler, simulated
// kubelets) runs a 6-replica Deployment guarded by a PodDisruptionBudget; the MachineDeployment is scaled down and
// rolled out, and the drains that come with it must keep the budget at every moment.

const CLUSTER = 'apps';
const MD = deploymentName(CLUSTER);
const STEP_TIMEOUT_MS = 300_000;
const SAMPLE_MS = 200;
const REPLICAS = 6;
const MIN_AVAILABLE = 5;

const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true };
const DAEMON_SETS: ResourceType = { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true };
const PDBS: ResourceType = {
  group: 'policy',
  version: 'v1',
  plural: 'poddisruptionbudgets',
  kind: 'PodDisruptionBudget',
  namespaced: true,
};

const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false) =>
  eventually(probe, { message: what, timeoutMs: STEP_TIMEOUT_MS, intervalMs: 250 });

const runningReady = (pod: V1Pod) =>
  pod.status?.phase === 'Running' &&
  !pod.metadata?.deletionTimestamp &&
  pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

describe('workloads on a sim cluster through scale-down and rollout', () => {
  let ns: TestNamespace;
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let workload: KubeClient;
  /** Running and Ready web pods at each 200 ms sample, while sampling runs. */
  const samples: number[] = [];
  let sampling: NodeJS.Timeout | undefined;
  /** Every `Deleting` condition message the workers showed: what their drains said. */
  const drainMessages: string[] = [];
  let machines: Informer<Machine>;

  const webPods = async () =>
    (await workload.resource<V1Pod>(PODS).list({ namespace: 'default', labelSelector: 'app=web' })).items;
  const workers = async () =>
    (
      await client
        .resource<Machine>(RESOURCES.Machine)
        .list({ namespace: ns.name, labelSelector: `${LABELS.deploymentName}=${MD}` })
    ).items;

  /** Every worker Ready and none deleting, `count` of them, and all 6 pods Running on nodes that exist. */
  const settled = (count: number) =>
    until(`${count} workers and ${REPLICAS} pods Running on remaining nodes`, async () => {
      const machines = await workers();
      const ready = machines.filter(
        (m) => !m.metadata.deletionTimestamp && getCondition(m.status?.conditions, 'Ready')?.status === 'True',
      );
      if (machines.length !== count || ready.length !== count) return false;
      const nodes = new Set((await workload.resource<V1Node>(NODES).list()).items.map((n) => n.metadata!.name!));
      const pods = await webPods();
      return (
        pods.length === REPLICAS &&
        pods.every((p) => runningReady(p) && nodes.has(p.spec!.nodeName!)) && { machines, pods, nodes }
      );
    });

  beforeAll(async () => {
    capstan = await startCapstan('workloads', {
      env: FAST_SIM_ENV,
    });
    ns = capstan.namespace;
    client = createKubeClient(ns.kc);
    machines = new Informer<Machine>(client, RESOURCES.Machine, {
      namespace: ns.name,
      labelSelector: `${LABELS.deploymentName}=${MD}`,
    });
    const record = (m: Machine) => {
      const message = getCondition(m.status?.conditions, 'Deleting')?.message;
      if (message && drainMessages.at(-1) !== message) drainMessages.push(message);
    };
    machines.addEventHandler({ onAdd: record, onUpdate: (_, m) => record(m) });
    machines.start();
    await createSimK3sCluster(client, {
      namespace: ns.name,
      name: CLUSTER,
      version: 'v1.34.1',
      controlPlaneReplicas: 1,
      workers: 3,
    });
    await waitForClusterAvailable(client, ns.name, CLUSTER, STEP_TIMEOUT_MS);
    const secret = await client.resource<V1Secret>(SECRETS).get({ namespace: ns.name, name: `${CLUSTER}-kubeconfig` });
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
    workload = createKubeClient(kc);
  }, STEP_TIMEOUT_MS);

  afterAll(async () => {
    clearInterval(sampling);
    try {
      if (client) await deleteClusterAndWait(client, ns.name, CLUSTER);
    } finally {
      await workload?.close();
      await machines?.stop();
      await client?.close();
      await capstan?.stop();
    }
  }, STEP_TIMEOUT_MS);

  it(
    `runs ${REPLICAS} replicas with a budget of minAvailable ${MIN_AVAILABLE}`,
    async () => {
      await workload.resource<V1Deployment>(DEPLOYMENTS).create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
          },
        },
      });
      // A DaemonSet pod on every node: drains must leave it (it would come straight back) and still finish.
      await workload.resource<V1DaemonSet>(DAEMON_SETS).create({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'node-logs', namespace: 'default' },
        spec: {
          selector: { matchLabels: { app: 'node-logs' } },
          template: {
            metadata: { labels: { app: 'node-logs' } },
            spec: { containers: [{ name: 'fluent-bit', image: 'fluent/fluent-bit:3' }] },
          },
        },
      });
      await workload.resource<V1PodDisruptionBudget>(PDBS).create({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { minAvailable: MIN_AVAILABLE, selector: { matchLabels: { app: 'web' } } },
      });
      const { pods } = await settled(3);
      // Spread by the real scheduler over the control plane node and the three workers.
      expect(new Set(pods.map((p) => p.spec!.nodeName)).size).toBeGreaterThanOrEqual(3);
      await until('the budget computed by the disruption controller', async () => {
        const pdb = await workload
          .resource<V1PodDisruptionBudget>(PDBS)
          .get({ namespace: 'default', name: 'web' });
        return pdb.status?.currentHealthy === REPLICAS && pdb.status.disruptionsAllowed === 1;
      });
      sampling = setInterval(() => {
        webPods().then(
          (list) => samples.push(list.filter(runningReady).length),
          () => undefined,
        );
      }, SAMPLE_MS);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'scales the MachineDeployment 3 -> 2: the drained node\'s pods move, never fewer than 5 running',
    async () => {
      const before = new Set((await workers()).map((m) => m.metadata.name));
      await client
        .resource<MachineDeployment>(RESOURCES.MachineDeployment)
        .mergePatch({ namespace: ns.name, name: MD }, { spec: { replicas: 2 } });
      const { machines, pods, nodes } = await settled(2);
      expect(machines.every((m) => before.has(m.metadata.name))).toBe(true);
      expect(nodes.size).toBe(3);
      expect(pods.every((p) => nodes.has(p.spec!.nodeName!))).toBe(true);
      expect(samples.length).toBeGreaterThan(0);
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(MIN_AVAILABLE);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'rolls the MachineDeployment out: every worker replaced, every pod ends Running on a remaining node, never fewer than 5',
    async () => {
      const before = new Set((await workers()).map((m) => m.metadata.name));
      const start = samples.length;
      await client
        .resource<MachineDeployment>(RESOURCES.MachineDeployment)
        .mergePatch({ namespace: ns.name, name: MD }, { spec: { rollout: { after: new Date().toISOString() } } });
      const { machines, pods, nodes } = await until('both workers replaced and settled', async () => {
        const result = await settled(2);
        return result.machines.every((m) => !before.has(m.metadata.name)) && result;
      });
      clearInterval(sampling);
      expect(machines).toHaveLength(2);
      const machineNodes = new Set(machines.map((m) => m.status?.nodeRef?.name));
      // Pods left the replaced workers: each runs on the control plane node or a new worker.
      expect(pods.every((p) => nodes.has(p.spec!.nodeName!))).toBe(true);
      expect([...nodes].filter((n) => machineNodes.has(n))).toHaveLength(2);
      const during = samples.slice(start);
      expect(during.length).toBeGreaterThan(10);
      expect(Math.min(...during)).toBeGreaterThanOrEqual(MIN_AVAILABLE);
      // The budget did refuse evictions on the way (two pods on one node), and the drains waited for it.
      expect(drainMessages.some((m) => m.includes('disruption budget'))).toBe(true);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'keeps retrying an eviction the budget refuses until nodeDrainTimeoutSeconds, then deletes the machine',
    async () => {
      const drainTimeoutSeconds = 10;
      await workload
        .resource(PDBS)
        .mergePatch({ namespace: 'default', name: 'web' }, { spec: { minAvailable: REPLICAS } });
      await until('the budget allowing no disruption', async () => {
        const pdb = await workload
          .resource<V1PodDisruptionBudget>(PDBS)
          .get({ namespace: 'default', name: 'web' });
        return pdb.status?.observedGeneration === 2 && pdb.status.disruptionsAllowed === 0;
      });
      // A deletion timeout is taken by the Machines in place (no rollout).
      await client.resource<MachineDeployment>(RESOURCES.MachineDeployment).mergePatch(
        { namespace: ns.name, name: MD },
        { spec: { template: { spec: { deletion: { nodeDrainTimeoutSeconds: drainTimeoutSeconds } } } } },
      );
      await until('the workers took the drain timeout', async () =>
        (await workers()).every((m) => m.spec.deletion?.nodeDrainTimeoutSeconds === drainTimeoutSeconds),
      );
      const busy = await until('a worker running web pods', async () => {
        const pods = await webPods();
        return (await workers()).find((m) => pods.some((p) => p.spec?.nodeName === m.status?.nodeRef?.name));
      });
      await client.resource<Machine>(RESOURCES.Machine).mergePatch(
        { namespace: ns.name, name: busy.metadata.name! },
        { metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } } },
      );
      const blockedFrom = drainMessages.length;
      const scaledAt = Date.now();
      await client
        .resource<MachineDeployment>(RESOURCES.MachineDeployment)
        .mergePatch({ namespace: ns.name, name: MD }, { spec: { replicas: 1 } });
      await until('the busy worker gone', async () => !(await workers()).some((m) => m.metadata.uid === busy.metadata.uid));
      const elapsed = (Date.now() - scaledAt) / 1000;
      // It waited for the budget until the timeout: refused evictions in the meantime, nothing deleted early.
      expect(drainMessages.slice(blockedFrom).some((m) => m.includes('disruption budget'))).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(drainTimeoutSeconds);
      // The pods of the deleted node come back through their ReplicaSet on the nodes that remain.
      await settled(1);
    },
    STEP_TIMEOUT_MS,
  );
});
