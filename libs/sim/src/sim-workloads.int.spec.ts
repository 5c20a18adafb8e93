import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KubeConfig,
  type V1DaemonSet,
  type V1Deployment,
  type V1Job,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { createKubeClient, NODES, PODS, type KubeClient, type ResourceType } from '@capstan/kube';
import { eventually, startLocalEnvironment, type LocalEnvironment } from '@capstan/testing';
import { pino } from 'pino';
import { ClusterBlueprint } from './cluster-blueprint.js';
import { clusterApiSpecFrom, nodeIdentityFrom, serverEndpointOf, simProviderID } from './host-plan.js';
import { simMachineOptionsFromEnv } from './options.js';
import { recordedProcessAlive } from './owned-process.js';
import { SIM_POD_ANNOTATIONS } from './pod-lifecycle.js';
import { SimRuntime } from './sim-runtime.js';
import { MIRROR_POD_ANNOTATION } from './static-pods.js';
import { WORKLOAD_CONTROLLERS } from './workload-controllers.js';

// Workloads on a dedicated sim cluster: the real kube-controller-manager and kube-scheduler the runtime starts next
// to the cluster's kube-apiserver, and the nodes' simulated kubelets running what gets bound to them.

const logger = pino({ level: 'silent' });
const TIMEOUT_MS = 90_000;

const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment', namespaced: true };
const JOBS: ResourceType = { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true };
const DAEMON_SETS: ResourceType = { group: 'apps', version: 'v1', plural: 'daemonsets', kind: 'DaemonSet', namespaced: true };

const isRunningReady = (pod: V1Pod) =>
  pod.status?.phase === 'Running' &&
  !pod.metadata?.deletionTimestamp &&
  pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Whether `ip` lies in the IPv4 `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const [network, bits] = cidr.split('/');
  const toInt = (address: string) => address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(network!) / size);
}

describe('SimRuntime workloads (dedicated cluster with controller manager, scheduler and kubelets)', () => {
  const namespace = `wl-${randomBytes(3).toString('hex')}`;
  let stateDir: string;
  let privateEnvironment: LocalEnvironment | undefined;
  let runtime: SimRuntime;
  let cluster: ClusterBlueprint;
  let workload: KubeClient;
  let clusterDir: string;
  /** What each node agent was started with, to start it again with faults. */
  const nodeSpecs = new Map<string, Parameters<SimRuntime['ensureNodeAgent']>[1]>();

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'capstan-sim-wl-'));
    let etcdUrl = process.env['CAPSTAN_TEST_ETCD_URL'];
    if (!etcdUrl) {
      privateEnvironment = await startLocalEnvironment();
      etcdUrl = privateEnvironment.etcdUrl;
    }
    runtime = new SimRuntime({
      options: { ...simMachineOptionsFromEnv({}), stateDir, etcdUrl, heartbeatSeconds: 1, nodeStatusSeconds: 2 },
      logger,
    });
    runtime.start();
    cluster = await ClusterBlueprint.create(namespace, 'busy');
    clusterDir = runtime.stateDir.clusterDir(namespace, 'busy');
    const server = cluster.parsed('init-server');
    await runtime.ensureClusterApi(clusterApiSpecFrom(server, cluster.ref), { fresh: true });
    const agent = cluster.parsed('agent');
    for (const [name, parsed] of [
      ['busy-cp-0', server],
      ['busy-md-0', agent],
      ['busy-md-1', agent],
    ] as const) {
      const spec = {
        identity: nodeIdentityFrom(parsed, { namespace, name, uid: randomUUID(), providerID: simProviderID(namespace, name) }, cluster.ref),
        faults: {},
        deletedByFault: false,
        serverEndpoint: serverEndpointOf(parsed, cluster.ref),
        token: parsed.token,
        onChange: () => undefined,
      };
      nodeSpecs.set(name, spec);
      runtime.ensureNodeAgent(`${namespace}/${name}`, spec);
    }
    const kc = new KubeConfig();
    kc.loadFromString(await cluster.adminKubeconfig());
    workload = createKubeClient(kc);
  }, TIMEOUT_MS);

  afterAll(async () => {
    await workload?.close();
    await runtime?.shutdown();
    await privateEnvironment?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const pods = async (labelSelector?: string) =>
    (await workload.resource<V1Pod>(PODS).list({ namespace: 'default', labelSelector })).items;

  it(
    'runs a Deployment: the scheduler spreads its pods over the nodes, which run them with IPs from their pod CIDRs',
    async () => {
      for (const component of WORKLOAD_CONTROLLERS) expect(recordedProcessAlive(clusterDir, component)).toBeDefined();
      const nodes = await eventually(
        async () => {
          const list = (await workload.resource<V1Node>(NODES).list()).items;
          return list.length === 3 && list.every((n) => n.spec?.podCIDR) && list;
        },
        { message: '3 nodes with pod CIDRs from the controller manager', timeoutMs: TIMEOUT_MS },
      );
      await workload.resource<V1Deployment>(DEPLOYMENTS).create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: 6,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
          },
        },
      });
      const running = await eventually(
        async () => {
          const list = await pods('app=web');
          return list.length === 6 && list.every(isRunningReady) && list;
        },
        { message: '6 web pods Running and Ready', timeoutMs: TIMEOUT_MS },
      );
      const cidrOf = new Map(nodes.map((n) => [n.metadata!.name!, n.spec!.podCIDR!]));
      for (const pod of running) {
        expect(inCidr(pod.status!.podIP!, cidrOf.get(pod.spec!.nodeName!)!)).toBe(true);
        expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
      }
      expect(new Set(running.map((p) => p.status!.podIP)).size).toBe(6);
      // The default scheduler spreads replicas of one owner over the nodes.
      expect(new Set(running.map((p) => p.spec!.nodeName)).size).toBe(3);
    },
    TIMEOUT_MS,
  );

  it(
    'completes a Job, and removes a deleted pod after its containers stopped',
    async () => {
      await workload.resource<V1Job>(JOBS).create({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'migrate', namespace: 'default' },
        spec: {
          template: {
            metadata: { annotations: { [SIM_POD_ANNOTATIONS.runSeconds]: '1' } },
            spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'busybox' }] },
          },
        },
      });
      await eventually(
        async () => {
          const job = await workload.resource<V1Job>(JOBS).get({
            namespace: 'default',
            name: 'migrate',
          });
          return job.status?.succeeded === 1;
        },
        { message: 'the Job succeeded', timeoutMs: TIMEOUT_MS },
      );

      const [victim] = await pods('app=web');
      await workload.resource(PODS).delete({ namespace: 'default', name: victim!.metadata!.name! });
      await eventually(
        async () => {
          const list = await pods('app=web');
          return (
            !list.some((p) => p.metadata?.uid === victim!.metadata!.uid) &&
            list.length === 6 &&
            list.every(isRunningReady)
          );
        },
        { message: 'the deleted pod gone and replaced by a running one', timeoutMs: TIMEOUT_MS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    "shows the server's control plane components as running mirror pods, and recreates one that is deleted",
    async () => {
      const mirrors = async () =>
        (await workload.resource<V1Pod>(PODS).list({ namespace: 'kube-system', labelSelector: 'tier=control-plane' }))
          .items;
      const names = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map((c) => `${c}-busy-cp-0`);
      const running = await eventually(
        async () => {
          const list = await mirrors();
          return list.length === 4 && list.every(isRunningReady) && list;
        },
        { message: 'four running mirror pods on the server node', timeoutMs: TIMEOUT_MS },
      );
      expect(running.map((p) => p.metadata!.name).sort()).toEqual(names);
      for (const pod of running) {
        expect(pod.spec?.nodeName).toBe('busy-cp-0');
        expect(pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION]).toBeDefined();
        expect(pod.status?.podIP).toBe(pod.status?.hostIP);
      }
      const victim = running.find((p) => p.metadata!.name === names[1])!;
      await workload.resource(PODS).delete({ namespace: 'kube-system', name: names[1]! });
      await eventually(
        async () => {
          const again = (await mirrors()).find((p) => p.metadata!.name === names[1]);
          return again !== undefined && again.metadata!.uid !== victim.metadata!.uid && isRunningReady(again);
        },
        { message: 'the deleted mirror pod recreated', timeoutMs: TIMEOUT_MS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'runs a DaemonSet pod on every node, the server included',
    async () => {
      await workload.resource<V1DaemonSet>(DAEMON_SETS).create({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'logs', namespace: 'default' },
        spec: {
          selector: { matchLabels: { app: 'logs' } },
          template: {
            metadata: { labels: { app: 'logs' } },
            spec: { containers: [{ name: 'fluent-bit', image: 'fluent/fluent-bit' }] },
          },
        },
      });
      const running = await eventually(
        async () => {
          const list = await pods('app=logs');
          return list.length === 3 && list.every(isRunningReady) && list;
        },
        { message: 'a running DaemonSet pod on each of the 3 nodes', timeoutMs: TIMEOUT_MS },
      );
      expect(new Set(running.map((p) => p.spec!.nodeName))).toEqual(new Set(['busy-cp-0', 'busy-md-0', 'busy-md-1']));
    },
    TIMEOUT_MS,
  );

  it(
    "leaves the pods of a node that stops answering to the controller manager, which evicts them; their ReplicaSet replaces them elsewhere",
    async () => {
      // Tolerate the unreachable taint for 2 s instead of the default 300 s, so the taint manager evicts them soon.
      await workload.resource<V1Deployment>(DEPLOYMENTS).create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api', namespace: 'default' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: {
              containers: [{ name: 'api', image: 'api:1' }],
              tolerations: [
                { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 },
              ],
            },
          },
        },
      });
      const before = await eventually(
        async () => {
          const list = await pods('app=api');
          return list.length === 3 && list.every(isRunningReady) && list;
        },
        { message: '3 api pods running', timeoutMs: TIMEOUT_MS },
      );
      const victimNode = 'busy-md-1';
      const stranded = before.filter((p) => p.spec?.nodeName === victimNode);
      runtime.ensureNodeAgent(`${namespace}/${victimNode}`, { ...nodeSpecs.get(victimNode)!, faults: { notReadyAfterSeconds: 0 } });
      const after = await eventually(
        async () => {
          const list = await pods('app=api');
          const live = list.filter(isRunningReady);
          const old = list.filter((p) => stranded.some((s) => s.metadata!.uid === p.metadata!.uid));
          return (
            live.length === 3 &&
            live.every((p) => p.spec?.nodeName !== victimNode) &&
            old.every((p) => p.metadata?.deletionTimestamp) && { live, old }
          );
        },
        { message: 'api pods evicted from the dead node and running elsewhere', timeoutMs: TIMEOUT_MS },
      );
      // Nothing runs the dead node's pods: they stay Terminating, and the node lifecycle controller marks them not
      // ready on its next pass, until the Node goes (then the pod garbage collector removes them).
      expect(after.old.length).toBe(stranded.length);
      await eventually(
        async () => {
          const old = (await pods('app=api')).filter((p) => stranded.some((s) => s.metadata!.uid === p.metadata!.uid));
          return old.every(
            (p) => p.metadata?.deletionTimestamp && p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False',
          );
        },
        { message: "the dead node's pods marked not ready and still terminating", timeoutMs: TIMEOUT_MS },
      );
      runtime.ensureNodeAgent(`${namespace}/${victimNode}`, { ...nodeSpecs.get(victimNode)!, faults: {} });
    },
    TIMEOUT_MS,
  );

  it('stops the controller manager and scheduler with the cluster API', async () => {
    await runtime.releaseClusterApi(`${namespace}/busy`);
    for (const component of WORKLOAD_CONTROLLERS) expect(recordedProcessAlive(clusterDir, component)).toBeUndefined();
  });
});
