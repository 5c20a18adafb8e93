import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, AppsV1Api } from '@kubernetes/client-node';
import { ManifestApplier, type Manifest } from '@capstan/manifests';
import { resolveKubeComponent } from './binaries.js';
import { startContainerd, stopContainerShims, type Containerd } from './containerd-runtime.js';
import { TestEnvironmentError } from './errors.js';
import { renderKubeconfig } from './kubeconfig.js';
import { clusterDnsManifests } from './node-dns.js';
import { NODE_NETWORK, removeNodeNetwork, unmountUnder } from './node-network.js';
import { freePort } from './ports.js';
import { isAlive, startProcess, stopPid, waitUntilReady, type ManagedProcess } from './processes.js';
import { cacheRoot } from './repo.js';

/** The node's name: one real node per host. */
export const NODE_NAME = 'capstan-node';

/** The cgroup (in every hierarchy) that holds every pod of the node, so a teardown finds each container process. */
const NODE_CGROUP = 'capstan-node';

/** A static token the API server accepts for one of the node's components (the kubelet, kube-proxy). */
export interface NodeComponentToken {
  component: 'kubelet' | 'kube-proxy';
  user: string;
  groups: string[];
  token: string;
}

/** Fresh credentials for the node's kubelet (a node identity, for the Node authorizer) and kube-proxy. */
export function nodeComponentTokens(): NodeComponentToken[] {
  const token = () => randomBytes(24).toString('hex');
  return [
    { component: 'kubelet', user: `system:node:${NODE_NAME}`, groups: ['system:nodes'], token: token() },
    // Bound to system:node-proxier by the API server's bootstrap RBAC.
    { component: 'kube-proxy', user: 'system:kube-proxy', groups: [], token: token() },
  ];
}

export function nodeWorkDir(environmentWorkDir: string): string {
  return join(environmentWorkDir, 'node');
}

function lockPath(): string {
  const dir = join(cacheRoot(), 'run');
  mkdirSync(dir, { recursive: true });
  return join(dir, 'node.lock');
}

/**
 * One real node per host (its addresses and names are fixed). A lock left by a run that was killed is taken over after
 * its leftovers (pods, mounts, network) are cleaned up; a live holder is an error naming it. The holder is the process
 * that started the node, or the node's kubelet for a node that outlives it (`npm run env:up -- --node`).
 */
export async function acquireNodeLock(): Promise<{ release(): void }> {
  const path = lockPath();
  if (existsSync(path)) {
    const held = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; dir: string };
    if (held.pid !== process.pid && isAlive(held.pid)) {
      throw new TestEnvironmentError(
        `a real node already runs on this host (process ${held.pid}, ${held.dir})`,
        { pid: held.pid },
      );
    }
    if (held.dir) {
      await removeNodeLeftovers(held.dir);
      rmSync(held.dir, { recursive: true, force: true });
    }
  }
  writeFileSync(path, JSON.stringify({ pid: process.pid, dir: '' }));
  return {
    release: () => rmSync(path, { force: true }),
  };
}

function recordNodeOwner(dir: string, pid = process.pid): void {
  writeFileSync(lockPath(), JSON.stringify({ pid, dir }));
}

/**
 * Stops a node that outlived the process that started it (`npm run env:down`), after its recorded processes: as for a
 * killed run, then the lock is freed.
 */
export async function stopDetachedNode(dir: string): Promise<void> {
  await removeNodeLeftovers(dir);
  rmSync(lockPath(), { force: true });
}

/**
 * Removes what a node leaves on the host once its kubelet, kube-proxy and containerd are stopped (or were killed with a
 * run): kube-proxy's and the kubelet's rules, every process in the node's cgroup, the container shims, mounts under its
 * folder, log links, its network and cgroups. The one teardown of every path: a stop, a failed start, a reaped run,
 * env:down. Idempotent.
 */
export async function removeNodeLeftovers(dir: string): Promise<void> {
  try {
    // Bounded: a kube-proxy that cannot clean up within 30 s leaves rules that the next node's kube-proxy replaces.
    execFileSync(resolveKubeComponent('kube-proxy'), ['--cleanup'], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    /* not built, or nothing to clean */
  }
  removeKubeletChains();
  killNodeCgroup();
  await stopContainerShims(join(dir, 'containerd', 'containerd.sock'));
  unmountUnder(dir);
  removeContainerLogLinks(dir);
  removeNodeNetwork();
  removeNodeCgroup();
}

/** The kubelet links each container's log into /var/log/containers (a fixed folder); remove the links into `dir`. */
function removeContainerLogLinks(dir: string): void {
  const links = '/var/log/containers';
  if (!existsSync(links)) return;
  for (const name of readdirSync(links)) {
    const path = join(links, name);
    try {
      if (readlinkSync(path).startsWith(dir)) rmSync(path, { force: true });
    } catch {
      /* not a link, or gone */
    }
  }
}

/** The node cgroup's folder in each hierarchy (cgroup v1: one per controller; v2: one). */
function nodeCgroupDirs(): string[] {
  const root = '/sys/fs/cgroup';
  if (existsSync(join(root, 'cgroup.controllers'))) return [join(root, NODE_CGROUP)];
  return readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'cgroup.procs')))
    .map((name) => join(root, name, NODE_CGROUP));
}

function cgroupTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const children = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => cgroupTree(join(dir, entry.name)));
  return [...children, dir];
}

function killNodeCgroup(): void {
  for (const dir of nodeCgroupDirs()) {
    for (const group of cgroupTree(dir)) {
      let pids: string[] = [];
      try {
        pids = readFileSync(join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      } catch {
        continue;
      }
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }
}

function removeNodeCgroup(): void {
  for (const dir of nodeCgroupDirs()) {
    for (const group of cgroupTree(dir)) {
      try {
        rmdirSync(group);
      } catch {
        /* still has a dying process, or already gone */
      }
    }
  }
}

function createNodeCgroup(): void {
  for (const dir of nodeCgroupDirs()) mkdirSync(dir, { recursive: true });
}

export interface KubeletNode {
  name: string;
  ip: string;
  containerd: Containerd;
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

export interface StartKubeletNodeOptions {
  dir: string;
  apiServerUrl: string;
  /** The API server's CA (base64 PEM). */
  caData: string;
  credentials: NodeComponentToken[];
  /** For installing the cluster DNS and waiting on the node. */
  adminKubeconfig: string;
  /** `docker save` archives to import before any pod starts (the sandbox image and CoreDNS at least). */
  imageArchives: string[];
  log: (line: string) => void;
  track: (process: ManagedProcess) => ManagedProcess;
  /** The node outlives this process (`npm run env:up -- --node`): its kubelet then holds the node lock. */
  detached?: boolean;
}

function kubeconfigFor(options: StartKubeletNodeOptions, component: NodeComponentToken['component']): string {
  const credential = options.credentials.find((c) => c.component === component);
  if (!credential)
    throw new TestEnvironmentError(`no API server credential for the node's ${component}`, { component });
  return renderKubeconfig({
    clusterName: 'capstan-test',
    server: options.apiServerUrl,
    caData: options.caData,
    user: { token: credential.token },
  });
}

/**
 * Starts a real node against the management API server: the project's own containerd (runc, CNI bridge), a kubelet
 * and kube-proxy built from the pinned Kubernetes module, then the cluster DNS; resolves once the node is Ready and
 * DNS answers. Every pod runs in the node's own cgroup, on the node's own bridge and addresses.
 */
export async function startKubeletNode(options: StartKubeletNodeOptions): Promise<KubeletNode> {
  const { dir, log } = options;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  recordNodeOwner(dir);
  createNodeCgroup();
  const processes: ManagedProcess[] = [];
  const track = (p: ManagedProcess) => {
    processes.push(p);
    return options.track(p);
  };
  log('starting containerd for the real node');
  const containerd = await startContainerd({
    dir: join(dir, 'containerd'),
    track,
    detached: options.detached,
  });
  for (const archive of options.imageArchives) await containerd.importImages(archive);

  const kubeletDir = join(dir, 'kubelet');
  mkdirSync(kubeletDir, { recursive: true });
  const kubeletKubeconfig = join(kubeletDir, 'kubeconfig');
  writeFileSync(kubeletKubeconfig, kubeconfigFor(options, 'kubelet'), { mode: 0o600 });
  const [kubeletPort, kubeletHealthzPort, proxyHealthzPort, proxyMetricsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const kubeletConfig = join(kubeletDir, 'config.yaml');
  writeFileSync(
    kubeletConfig,
    JSON.stringify(kubeletConfiguration(kubeletDir, containerd.endpoint, kubeletPort!, kubeletHealthzPort!)),
  );
  log('starting the kubelet');
  const kubelet = track(
    startProcess({
      name: 'kubelet',
      command: resolveKubeComponent('kubelet', log),
      args: [
        `--config=${kubeletConfig}`,
        `--kubeconfig=${kubeletKubeconfig}`,
        `--root-dir=${join(kubeletDir, 'root')}`,
        `--cert-dir=${join(kubeletDir, 'pki')}`,
        `--node-ip=${NODE_NETWORK.nodeIp}`,
        `--hostname-override=${NODE_NAME}`,
        '--v=1',
      ],
      logFile: join(dir, 'kubelet.log'),
      detached: options.detached,
    }),
  );
  if (options.detached) recordNodeOwner(dir, kubelet.pid);

  const proxyDir = join(dir, 'kube-proxy');
  mkdirSync(proxyDir, { recursive: true });
  const proxyKubeconfig = join(proxyDir, 'kubeconfig');
  writeFileSync(proxyKubeconfig, kubeconfigFor(options, 'kube-proxy'), { mode: 0o600 });
  const proxyConfig = join(proxyDir, 'config.yaml');
  writeFileSync(
    proxyConfig,
    JSON.stringify(kubeProxyConfiguration(proxyKubeconfig, proxyHealthzPort!, proxyMetricsPort!)),
  );
  const kubeProxy = resolveKubeComponent('kube-proxy', log);
  log('starting kube-proxy');
  const proxy = track(
    startProcess({
      name: 'kube-proxy',
      command: kubeProxy,
      args: [`--config=${proxyConfig}`, '--v=1'],
      logFile: join(dir, 'kube-proxy.log'),
      detached: options.detached,
    }),
  );

  const kc = new KubeConfig();
  kc.loadFromString(options.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  await waitUntilReady(
    kubelet,
    'the real node (kubelet)',
    async () => {
      const node = await core.readNode({ name: NODE_NAME });
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    120_000,
  );
  await waitUntilReady(
    proxy,
    'kube-proxy',
    async () => (await fetch(`http://127.0.0.1:${proxyHealthzPort}/healthz`)).ok,
    60_000,
  );

  log('installing the cluster DNS (CoreDNS)');
  const applier = new ManifestApplier(kc);
  for (const manifest of clusterDnsManifests()) {
    await applier.apply(manifest as unknown as Manifest, { fieldManager: 'capstan-test-node' });
  }
  const apps = kc.makeApiClient(AppsV1Api);
  await waitUntilReady(
    undefined,
    'the cluster DNS (CoreDNS)',
    async () =>
      ((await apps.readNamespacedDeployment({ name: 'coredns', namespace: 'kube-system' })).status
        ?.availableReplicas ?? 0) >= 1,
    120_000,
  );

  await createLocalVolumes(core, join(dir, 'volumes'));

  const stop = async () => {
    await stopPid(kubelet.pid, 10_000);
    await stopPid(proxy.pid, 5000);
    await containerd.stop();
    await removeNodeLeftovers(dir);
  };
  return { name: NODE_NAME, ip: NODE_NETWORK.nodeIp, containerd, processes, stop };
}

/** How many volumes the node offers, and their size: a StatefulSet's claims (deploy/'s NATS) bind to them. */
const LOCAL_VOLUMES = 3;
const LOCAL_VOLUME_SIZE = '10Gi';

/**
 * The node's storage, as PersistentVolumes of no storage class (what a claim without a class binds to) on folders under
 * the node's own folder; they go with the node. The folders are world-writable because a hostPath volume ignores a
 * pod's fsGroup, and the pods under test run as their own non-root users.
 */
async function createLocalVolumes(core: CoreV1Api, dir: string): Promise<void> {
  for (let index = 0; index < LOCAL_VOLUMES; index++) {
    const path = join(dir, `pv-${index}`);
    mkdirSync(path, { recursive: true });
    chmodSync(path, 0o777);
    await core.createPersistentVolume({
      body: {
        metadata: { name: `${NODE_NAME}-pv-${index}`, labels: { 'capstan.dev/node': NODE_NAME } },
        spec: {
          capacity: { storage: LOCAL_VOLUME_SIZE },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path, type: 'Directory' },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE_NAME] }],
                },
              ],
            },
          },
        },
      },
    });
  }
}

/** The chains the kubelet adds to the host's filter and mangle tables whatever its configuration (KUBE-FIREWALL drops
 * martian traffic to 127/8, the canaries watch for a flush); they outlive it. */
function removeKubeletChains(): void {
  for (const command of ['iptables', 'ip6tables']) {
    const run = (args: string[]) => {
      try {
        execFileSync(command, args, { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    };
    for (const [table, chain, parents] of [
      ['filter', 'KUBE-FIREWALL', ['INPUT', 'OUTPUT']],
      ['filter', 'KUBE-KUBELET-CANARY', []],
      ['mangle', 'KUBE-KUBELET-CANARY', []],
      ['nat', 'KUBE-KUBELET-CANARY', []],
    ] as const) {
      for (const parent of parents) while (run(['-t', table, '-D', parent, '-j', chain]));
      if (run(['-t', table, '-F', chain])) run(['-t', table, '-X', chain]);
    }
  }
}

/**
 * The kubelet's configuration for a node inside a container: cgroupfs under the node's own cgroup, no swap check, a
 * kubelet API nobody can call anonymously, image garbage collection off (no registry to pull an image back from), and
 * eviction thresholds low enough for a shared disk.
 */
function kubeletConfiguration(
  kubeletDir: string,
  runtimeEndpoint: string,
  port: number,
  healthzPort: number,
): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_NETWORK.nodeIp,
    port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: runtimeEndpoint,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${NODE_CGROUP}`,
    cgroupsPerQOS: true,
    failSwapOn: false,
    failCgroupV1: false,
    clusterDNS: [NODE_NETWORK.dnsServiceIp],
    clusterDomain: NODE_NETWORK.clusterDomain,
    resolvConf: '',
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    serializeImagePulls: false,
    registerNode: true,
    maxPods: 110,
    protectKernelDefaults: false,
    makeIPTablesUtilChains: false,
    // Under the node's folder, not the host's /var/log/pods, so nothing outlives the node (its /var/log/containers
    // links are removed with it: that folder is fixed in the kubelet).
    podLogsDir: join(kubeletDir, 'pod-logs'),
  };
}

/**
 * kube-proxy in iptables mode on the node's addresses only: masquerading every Service connection keeps replies on the
 * routed path when a pod reaches a pod on the same bridge, and it leaves conntrack sysctls alone (not writable here).
 */
function kubeProxyConfiguration(
  kubeconfig: string,
  healthzPort: number,
  metricsPort: number,
): Record<string, unknown> {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    mode: 'iptables',
    clusterCIDR: NODE_NETWORK.podSubnet,
    hostnameOverride: NODE_NAME,
    bindAddress: NODE_NETWORK.nodeIp,
    healthzBindAddress: `127.0.0.1:${healthzPort}`,
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    nodePortAddresses: [`${NODE_NETWORK.nodeIp}/32`],
    iptables: { masqueradeAll: true },
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}
