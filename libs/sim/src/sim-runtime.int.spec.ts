import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthenticationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Node,
} from '@kubernetes/client-node';
import { isAlive, startLocalEnvironment, type LocalEnvironment, eventually } from '@capstan/testing';
import { pino } from 'pino';
import { ClusterBlueprint } from './cluster-blueprint.js';
import { clusterApiSpecFrom, nodeIdentityFrom, serverEndpointOf, simProviderID } from './host-plan.js';
import { simMachineOptionsFromEnv } from './options.js';
import { SimRuntime } from './sim-runtime.js';
import { isSimError } from './errors.js';
import { recordedProcessAlive, stopRecordedProcess } from './owned-process.js';
import { portIsFree } from './port-allocator.js';
import { WORKLOAD_CONTROLLERS } from './workload-controllers.js';

// The sim runtime on its own, against real kube-apiservers: a dedicated cluster served from rendered
// bootstrap data, nodes registering with the join token, a provider "killed" and its API server adopted,
// injected faults, and shared mode with two clusters behind one API server.

const logger = pino({ level: 'silent' });

async function admin(cluster: ClusterBlueprint): Promise<KubeConfig> {
  const kc = new KubeConfig();
  kc.loadFromString(await cluster.adminKubeconfig());
  return kc;
}

/** The names of the Nodes a watch from `resourceVersion` reports, in order, until it reports `until` (30 s at most). */
async function watchedNodeNames(kc: KubeConfig, resourceVersion: string, until: string): Promise<string[]> {
  const names: string[] = [];
  let request: AbortController | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no event for ${until} within 30 s (saw ${names.join(', ')})`)), 30_000);
    void new Watch(kc)
      .watch(
        '/api/v1/nodes',
        { resourceVersion },
        (_type: string, node: V1Node) => {
          names.push(node.metadata!.name!);
          if (node.metadata?.name === until) {
            clearTimeout(timer);
            resolve();
          }
        },
        () => undefined,
      )
      .then((controller) => {
        request = controller;
      }, reject);
  });
  try {
    await done;
  } finally {
    request?.abort();
  }
  return names;
}

describe('SimRuntime', () => {
  const namespace = `rt-${randomBytes(3).toString('hex')}`;
  let stateDir: string;
  let etcdUrl: string;
  let privateEnvironment: LocalEnvironment | undefined;
  const runtimes: SimRuntime[] = [];

  const newRuntime = (orphanGraceSeconds = 600, owns?: (clusterKey: string) => boolean, dir = stateDir) => {
    const runtime = new SimRuntime({
      sharding: owns ? { owns } : undefined,
      options: {
        ...simMachineOptionsFromEnv({}),
        stateDir: dir,
        etcdUrl,
        heartbeatSeconds: 1,
        nodeStatusSeconds: 2,
        orphanGraceSeconds,
      },
      logger,
    });
    runtime.start();
    runtimes.push(runtime);
    return runtime;
  };

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'capstan-sim-rt-'));
    const shared = process.env['CAPSTAN_TEST_ETCD_URL'];
    if (shared) etcdUrl = shared;
    else {
      privateEnvironment = await startLocalEnvironment();
      etcdUrl = privateEnvironment.etcdUrl;
    }
  });

  afterAll(async () => {
    for (const runtime of runtimes) await runtime.shutdown();
    await privateEnvironment?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const machine = (name: string) => ({
    namespace,
    name,
    uid: randomUUID(),
    providerID: simProviderID(namespace, name),
  });

  it('serves a dedicated cluster from its server bootstrap data and registers nodes with the join token', async () => {
    const runtime = newRuntime();
    const cluster = await ClusterBlueprint.create(namespace, 'alpha');
    const server = cluster.parsed('init-server');
    const { api, outcome } = await runtime.ensureClusterApi(clusterApiSpecFrom(server, cluster.ref), {
      fresh: true,
    });
    expect(outcome).toBe('started');

    const kc = await admin(cluster);
    const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(review.status?.userInfo?.username).toBe('kubernetes-admin');

    const worker = cluster.parsed('agent', {
      nodeLabels: ['tier=web'],
      nodeTaints: ['dedicated=web:NoSchedule'],
    });
    for (const [name, parsed] of [
      ['alpha-cp-0', server],
      ['alpha-md-0', worker],
    ] as const) {
      runtime.ensureNodeAgent(`${namespace}/${name}`, {
        identity: nodeIdentityFrom(parsed, machine(name), cluster.ref),
        faults: {},
        deletedByFault: false,
        serverEndpoint: serverEndpointOf(parsed, cluster.ref),
        token: parsed.token,
        onChange: () => undefined,
      });
    }
    const core = kc.makeApiClient(CoreV1Api);
    // Ready, and without the not-ready taint, which the API server adds at registration and the cluster's node
    // lifecycle controller (and the sim node itself) takes off once the node reports Ready.
    const nodes = await eventually(async () => {
      const list = await core.listNode();
      const settled = list.items.filter(
        (n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
          !n.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready'),
      );
      return settled.length === 2 ? list.items : undefined;
    });
    const cp = nodes.find((n) => n.metadata?.name === 'alpha-cp-0')!;
    const md = nodes.find((n) => n.metadata?.name === 'alpha-md-0')!;
    expect(cp.spec?.providerID).toBe(simProviderID(namespace, 'alpha-cp-0'));
    expect(cp.metadata?.labels?.['node-role.kubernetes.io/control-plane']).toBe('true');
    expect(md.metadata?.labels).toMatchObject({ tier: 'web', 'kubernetes.io/hostname': 'alpha-md-0' });
    expect(md.metadata?.labels?.['node-role.kubernetes.io/control-plane']).toBeUndefined();
    expect(md.spec?.taints).toEqual([{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }]);
    expect(md.status?.nodeInfo?.kubeletVersion).toBe('v1.34.1+k3s1');
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'alpha-md-0', namespace: 'kube-node-lease' });
    expect(lease.spec?.holderIdentity).toBe('alpha-md-0');
    expect(runtime.nodeAgent(`${namespace}/alpha-md-0`)?.status.phase).toBe('Registered');

    // A server of another cluster cannot join this one.
    const stranger = await ClusterBlueprint.create(namespace, 'alpha');
    const joining = stranger.parsed('join-server');
    const refused = await runtime
      .ensureClusterApi(clusterApiSpecFrom(joining, { ...stranger.ref, endpoint: cluster.ref.endpoint }), {
        fresh: false,
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isSimError(refused, 'JoinRejected')).toBe(true);

    // A node with another token is refused by the API server itself.
    const intruder = cluster.parsed('agent');
    runtime.ensureNodeAgent(`${namespace}/intruder`, {
      identity: nodeIdentityFrom(intruder, machine('intruder'), stranger.ref),
      faults: {},
      deletedByFault: false,
      serverEndpoint: cluster.ref.endpoint,
      token: 'not-the-cluster-token',
      onChange: () => undefined,
    });
    await eventually(async () => runtime.nodeAgent(`${namespace}/intruder`)?.status.phase === 'Rejected');

    // Conditions others report on the Node survive the node's own status posts (strategic merge, by type).
    await core.patchNodeStatus(
      {
        name: 'alpha-md-0',
        body: {
          status: {
            conditions: [
              { type: 'FrequentKernelPanic', status: 'True', reason: 'Test', message: 'set by a test' },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const posted = Date.now();
    const afterPost = await eventually(async () => {
      const node = await core.readNode({ name: 'alpha-md-0' });
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      return ready && new Date(ready.lastHeartbeatTime!).getTime() >= posted - 1000 ? node : undefined;
    });
    expect(afterPost.status?.conditions?.find((c) => c.type === 'FrequentKernelPanic')?.status).toBe('True');

    // Deleting a machine deletes its Node; releasing the cluster stops its API server.
    await runtime.removeNodeAgent(`${namespace}/alpha-md-0`, { deleteNode: true });
    await expect(core.readNode({ name: 'alpha-md-0' })).rejects.toMatchObject({ code: 404 });
    await runtime.releaseClusterApi(api.key);
    expect(await api.healthy()).toBe(false);
  });

  it('adopts the API server a killed provider left running, and plays injected faults', async () => {
    const first = newRuntime();
    const cluster = await ClusterBlueprint.create(namespace, 'beta');
    const server = cluster.parsed('init-server');
    await first.ensureClusterApi(clusterApiSpecFrom(server, cluster.ref), { fresh: true });
    const dir = first.stateDir.clusterDir(namespace, 'beta');
    const pid = recordedProcessAlive(dir, 'kube-apiserver')!.pid;

    // The first provider "dies": nothing is stopped. A new one on the same state dir takes over.
    const second = newRuntime();
    const { outcome } = await second.ensureClusterApi(clusterApiSpecFrom(server, cluster.ref), {
      fresh: false,
    });
    expect(outcome).toBe('adopted');
    expect(recordedProcessAlive(dir, 'kube-apiserver')?.pid).toBe(pid);

    const worker = cluster.parsed('agent');
    second.ensureNodeAgent(`${namespace}/beta-md-0`, {
      identity: nodeIdentityFrom(worker, machine('beta-md-0'), cluster.ref),
      faults: { notReadyAfterSeconds: 2, disappearsAfterSeconds: 6 },
      deletedByFault: false,
      serverEndpoint: serverEndpointOf(worker, cluster.ref),
      token: worker.token,
      onChange: () => undefined,
    });
    const core = (await admin(cluster)).makeApiClient(CoreV1Api);
    // The agent reports NotReady once both writes of the node lifecycle controller's part are done.
    await eventually(() => second.nodeAgent(`${namespace}/beta-md-0`)?.status.phase === 'NotReady');
    const notReady = await core.readNode({ name: 'beta-md-0' });
    expect(notReady.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
    });
    // The cluster's node lifecycle controller keeps the same taints on an unreachable node, in its own order.
    expect(notReady.spec?.taints?.map((t) => `${t.key}:${t.effect}`).sort()).toEqual([
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unreachable:NoSchedule',
    ]);
    await eventually(
      async () =>
        await core.readNode({ name: 'beta-md-0' }).then(
          () => false,
          (e: { code?: number }) => e.code === 404,
        ),
    );
    expect(second.nodeAgent(`${namespace}/beta-md-0`)?.status.phase).toBe('Deleted');

    await second.shutdown();
    expect(isAlive(pid)).toBe(false);
  });

  it('stops API servers a killed provider left that no machine claims, freeing their ports', async () => {
    const first = newRuntime();
    const cluster = await ClusterBlueprint.create(namespace, 'orphaned');
    await first.ensureClusterApi(clusterApiSpecFrom(cluster.parsed('init-server'), cluster.ref), {
      fresh: true,
    });
    const dir = first.stateDir.clusterDir(namespace, 'orphaned');
    const pids = ['kube-apiserver', ...WORKLOAD_CONTROLLERS].map((name) => recordedProcessAlive(dir, name)!.pid);
    // The first provider dies; the next one never hears of the cluster again (it was deleted meanwhile).
    newRuntime(1);
    await eventually(() => !pids.some(isAlive), {
      timeoutMs: 30_000,
      message: 'the orphaned API server, controller manager and scheduler stopped',
    });
    expect(await portIsFree('127.0.0.1', cluster.ref.endpoint.port)).toBe(true);
  });

  it('serves shared-mode clusters through their own endpoints and credentials from one API server', async () => {
    const runtime = newRuntime();
    const one = await ClusterBlueprint.create(namespace, 'shared-one', { mode: 'shared' });
    const two = await ClusterBlueprint.create(namespace, 'shared-two', { mode: 'shared' });
    for (const cluster of [one, two]) {
      const server = cluster.parsed('init-server');
      await runtime.ensureClusterApi(clusterApiSpecFrom(server, cluster.ref), { fresh: true });
      runtime.ensureNodeAgent(`${namespace}/${cluster.ref.clusterName}-cp`, {
        identity: nodeIdentityFrom(server, machine(`${cluster.ref.clusterName}-cp`), cluster.ref),
        faults: {},
        deletedByFault: false,
        serverEndpoint: cluster.ref.endpoint,
        token: server.token,
        onChange: () => undefined,
      });
    }
    for (const cluster of [one, two]) {
      const kc = await admin(cluster);
      const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      });
      expect(review.status?.userInfo).toMatchObject({
        username: 'kubernetes-admin',
        groups: expect.arrayContaining(['system:masters']),
      });
      const core = kc.makeApiClient(CoreV1Api);
      // Each endpoint lists its own cluster's Nodes only, though both live in the one shared server.
      const own = `${cluster.ref.clusterName}-cp`;
      await eventually(async () => (await core.listNode()).items.some((n) => n.metadata?.name === own));
      expect((await core.listNode()).items.map((n) => n.metadata?.name)).toEqual([own]);
      const servers = await core.listNode({ labelSelector: 'node-role.kubernetes.io/control-plane=true' });
      expect(servers.items.map((n) => n.metadata?.name)).toEqual([own]);
    }
    // A watch through one endpoint hears of that cluster's Nodes only: a Node of the other cluster that changes
    // says nothing to it.
    const oneCore = (await admin(one)).makeApiClient(CoreV1Api);
    const twoCore = (await admin(two)).makeApiClient(CoreV1Api);
    const from = (await oneCore.listNode()).metadata?.resourceVersion;
    await twoCore.patchNode(
      { name: 'shared-two-cp', body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await oneCore.patchNode(
      { name: 'shared-one-cp', body: [{ op: 'add', path: '/metadata/labels/touched', value: 'yes' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const seen = await watchedNodeNames(await admin(one), from!, 'shared-one-cp');
    expect(seen).toEqual(['shared-one-cp']);
    // A Node registered before the cluster labels existed drops out of its cluster's list; its kubelet, started
    // again, adopts it and labels it, and it is back.
    await twoCore.patchNode(
      { name: 'shared-two-cp', body: [{ op: 'remove', path: '/metadata/labels/sim.capstan.dev~1cluster-name' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    expect((await twoCore.listNode()).items).toEqual([]);
    const twoServer = two.parsed('init-server');
    await runtime.removeNodeAgent(`${namespace}/shared-two-cp`, { deleteNode: false });
    runtime.ensureNodeAgent(`${namespace}/shared-two-cp`, {
      identity: nodeIdentityFrom(twoServer, machine('shared-two-cp'), two.ref),
      faults: {},
      deletedByFault: false,
      serverEndpoint: two.ref.endpoint,
      token: twoServer.token,
      onChange: () => undefined,
    });
    await eventually(async () => (await twoCore.listNode()).items.map((n) => n.metadata?.name).join() === 'shared-two-cp', {
      message: 'the restarted kubelet labelled its Node again',
    });
    // One cluster's admin certificate means nothing at another cluster's endpoint.
    const wrong = await admin(one);
    wrong.clusters[0] = {
      ...wrong.clusters[0]!,
      server: `https://127.0.0.1:${two.ref.endpoint.port}`,
      caData: Buffer.from(two.certificates.ca.certPem).toString('base64'),
    };
    await expect(wrong.makeApiClient(CoreV1Api).listNode()).rejects.toMatchObject({ code: 401 });

    await runtime.removeNodeAgent(`${namespace}/shared-one-cp`, { deleteNode: true });
    await runtime.releaseClusterApi(`${namespace}/shared-one`);
    const core = (await admin(two)).makeApiClient(CoreV1Api);
    expect((await core.listNode()).items.map((n) => n.metadata?.name)).toEqual(['shared-two-cp']);
    await runtime.releaseClusterApi(`${namespace}/shared-two`);
    await expect(core.listNode()).rejects.toBeDefined();
  });

  it('speaks HTTP/2 at a shared-mode endpoint to clients that offer it: a watch and writes share one connection', async () => {
    const runtime = newRuntime();
    const cluster = await ClusterBlueprint.create(namespace, 'shared-h2', { mode: 'shared' });
    await runtime.ensureClusterApi(clusterApiSpecFrom(cluster.parsed('init-server'), cluster.ref), { fresh: true });
    const user = (await admin(cluster)).getCurrentUser()!;
    const session = connectHttp2(`https://127.0.0.1:${cluster.ref.endpoint.port}`, {
      ca: cluster.certificates.ca.certPem,
      cert: Buffer.from(user.certData!, 'base64'),
      key: Buffer.from(user.keyData!, 'base64'),
    });
    session.on('error', () => undefined);
    const name = `h2-${randomBytes(3).toString('hex')}`;
    try {
      await once(session, 'connect');
      expect(session.alpnProtocol).toBe('h2');
      const watch = session.request({ ':path': `/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3D${name}` });
      const [watchHeaders] = (await once(watch, 'response')) as [IncomingHttpHeaders];
      expect(watchHeaders[':status']).toBe(200);
      let events = '';
      watch.setEncoding('utf8').on('data', (chunk: string) => (events += chunk));
      // While the watch is open, a write goes over the same session and the watch sees it.
      const create = session.request({ ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', 'content-type': 'application/json' });
      create.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { at: 'h2' } }));
      const [createHeaders] = (await once(create, 'response')) as [IncomingHttpHeaders];
      create.resume();
      expect(createHeaders[':status']).toBe(201);
      await eventually(async () => events.includes('"type":"ADDED"') && events.includes(`"name":"${name}"`));
      watch.close();
      const remove = session.request({ ':method': 'DELETE', ':path': `/api/v1/namespaces/default/configmaps/${name}` });
      remove.end();
      const [removeHeaders] = (await once(remove, 'response')) as [IncomingHttpHeaders];
      remove.resume();
      expect(removeHeaders[':status']).toBe(200);
    } finally {
      session.close();
    }
    await runtime.releaseClusterApi(`${namespace}/shared-h2`);
  });

  it('moves the shared server to another port when its recorded one was taken while it was down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-sim-port-'));
    const cluster = await ClusterBlueprint.create(namespace, 'port-moved', { mode: 'shared' });
    const spec = clusterApiSpecFrom(cluster.parsed('init-server'), cluster.ref);
    const first = newRuntime(600, undefined, dir);
    await first.ensureClusterApi(spec, { fresh: true });
    await first.releaseClusterApi(`${namespace}/port-moved`);
    await first.shutdown();
    await stopRecordedProcess(join(dir, 'shared'), 'kube-apiserver');
    const statePort = () => (JSON.parse(readFileSync(join(dir, 'shared', 'state.json'), 'utf8')) as { port: number }).port;
    const taken = statePort();
    // Another process takes the port while no server runs (in the bench: the sim's own etcd, started later).
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(taken, '127.0.0.1', resolve));
    try {
      const second = newRuntime(600, undefined, dir);
      await second.ensureClusterApi(spec, { fresh: true });
      expect(statePort()).not.toBe(taken);
      const core = (await admin(cluster)).makeApiClient(CoreV1Api);
      await eventually(async () => Array.isArray((await core.listNamespace()).items));
      await second.releaseClusterApi(`${namespace}/port-moved`);
      await second.shutdown();
    } finally {
      squatter.close();
      await stopRecordedProcess(join(dir, 'shared'), 'kube-apiserver');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets sharded replicas on one host share the shared server and hand a cluster over', async () => {
    // Two replicas of the provider on one state dir, each owning one cluster; the shared server starts once.
    const dir = mkdtempSync(join(tmpdir(), 'capstan-sim-shard-'));
    const owner = new Map<string, 'a' | 'b'>([
      [`${namespace}/hand-one`, 'a'],
      [`${namespace}/hand-two`, 'b'],
    ]);
    const a = newRuntime(600, (key) => owner.get(key) === 'a', dir);
    const b = newRuntime(600, (key) => owner.get(key) === 'b', dir);
    try {
      const one = await ClusterBlueprint.create(namespace, 'hand-one', { mode: 'shared' });
      const two = await ClusterBlueprint.create(namespace, 'hand-two', { mode: 'shared' });
      const agentOf = (cluster: ClusterBlueprint) => {
        const server = cluster.parsed('init-server');
        return {
          identity: nodeIdentityFrom(server, machine(`${cluster.ref.clusterName}-cp`), cluster.ref),
          faults: {},
          deletedByFault: false,
          serverEndpoint: cluster.ref.endpoint,
          token: server.token,
          onChange: () => undefined,
        };
      };
      // Both start their cluster at the same moment: one starts the shared kube-apiserver, the other adopts it.
      await Promise.all([
        a.ensureClusterApi(clusterApiSpecFrom(one.parsed('init-server'), one.ref), { fresh: true }),
        b.ensureClusterApi(clusterApiSpecFrom(two.parsed('init-server'), two.ref), { fresh: true }),
      ]);
      a.ensureNodeAgent(`${namespace}/hand-one-cp`, agentOf(one));
      b.ensureNodeAgent(`${namespace}/hand-two-cp`, agentOf(two));
      const nodesOf = async (cluster: ClusterBlueprint) =>
        (await (await admin(cluster)).makeApiClient(CoreV1Api).listNode()).items.map((n) => n.metadata?.name);
      await eventually(
        async () =>
          (await nodesOf(one)).includes('hand-one-cp') && (await nodesOf(two)).includes('hand-two-cp'),
      );

      // hand-one moves from a to b: a closes its endpoint and stops heartbeating its node, b takes both over.
      owner.set(`${namespace}/hand-one`, 'b');
      const clusterOf = (machineKey: string) =>
        machineKey.includes('hand-one') ? `${namespace}/hand-one` : `${namespace}/hand-two`;
      await a.releaseClusters((key) => owner.get(key) === 'a', clusterOf);
      expect(a.clusterApi(`${namespace}/hand-one`)).toBeUndefined();
      expect(a.agentCount).toBe(0);
      expect(await portIsFree('127.0.0.1', one.ref.endpoint.port)).toBe(true);
      await b.ensureClusterApi(clusterApiSpecFrom(one.parsed('init-server'), one.ref), { fresh: false });
      b.ensureNodeAgent(`${namespace}/hand-one-cp`, agentOf(one));
      expect(await nodesOf(one)).toContain('hand-one-cp');

      // a stops for good: as a sharded replica it leaves the shared server to b, whose clusters keep answering.
      runtimes.splice(runtimes.indexOf(a), 1);
      await a.shutdown();
      expect(await nodesOf(two)).toContain('hand-two-cp');
      expect(await nodesOf(one)).toContain('hand-one-cp');
      // b heartbeats the node it took over: its Lease in kube-node-lease is renewed from b now.
      const leases = (await admin(one)).makeApiClient(CoordinationV1Api);
      const renewed = async () =>
        (
          await leases.readNamespacedLease({ name: 'hand-one-cp', namespace: 'kube-node-lease' })
        ).spec?.renewTime?.toString();
      const before = await renewed();
      await eventually(async () => (await renewed()) !== before);
      for (const key of [`${namespace}/hand-one`, `${namespace}/hand-two`]) await b.releaseClusterApi(key);
    } finally {
      for (const runtime of [a, b])
        if (runtimes.includes(runtime)) {
          runtimes.splice(runtimes.indexOf(runtime), 1);
          await runtime.shutdown();
        }
      // Sharded, the shared server outlives the replicas (the host's, stopped with the environment); stop it here.
      await stopRecordedProcess(join(dir, 'shared'), 'kube-apiserver');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
