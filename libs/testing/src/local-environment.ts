import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  resolveControlPlaneBinaries,
  resolveNatsServer,
  type ControlPlaneBinaries,
  resolveKubeComponent,
} from './binaries.js';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { TestEnvironmentError } from './errors.js';
import {
  acquireNodeLock,
  nodeComponentTokens,
  nodeWorkDir,
  startKubeletNode,
  removeNodeLeftovers,
  type KubeletNode,
  type NodeComponentToken,
} from './kubelet-node.js';
import { createNodeNetwork, NODE_NETWORK } from './node-network.js';
import { writeWebhookClientCredentials } from './webhook-client-credentials.js';
import { renderKubeconfig } from './kubeconfig.js';
import { readSelfSignedServingCa } from './self-signed-serving-ca.js';
import { freePort, PORT_START_ATTEMPTS, retryWhilePortTaken } from './ports.js';
import { stopRecordedSimProcesses } from './local-services.js';
import { startProcess, stopPid, waitUntilReady, type ManagedProcess } from './processes.js';
import { forgetProcesses, recordProcesses, reapOrphans } from './reaper.js';
import { connect as natsConnect } from './nats-probe.js';

export interface LocalEnvironmentOptions {
  /** Keep the processes running after this Node process exits (for `npm run env:up`). */
  detached?: boolean;
  /** Where to put data, certificates and logs; a new temp dir by default (removed by stop()). */
  workDir?: string;
  log?: (line: string) => void;
  /**
   * Have kube-apiserver write an audit log (`LocalEnvironment.auditLogPath`): one JSON line per finished request at
   * `Metadata` level (who, user agent, verb, object reference; never a request or response body).
   */
  auditLog?: boolean;
  /**
   * Run a real node too (kubelet, kube-proxy, containerd, CoreDNS; `startKubeletNode`), so deploy/ runs as pods: the
   * API server then listens on the node IP (pods reach it through the `kubernetes` Service), admits service accounts,
   * authorizes nodes, and the controller manager and scheduler run what a cluster with nodes needs. One per host.
   */
  node?: {
    /** `docker save` archives the node imports before any pod starts: its system images and the images under test. */
    imageArchives: string[];
  };
  /**
   * The API server on a fixed port of every address, with a serving certificate for `serverNames` (a container's
   * name in a compose network) besides localhost and the kubernetes Service's names: the management cluster of
   * docker-compose.yml. Unset: a free port on the loopback (or the node IP), the API server's own certificate.
   */
  apiServer?: { port: number; serverNames: string[] };
  /** Start nats-server too (default); off where the event bus runs elsewhere (docker-compose.yml). */
  nats?: boolean;
}

export interface LocalEnvironment {
  workDir: string;
  /**
   * `<workDir>/sim`: the CAPSTAN_SIM_STATE_DIR for a machine-provider run against this environment. stop() stops
   * the workload API servers and node agents its pid files name, then removes it with the rest of the work dir.
   */
  simStateDir: string;
  kubeconfigPath: string;
  kubeconfig: string;
  apiServerUrl: string;
  adminToken: string;
  /**
   * The etcd for workload clusters (the sim's API servers, a key prefix each): its own, never the management
   * cluster's, so nothing a workload API server is made to do can touch the management cluster's data.
   */
  etcdUrl: string;
  /** The management kube-apiserver's own etcd (tests that compact or inspect it; never for workload clusters). */
  managementEtcdUrl: string;
  /** Empty with `nats: false`. */
  natsUrl: string;
  binaries: ControlPlaneBinaries;
  processes: { name: string; pid: number; logFile: string }[];
  /** With `auditLog`: kube-apiserver's audit log (JSON lines, audit.k8s.io/v1 Events). */
  auditLogPath?: string;
  /** The CA of the client certificate kube-apiserver presents to admission webhooks (the core's --webhook-client-ca-file). */
  webhookClientCaPath: string;
  /** With `node`: the real node and what it runs on. */
  node?: KubeletNode;
  stop(): Promise<void>;
}

/**
 * Starts etcd, kube-apiserver (RBAC, service-account keys, TLS), kube-controller-manager (the garbage collector,
 * the namespace controller and ClusterRole aggregation, as a real management cluster has them) and nats-server
 * -js on free ports.
 */
export async function startLocalEnvironment(
  options: LocalEnvironmentOptions = {},
): Promise<LocalEnvironment> {
  const log = options.log ?? (() => undefined);
  reapOrphans();
  const binaries = resolveControlPlaneBinaries(log);
  const controllerManager = resolveKubeComponent('kube-controller-manager', log);
  const natsServer = options.nats === false ? undefined : resolveNatsServer();
  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'capstan-env-'));
  mkdirSync(workDir, { recursive: true });
  const simStateDir = join(workDir, 'sim');
  mkdirSync(simStateDir, { recursive: true, mode: 0o700 });
  const started: ManagedProcess[] = [];
  let node: KubeletNode | undefined;
  const nodeLock = options.node ? await acquireNodeLock() : undefined;
  const stop = async () => {
    // The node first: its pods (the services under test) talk to everything else.
    await node?.stop();
    // Workload API servers next: they keep data in this environment's etcd when started with its URL.
    await stopRecordedSimProcesses(simStateDir);
    await Promise.all(started.map((p) => stopPid(p.pid)));
    forgetProcesses(started.map((p) => p.pid));
    if (nodeLock) {
      // A node that failed to start has no stop of its own: once its processes are stopped above, its leftovers go.
      if (!node) await removeNodeLeftovers(nodeWorkDir(workDir));
      nodeLock.release();
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  const track = (p: ManagedProcess) => {
    started.push(p);
    recordProcesses([p.pid], options.detached === true);
    return p;
  };
  try {
    const [managementEtcdUrl, etcdUrl] = await Promise.all(
      (['etcd', 'workload-etcd'] as const).map((name) =>
        withPortRetry(name, (port) => startEtcd(binaries.etcd, workDir, name, port, options, track)),
      ),
    );
    if (options.node) createNodeNetwork();
    const nodeCredentials = options.node ? nodeComponentTokens() : [];
    const startApi = (port: number) =>
      startApiServer(
        binaries.kubeApiserver,
        workDir,
        port,
        managementEtcdUrl!,
        options,
        track,
        nodeCredentials,
      );
    const api = options.apiServer
      ? await startApi(options.apiServer.port)
      : await withPortRetry('kube-apiserver', startApi);
    const kubeconfigPath = join(workDir, 'kubeconfig');
    writeFileSync(kubeconfigPath, api.kubeconfig, { mode: 0o600 });
    await withPortRetry('kube-controller-manager', (port) =>
      startControllerManager(controllerManager, workDir, port, kubeconfigPath, options, track, api.certDir),
    );
    if (options.node) {
      const scheduler = resolveKubeComponent('kube-scheduler', log);
      // The scheduler, for the node's pods.
      await withPortRetry('kube-scheduler', (port) =>
        startKubeComponent('kube-scheduler', scheduler, workDir, port, kubeconfigPath, options, track, []),
      );
      node = await startKubeletNode({
        dir: nodeWorkDir(workDir),
        apiServerUrl: api.url,
        caData: api.caData,
        credentials: nodeCredentials,
        adminKubeconfig: api.kubeconfig,
        imageArchives: options.node.imageArchives,
        log,
        track,
        detached: options.detached,
      });
    }
    const natsUrl = natsServer
      ? await withPortRetry('nats-server', (port) => startNats(natsServer, workDir, port, options, track))
      : '';
    return {
      workDir,
      simStateDir,
      kubeconfigPath,
      kubeconfig: api.kubeconfig,
      apiServerUrl: api.url,
      adminToken: api.token,
      webhookClientCaPath: api.webhookClientCaPath,
      ...(api.auditLogPath ? { auditLogPath: api.auditLogPath } : {}),
      etcdUrl: etcdUrl!,
      managementEtcdUrl: managementEtcdUrl!,
      natsUrl,
      binaries,
      processes: started.map((p) => ({ name: p.name, pid: p.pid, logFile: p.logFile })),
      ...(node ? { node } : {}),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A port can be taken between choosing it and binding it; then choose another. */
async function withPortRetry<T>(what: string, start: (port: number) => Promise<T>): Promise<T> {
  const portTaken = (error: unknown) =>
    error instanceof TestEnvironmentError && /address already in use|bind/i.test(error.message);
  try {
    return await retryWhilePortTaken(async () => start(await freePort()), portTaken);
  } catch (error) {
    if (!portTaken(error)) throw error;
    throw new TestEnvironmentError(
      `${what} could not bind a free port after ${PORT_START_ATTEMPTS} attempts`,
      { cause: String(error) },
    );
  }
}

async function startEtcd(
  binary: string,
  workDir: string,
  name: 'etcd' | 'workload-etcd',
  port: number,
  options: LocalEnvironmentOptions,
  track: (p: ManagedProcess) => ManagedProcess,
): Promise<string> {
  const peerPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const dataDir = join(workDir, `etcd-${port}`);
  const proc = track(
    startProcess({
      name,
      command: binary,
      args: [
        '--name=capstan',
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=capstan=${peer}`,
        '--unsafe-no-fsync=true',
        '--quota-backend-bytes=4294967296',
        '--log-level=warn',
      ],
      logFile: join(workDir, `${name}.log`),
      detached: options.detached,
    }),
  );
  await waitUntilReady(
    proc,
    name,
    async () => {
      const response = await fetch(`${url}/health`);
      return response.ok && ((await response.json()) as { health?: string }).health === 'true';
    },
    30_000,
  );
  return url;
}

async function startApiServer(
  binary: string,
  workDir: string,
  port: number,
  etcdUrl: string,
  options: LocalEnvironmentOptions,
  track: (p: ManagedProcess) => ManagedProcess,
  nodeCredentials: NodeComponentToken[],
): Promise<{
  url: string;
  token: string;
  kubeconfig: string;
  caData: string;
  certDir: string;
  auditLogPath?: string;
  webhookClientCaPath: string;
}> {
  const certDir = join(workDir, `apiserver-${port}`);
  mkdirSync(certDir, { recursive: true });
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  writeFileSync(join(certDir, 'sa.pub'), publicKey);
  writeFileSync(join(certDir, 'sa.key'), privateKey, { mode: 0o600 });
  const token = randomBytes(24).toString('hex');
  const tokenLines = [
    `${token},capstan-admin,capstan-admin,"system:masters"`,
    ...nodeCredentials.map((c) => `${c.token},${c.user},${c.user},"${c.groups.join(',')}"`),
  ];
  writeFileSync(join(certDir, 'tokens.csv'), `${tokenLines.join('\n')}\n`, { mode: 0o600 });
  // With a node, the API server listens on the node IP (pods reach it there through the `kubernetes` Service, whose
  // endpoint is the advertised address), admits service accounts (pods get bound tokens) and authorizes kubelets.
  const address = options.node ? NODE_NETWORK.nodeIp : options.apiServer ? '0.0.0.0' : '127.0.0.1';
  const serving = options.apiServer
    ? await writeServingCertificate(certDir, options.apiServer.serverNames)
    : undefined;
  const nodeArgs = options.node
    ? ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction']
    : ['--authorization-mode=RBAC', '--disable-admission-plugins=ServiceAccount'];
  const webhookClient = await writeWebhookClientCredentials(certDir);
  const auditLogPath = options.auditLog ? join(workDir, `kube-apiserver-${port}-audit.log`) : undefined;
  const auditArgs: string[] = [];
  if (auditLogPath) {
    const policyPath = join(certDir, 'audit-policy.yaml');
    writeFileSync(policyPath, AUDIT_POLICY);
    auditArgs.push(
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${auditLogPath}`,
      '--audit-log-format=json',
    );
  }
  const proc = track(
    startProcess({
      name: 'kube-apiserver',
      command: binary,
      args: [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=/capstan-test`,
        `--bind-address=${address}`,
        // On every address, the API server advertises its first non-loopback one (the `kubernetes` Service).
        ...(address === '0.0.0.0' ? [] : [`--advertise-address=${address}`]),
        `--secure-port=${port}`,
        `--cert-dir=${certDir}`,
        ...(serving
          ? [`--tls-cert-file=${serving.certPath}`, `--tls-private-key-file=${serving.keyPath}`]
          : []),
        `--token-auth-file=${join(certDir, 'tokens.csv')}`,
        ...nodeArgs,
        `--service-account-key-file=${join(certDir, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(certDir, 'sa.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range=10.96.0.0/16',
        '--allow-privileged=true',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        '--v=0',
        webhookClient.apiServerArg,
        ...auditArgs,
      ],
      logFile: join(workDir, `kube-apiserver-${port}.log`),
      detached: options.detached,
    }),
  );
  const url = `https://${address === '0.0.0.0' ? '127.0.0.1' : address}:${port}`;
  let ca: string | undefined = serving?.caPem;
  await waitUntilReady(
    proc,
    'kube-apiserver',
    async () => {
      ca ??= readSelfSignedServingCa(join(certDir, 'apiserver.crt'));
      return ca !== undefined && (await httpsGet(`${url}/readyz`, token, ca)) === 200;
    },
    90_000,
  );
  if (/address already in use/i.test(readFileSync(proc.logFile, 'utf8'))) {
    throw new TestEnvironmentError('kube-apiserver: address already in use');
  }
  const kubeconfig = renderKubeconfig({
    clusterName: 'capstan-test',
    server: url,
    caData: Buffer.from(ca!).toString('base64'),
    user: { token },
  });
  return {
    url,
    token,
    kubeconfig,
    caData: Buffer.from(ca!).toString('base64'),
    certDir,
    webhookClientCaPath: webhookClient.caPath,
    ...(auditLogPath ? { auditLogPath } : {}),
  };
}

/**
 * A serving certificate for the API server from a CA of its own: `serverNames`, localhost, the kubernetes Service's
 * names and addresses. Returns the files and the CA a kubeconfig trusts.
 */
async function writeServingCertificate(
  certDir: string,
  serverNames: string[],
): Promise<{ certPath: string; keyPath: string; caPem: string }> {
  const ca = await createCertificateAuthority({ commonName: 'capstan-management-ca' });
  const serving = await issueServerCertificate(ca, {
    commonName: 'kube-apiserver',
    dnsNames: [
      ...serverNames,
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['127.0.0.1', '10.96.0.1'],
  });
  const certPath = join(certDir, 'serving.crt');
  const keyPath = join(certDir, 'serving.key');
  writeFileSync(certPath, `${serving.certPem}${ca.certPem}`);
  writeFileSync(keyPath, serving.keyPem, { mode: 0o600 });
  return { certPath, keyPath, caPem: ca.certPem };
}

/** One event per request, when it has finished (watches too), without bodies. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
`;

/** The status of a GET; without `ca` the serving certificate is not checked (a component's self-signed one). */
function httpsGet(url: string, token?: string, ca?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = token ? { authorization: `Bearer ${token}` } : undefined;
    const req = request(
      url,
      { headers, ...(ca === undefined ? { rejectUnauthorized: false } : { ca }), timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/**
 * The controllers whose absence a user would notice on a management cluster: owner references collect dependents,
 * a deleted namespace is emptied, aggregated ClusterRoles get their rules, admission policies get their expressions
 * type-checked (what `capstan init` waits for). Nothing schedules or runs pods here.
 */
const MANAGEMENT_CONTROLLERS = [
  'garbagecollector',
  'namespace',
  'clusterrole-aggregation',
  'validatingadmissionpolicy-status-controller',
];

async function startControllerManager(
  binary: string,
  workDir: string,
  port: number,
  kubeconfigPath: string,
  options: LocalEnvironmentOptions,
  track: (p: ManagedProcess) => ManagedProcess,
  apiServerCertDir: string,
): Promise<void> {
  const certDir = join(workDir, `kube-controller-manager-${port}`);
  // With a node: every default controller (Deployments, endpoints, service accounts, volume binding, PDBs...), with
  // the key that signs service account tokens and the CA that pods find in kube-root-ca.crt.
  const controllerArgs = options.node
    ? [
        '--controllers=*,-csrsigning,-csrapproving,-csrcleaner,-nodeipam',
        `--service-account-private-key-file=${join(apiServerCertDir, 'sa.key')}`,
        `--root-ca-file=${join(apiServerCertDir, 'apiserver.crt')}`,
      ]
    : [`--controllers=${MANAGEMENT_CONTROLLERS.join(',')}`];
  mkdirSync(certDir, { recursive: true });
  await startKubeComponent('kube-controller-manager', binary, workDir, port, kubeconfigPath, options, track, [
    ...controllerArgs,
    `--cert-dir=${certDir}`,
    '--profiling=false',
  ]);
}

/**
 * A controller manager or scheduler against the API server (its kubeconfig for everything), serving /healthz on the
 * loopback only; resolves once /healthz answers (served without credentials once its controllers started).
 */
async function startKubeComponent(
  name: 'kube-controller-manager' | 'kube-scheduler',
  binary: string,
  workDir: string,
  port: number,
  kubeconfigPath: string,
  options: LocalEnvironmentOptions,
  track: (p: ManagedProcess) => ManagedProcess,
  args: string[],
): Promise<void> {
  const proc = track(
    startProcess({
      name,
      command: binary,
      args: [
        `--kubeconfig=${kubeconfigPath}`,
        `--authentication-kubeconfig=${kubeconfigPath}`,
        `--authorization-kubeconfig=${kubeconfigPath}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${port}`,
        '--v=0',
        ...args,
      ],
      logFile: join(workDir, `${name}-${port}.log`),
      detached: options.detached,
    }),
  );
  await waitUntilReady(
    proc,
    name,
    async () => (await httpsGet(`https://127.0.0.1:${port}/healthz`)) === 200,
    60_000,
  );
  if (/address already in use/i.test(readFileSync(proc.logFile, 'utf8'))) {
    throw new TestEnvironmentError(`${name}: address already in use`);
  }
}

async function startNats(
  binary: string,
  workDir: string,
  port: number,
  options: LocalEnvironmentOptions,
  track: (p: ManagedProcess) => ManagedProcess,
): Promise<string> {
  const storeDir = join(workDir, `nats-${port}`);
  const proc = track(
    startProcess({
      name: 'nats-server',
      command: binary,
      args: ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir],
      logFile: join(workDir, 'nats-server.log'),
      detached: options.detached,
    }),
  );
  const url = `nats://127.0.0.1:${port}`;
  await waitUntilReady(proc, 'nats-server', () => natsConnect(url), 15_000);
  return url;
}
