import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { rendezvousOwner } from '@capstan/kube';
import {
  eventually,
  NODE_NAME,
  NODE_NETWORK,
  runDocker,
  serviceImageTag,
  mountsUnder,
} from '@capstan/testing';
import { deployCapstan, type DeployedCapstan } from './deployed-capstan.js';
import { memoryByService, PodMemorySampler, PodServices } from './pod-memory.js';

// Capstan as its users deploy it (docs/deploy.md): the service images built here from Debian's packages and the
// workspace, a real node (kubelet, kube-proxy, containerd, CoreDNS) in the management environment, `capstan init`
// without --local, and clusters provisioned with every controller in a pod: the services' own ServiceAccounts, the
// conversion webhook behind its Service, NATS in a StatefulSet on a volume, endpoints behind a Service.

const NS = 'capstan-system';
const STEP_MS = 8 * 60_000;
const figures: Record<string, string> = {};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

interface PodList {
  items: {
    metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
    spec: {
      nodeName?: string;
      containers: { name: string; securityContext?: { readOnlyRootFilesystem?: boolean } }[];
    };
    status: {
      phase?: string;
      podIP?: string;
      containerStatuses?: { ready: boolean; restartCount: number }[];
    };
  }[];
}

describe('Capstan deployed as its users deploy it', () => {
  let deployed: DeployedCapstan;
  let stopped = false;
  let memory: PodMemorySampler;
  let podServices: PodServices;
  const log = (line: string) => process.stderr.write(`[deploy] ${line}\n`);

  beforeAll(async () => {
    deployed = await deployCapstan(log);
    memory = new PodMemorySampler(1000);
    podServices = new PodServices((...args) => deployed.kubectl(...args));
    await podServices.refresh();
    podServices.start();
    figures['images built and saved'] = seconds(deployed.figures.imagesMs);
    figures['management cluster and real node up'] = seconds(deployed.figures.environmentMs);
    figures['capstan init until every service is Ready'] = seconds(deployed.figures.initMs);
  }, 20 * 60_000);

  afterAll(async () => {
    podServices?.stop();
    memory?.stop();
    if (deployed && !stopped) await deployed.stop();
    log(`figures: ${JSON.stringify(figures)}`);
    const out = process.env['CAPSTAN_DEPLOY_FIGURES'];
    if (out) writeFileSync(out, JSON.stringify(figures, null, 2));
  }, 120_000);

  const kubectlJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await deployed.kubectl(...args, '-o', 'json')) as T;
  const pods = (selector: string) => kubectlJson<PodList>('-n', NS, 'get', 'pods', '-l', selector);
  const serviceSelector = (service: string) => `app.kubernetes.io/name=capstan-${service}`;
  const condition = async (kind: string, namespace: string, name: string, type: string) =>
    (
      await deployed.kubectl(
        '-n',
        namespace,
        'get',
        kind,
        name,
        '-o',
        `jsonpath={.status.conditions[?(@.type=="${type}")].status}`,
      )
    ).trim();
  const available = (namespace: string, name: string, timeoutMs = STEP_MS) =>
    eventually(
      async () => (await condition('clusters.cluster.x-k8s.io', namespace, name, 'Available')) === 'True',
      {
        timeoutMs,
        intervalMs: 2000,
        message: `Cluster ${namespace}/${name} Available`,
      },
    );
  const createCluster = async (namespace: string, name: string, workers: number) => {
    const yaml = await deployed.capstan(
      'generate',
      'cluster',
      name,
      '--kubernetes-version',
      'v1.34.4',
      '--control-plane-machine-count',
      '1',
      '--worker-machine-count',
      String(workers),
      '-n',
      namespace,
    );
    const path = join(deployed.environment.workDir, `${namespace}-${name}.yaml`);
    writeFileSync(path, yaml);
    await deployed.kubectl('create', 'namespace', namespace).catch(() => undefined);
    await deployed.kubectl('apply', '-f', path);
  };
  const deleteCluster = async (namespace: string, name: string) => {
    await deployed.kubectl('-n', namespace, 'delete', 'clusters.cluster.x-k8s.io', name, '--wait=false');
    await eventually(
      async () =>
        (await deployed.kubectl('-n', namespace, 'get', 'clusters.cluster.x-k8s.io', '-o', 'name')).trim() ===
        '',
      {
        timeoutMs: STEP_MS,
        intervalMs: 2000,
        message: `Cluster ${namespace}/${name} gone`,
      },
    );
  };
  /** The Deployment has `replicas` pods, all of its current template, all Ready. */
  const rolledOut = async (deployment: string, replicas: number) => {
    await deployed.kubectl(
      '-n',
      NS,
      'rollout',
      'status',
      `deployment/capstan-${deployment}`,
      '--timeout=300s',
    );
    return eventually(
      async () => {
        const list = (await pods(serviceSelector(deployment))).items.filter(
          (p) => !p.metadata.deletionTimestamp,
        );
        return (
          list.length === replicas &&
          list.every((p) => p.status.containerStatuses?.every((c) => c.ready)) &&
          list
        );
      },
      { timeoutMs: 120_000, intervalMs: 1000, message: `${deployment} at ${replicas} ready pods` },
    );
  };
  /** A counter summed over a pod's /metrics (port 8080, served to the pod network without credentials). */
  const metric = async (podIp: string, name: string, labels: Record<string, string>) => {
    const text = await (
      await fetch(`http://${podIp}:8080/metrics`, { signal: AbortSignal.timeout(5000) })
    ).text();
    return text
      .split('\n')
      .filter(
        (line) =>
          line.startsWith(`${name}{`) &&
          Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)),
      )
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };

  /**
   * A GET to the dashboard's HTTPS port from the host. Each replica's certificate is its own self-signed one (deploy/
   * mounts none), so it is not verified here: what is checked is the answer.
   */
  const dashboardGet = (address: string, path: string, token?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpsRequest(
        {
          host: address,
          port: 8443,
          path,
          rejectUnauthorized: false,
          timeout: 10_000,
          headers: token ? { authorization: `Bearer ${token}` } : {},
        },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`GET ${path} from the dashboard timed out`)));
      request.on('error', reject);
      request.end();
    });

  it('runs NATS, the five services and the dashboard as pods of their own ServiceAccounts on the real node, each Ready, roots read-only', async () => {
    const all = await kubectlJson<PodList>('-n', NS, 'get', 'pods');
    const names = new Set(all.items.map((p) => p.metadata.labels?.['app.kubernetes.io/name']));
    for (const service of [
      'core',
      'cluster-provider',
      'machine-provider',
      'bootstrap-provider',
      'control-plane-provider',
      'dashboard',
      'nats',
    ]) {
      expect(names).toContain(`capstan-${service}`);
    }
    for (const pod of all.items) {
      expect(pod.spec.nodeName).toBe(NODE_NAME);
      expect(pod.status.phase).toBe('Running');
      expect(pod.status.containerStatuses?.every((c) => c.ready)).toBe(true);
      expect(pod.spec.containers.every((c) => c.securityContext?.readOnlyRootFilesystem === true)).toBe(true);
    }
    // NATS keeps its stream on the node's volume, bound through the StatefulSet's claim.
    expect(
      (
        await deployed.kubectl(
          '-n',
          NS,
          'get',
          'pvc',
          'data-capstan-nats-0',
          '-o',
          'jsonpath={.status.phase}',
        )
      ).trim(),
    ).toBe('Bound');
    // The images are the ones built here: deploy/'s names, NATS replaced with `capstan init --image`.
    const images = new Set(
      all.items.flatMap((p) => (p.spec.containers as { image?: string }[]).map((c) => c.image)),
    );
    expect(images).toContain(serviceImageTag('core'));
    expect(images).toContain(deployed.natsImage);
    for (const [service, bytes] of memoryByService(memory, podServices, true))
      figures[`memory at idle: ${service}`] = mib(bytes);
  });

  it('reaches the conversion webhook through its Service: a v1beta1 object is stored and read back as v1beta2', async () => {
    const crd = JSON.parse(
      await deployed.kubectl('get', 'crd', 'clusters.cluster.x-k8s.io', '-o', 'json'),
    ) as {
      spec: {
        conversion: {
          strategy: string;
          webhook?: { clientConfig?: { service?: { name: string; namespace: string } } };
        };
      };
    };
    expect(crd.spec.conversion.strategy).toBe('Webhook');
    expect(crd.spec.conversion.webhook?.clientConfig?.service).toMatchObject({
      name: 'capstan-core-webhook',
      namespace: NS,
    });
    await deployed.kubectl('create', 'namespace', 'conversion');
    const path = join(deployed.environment.workDir, 'v1beta1-cluster.yaml');
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Cluster',
        metadata: { name: 'converted', namespace: 'conversion' },
        spec: { paused: true, clusterNetwork: { pods: { cidrBlocks: ['10.244.0.0/16'] } } },
      }),
    );
    await deployed.kubectl('create', '-f', path);
    const stored = JSON.parse(
      await deployed.kubectl(
        '-n',
        'conversion',
        'get',
        'clusters.v1beta2.cluster.x-k8s.io',
        'converted',
        '-o',
        'json',
      ),
    ) as {
      apiVersion: string;
      spec: { paused?: boolean; clusterNetwork?: { pods?: { cidrBlocks?: string[] } } };
    };
    expect(stored.apiVersion).toBe('cluster.x-k8s.io/v1beta2');
    expect(stored.spec.paused).toBe(true);
    expect(stored.spec.clusterNetwork?.pods?.cidrBlocks).toEqual(['10.244.0.0/16']);
    const asV1beta1 = await deployed.kubectl(
      '-n',
      'conversion',
      'get',
      'clusters.v1beta1.cluster.x-k8s.io',
      'converted',
      '-o',
      'jsonpath={.apiVersion}',
    );
    expect(asV1beta1).toBe('cluster.x-k8s.io/v1beta1');
    await deployed.kubectl('delete', 'namespace', 'conversion', '--wait=false');
  });

  it('provisions a cluster from capstan generate cluster to Available with every controller in a pod', async () => {
    const started = Date.now();
    await createCluster('fleet', 'demo', 1);
    await available('fleet', 'demo');
    figures['cluster (1 server, 1 worker) to Available'] = seconds(Date.now() - started);
    // The workload API server answers through capstan-sim-endpoints, from the host as from the core's pod.
    const kubeconfig = await deployed.capstan('get', 'kubeconfig', 'demo', '-n', 'fleet');
    const path = join(deployed.environment.workDir, 'demo.kubeconfig');
    writeFileSync(path, kubeconfig, { mode: 0o600 });
    const nodes = await deployed.kubectl('--kubeconfig', path, 'get', 'nodes', '-o', 'name');
    expect(nodes.trim().split('\n')).toHaveLength(2);
  });

  it('serves the dashboard through its Service with its own least privilege, reading as the signed-in user', async () => {
    const started = Date.now();
    await rolledOut('dashboard', 2);
    const address = (
      await deployed.kubectl(
        '-n',
        NS,
        'get',
        'service',
        'capstan-dashboard',
        '-o',
        'jsonpath={.spec.clusterIP}',
      )
    ).trim();
    expect((await dashboardGet(address, '/dashboard/api/whoami')).status).toBe(401);
    // A viewer of the namespace `fleet` only, signed in with a token for the dashboard's audience.
    const viewer = join(deployed.environment.workDir, 'dashboard-viewer.json');
    const read = ['get', 'list', 'watch'];
    // One v1 List (kubectl reads a JSON file as one document).
    const items = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'viewer', namespace: 'fleet' } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'viewer', namespace: 'fleet' },
        rules: [
          {
            apiGroups: ['cluster.x-k8s.io'],
            resources: ['clusters', 'machinedeployments', 'machinesets', 'machines'],
            verbs: read,
          },
          { apiGroups: ['infrastructure.capstan.dev'], resources: ['simclusters'], verbs: read },
          { apiGroups: ['controlplane.capstan.dev'], resources: ['k3scontrolplanes'], verbs: read },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'viewer', namespace: 'fleet' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'viewer' },
        subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: 'fleet' }],
      },
    ];
    writeFileSync(viewer, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    await deployed.kubectl('apply', '-f', viewer);
    const token = (
      await deployed.kubectl(
        '-n',
        'fleet',
        'create',
        'token',
        'viewer',
        '--audience',
        'capstan-dashboard',
        '--duration',
        '10m',
      )
    ).trim();
    // TokenReview with the dashboard's own identity.
    const whoami = await dashboardGet(address, '/dashboard/api/whoami', token);
    expect(whoami).toMatchObject({ status: 200 });
    expect(JSON.parse(whoami.body)).toMatchObject({ username: 'system:serviceaccount:fleet:viewer' });
    // The fleet from its informer of every namespace's Clusters, filtered by SubjectAccessReviews to the viewer's.
    const fleet = await dashboardGet(address, '/dashboard/api/clusters', token);
    expect(fleet).toMatchObject({ status: 200 });
    const listed = (JSON.parse(fleet.body) as { items: { namespace: string; name: string }[] }).items;
    expect(listed.map((c) => `${c.namespace}/${c.name}`)).toEqual(['fleet/demo']);
    // The Cluster's tree, read impersonating the viewer (name, uid, groups): the dashboard itself may read none of it.
    const tree = await dashboardGet(address, '/dashboard/api/clusters/fleet/demo/tree', token);
    expect(tree).toMatchObject({ status: 200 });
    const rows = (JSON.parse(tree.body) as { rows: { name: string; status: string }[] }).rows;
    expect(rows[0]).toMatchObject({ name: 'Cluster fleet/demo', status: 'True' });
    for (const kind of ['K3sControlPlane', 'SimCluster', 'MachineDeployment', 'Machine'])
      expect(rows.map((r) => r.name).join('\n')).toMatch(new RegExp(`${kind} fleet/demo`));
    // And the API server judges as the viewer: no Secrets for them, so no kubeconfig.
    const kubeconfig = await dashboardGet(address, '/dashboard/api/clusters/fleet/demo/kubeconfig', token);
    expect(kubeconfig).toMatchObject({ status: 403 });
    expect((JSON.parse(kubeconfig.body) as { message: string }).message).toContain(
      '"system:serviceaccount:fleet:viewer" cannot get resource "secrets"',
    );
    figures['dashboard: sign-in, fleet, tree and a refusal through its Service'] = seconds(
      Date.now() - started,
    );
  });

  it('scales the core and the bootstrap-provider from 1 to 3 replicas, each replica working on clusters of its own', async () => {
    for (const service of ['core', 'bootstrap-provider']) {
      await deployed.kubectl('-n', NS, 'scale', `deployment/capstan-${service}`, '--replicas=1');
      await rolledOut(service, 1);
    }
    for (const service of ['core', 'bootstrap-provider']) {
      await deployed.kubectl('-n', NS, 'scale', `deployment/capstan-${service}`, '--replicas=3');
    }
    const core = await rolledOut('core', 3);
    const bootstrap = await rolledOut('bootstrap-provider', 3);
    // Cluster names such that rendezvous hashing gives every replica of both services at least one of them.
    const namespace = 'shards';
    const members = [core.map((p) => p.metadata.name), bootstrap.map((p) => p.metadata.name)];
    let names: string[] = [];
    for (let offset = 0; names.length === 0; offset++) {
      const candidate = [0, 1, 2].map((i) => `shard-${offset}-${i}`);
      const coversAll = members.every(
        (ids) => new Set(candidate.map((n) => rendezvousOwner(ids, `${namespace}/${n}`))).size === 3,
      );
      if (coversAll) names = candidate;
    }
    const started = Date.now();
    for (const name of names) await createCluster(namespace, name, 0);
    for (const name of names) await available(namespace, name);
    figures['3 clusters (1 server each) to Available, 3 replicas'] = seconds(Date.now() - started);
    // Every replica reconciled clusters: the core its Clusters, the bootstrap-provider its K3sConfigs.
    for (const pod of core) {
      expect(
        await metric(pod.status.podIP!, 'controller_runtime_reconcile_total', { controller: 'cluster' }),
      ).toBeGreaterThan(0);
    }
    for (const pod of bootstrap) {
      expect(
        await metric(pod.status.podIP!, 'controller_runtime_reconcile_total', { controller: 'k3sconfig' }),
      ).toBeGreaterThan(0);
    }
  });

  it('lets a drain evict one pod of a service at a time, and never the sim host (PodDisruptionBudgets)', async () => {
    const evict = async (pod: string) => {
      const body = join(deployed.environment.workDir, `evict-${pod}.json`);
      writeFileSync(
        body,
        JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NS } }),
      );
      return deployed
        .kubectl('create', '--raw', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, '-f', body)
        .then(() => 'evicted')
        .catch((error: { stderr?: string }) => error.stderr ?? String(error));
    };
    const core = (await pods(serviceSelector('core'))).items.filter((p) => !p.metadata.deletionTimestamp);
    expect(core.length).toBeGreaterThanOrEqual(2);
    expect(await evict(core[0]!.metadata.name)).toBe('evicted');
    // The first is gone and its replacement not yet Ready: a second eviction would take two at once.
    expect(await evict(core[1]!.metadata.name)).toMatch(/disruption budget/i);
    const host = (await pods(serviceSelector('machine-provider'))).items[0]!;
    expect(await evict(host.metadata.name)).toMatch(/disruption budget/i);
    await rolledOut('core', core.length);
  });

  it('converges while pods of every service but the sim host are deleted at random during provisioning', async () => {
    const started = Date.now();
    await createCluster('chaos', 'chaos', 1);
    const services = ['core', 'bootstrap-provider', 'control-plane-provider', 'cluster-provider'];
    const deleted: string[] = [];
    for (let round = 0; round < 4; round++) {
      await new Promise((resolve) => setTimeout(resolve, 8000));
      const service = services[Math.floor(Math.random() * services.length)]!;
      const live = (await pods(serviceSelector(service))).items.filter((p) => !p.metadata.deletionTimestamp);
      const victim = live[Math.floor(Math.random() * live.length)];
      if (!victim) continue;
      await deployed.kubectl('-n', NS, 'delete', 'pod', victim.metadata.name, '--wait=false');
      deleted.push(victim.metadata.name);
    }
    log(`deleted ${deleted.join(', ')}`);
    await available('chaos', 'chaos');
    figures['cluster to Available with 4 pods deleted on the way'] = seconds(Date.now() - started);
  });

  it("rolls one service's Deployment to a new image while the fleet is managed", async () => {
    const next = serviceImageTag('control-plane-provider', '0.1.0-rollout');
    await runDocker({
      socketPath: deployed.dockerSocket,
      args: ['tag', serviceImageTag('control-plane-provider'), next],
    });
    await deployed.importImages([next]);
    const started = Date.now();
    await deployed.kubectl(
      '-n',
      NS,
      'set',
      'image',
      'deployment/capstan-control-plane-provider',
      `manager=${next}`,
    );
    const rolled = await rolledOut('control-plane-provider', 2);
    figures['rolling update of the control-plane-provider'] = seconds(Date.now() - started);
    const images = JSON.parse(
      await deployed.kubectl('-n', NS, 'get', 'deployment', 'capstan-control-plane-provider', '-o', 'json'),
    ) as {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(images.spec.template.spec.containers[0]!.image).toBe(next);
    expect(rolled).toHaveLength(2);
    // The new pods do the control plane's work: scaling needs its controller (1 -> 3 servers would be slow; the
    // deletion below needs it to release every K3sControlPlane).
  });

  it('deletes every cluster, the control planes released by the rolled-out provider', async () => {
    const started = Date.now();
    await Promise.all([
      deleteCluster('fleet', 'demo'),
      deleteCluster('chaos', 'chaos'),
      ...['shards'].map(async (namespace) => {
        const names = (
          await deployed.kubectl('-n', namespace, 'get', 'clusters.cluster.x-k8s.io', '-o', 'name')
        )
          .trim()
          .split('\n')
          .filter(Boolean);
        await Promise.all(names.map((n) => deleteCluster(namespace, n.split('/')[1]!)));
      }),
    ]);
    figures['5 clusters deleted'] = seconds(Date.now() - started);
    for (const [service, bytes] of memoryByService(memory, podServices, false))
      figures[`memory peak: ${service}`] = mib(bytes);
    const machines = await deployed.kubectl('get', 'machines.cluster.x-k8s.io', '-A', '-o', 'name');
    expect(machines.trim()).toBe('');
  });

  it('leaves nothing behind on the host when the environment stops: no pod, link, namespace, mount or cgroup', async () => {
    const nodeDir = join(deployed.environment.workDir, 'node');
    await deployed.stop();
    stopped = true;
    expect(existsSync(`/sys/class/net/${NODE_NETWORK.bridge}`)).toBe(false);
    expect(existsSync(`/sys/class/net/${NODE_NETWORK.nodeLink}`)).toBe(false);
    expect(mountsUnder(nodeDir)).toEqual([]);
    expect(
      existsSync('/var/run/netns')
        ? readFileSync('/proc/self/mountinfo', 'utf8').includes('/run/netns/cni-')
        : false,
    ).toBe(false);
    expect(existsSync('/sys/fs/cgroup/pids/capstan-node') || existsSync('/sys/fs/cgroup/capstan-node')).toBe(
      false,
    );
  });
});
