// `npm run env:up` / `env:down`: the same local servers as the tests, kept running for work by hand.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  pinnedKubeApiserverVersions,
  resolveControlPlaneBinaries,
  resolveEtcdutl,
  resolveKubeApiserverVersion,
  resolveKubeComponent,
  resolveKubectl,
  resolveNatsServer,
  resolveNodeImageProgram,
  resolveS3Server,
} from './binaries.js';
import { dockerEngine } from './docker-daemon.js';
import { type BuiltImage } from './images/docker-cli.js';
import { buildServiceImages } from './images/service-images.js';
import { startLocalEnvironment } from './local-environment.js';
import { stopDetachedNode } from './kubelet-node.js';
import { runManagementCluster } from './management-cluster.js';
import { buildNodeImageArchive } from './node-images.js';
import { resolveUpstreamClusterApi } from './upstream-cluster-api.js';
import { stopRecordedSimProcesses } from './local-services.js';
import { stopPid } from './processes.js';
import { repoRoot } from './repo.js';

interface EnvFile {
  kubeconfig: string;
  natsUrl: string;
  etcdUrl: string;
  apiServerUrl: string;
  workDir: string;
  /** The sim state dir for `capstan init --local` against this environment (absent in files from older checkouts). */
  simStateDir?: string;
  /** The CA of the API server's admission webhook client certificate (the core's --webhook-client-ca-file). */
  webhookClientCaPath?: string;
  /** With `env:up -- --node`: the real node's folder, for env:down to take the node down with. */
  nodeDir?: string;
  pids: Record<string, number>;
}

const stateDir = join(repoRoot(), '.capstan');
const envFile = join(stateDir, 'env.json');
const out = (line: string) => process.stdout.write(`${line}\n`);

async function up(): Promise<void> {
  if (existsSync(envFile)) {
    const current = JSON.parse(readFileSync(envFile, 'utf8')) as EnvFile;
    out(`already running (${envFile}); export KUBECONFIG=${current.kubeconfig}`);
    return;
  }
  mkdirSync(stateDir, { recursive: true });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // --node: a real node too (docs/deploy.md), with the images `capstan init` needs: deploy/ runs as pods.
  const withNode = process.argv.includes('--node');
  const nodeImages = withNode ? await buildNodeImageArchive(log) : undefined;
  const env = await startLocalEnvironment({
    detached: true,
    workDir: join(stateDir, 'env'),
    log,
    ...(nodeImages ? { node: { imageArchives: [nodeImages.archive] } } : {}),
  });
  const state: EnvFile = {
    kubeconfig: env.kubeconfigPath,
    natsUrl: env.natsUrl,
    etcdUrl: env.etcdUrl,
    apiServerUrl: env.apiServerUrl,
    workDir: env.workDir,
    simStateDir: env.simStateDir,
    webhookClientCaPath: env.webhookClientCaPath,
    ...(env.node ? { nodeDir: join(env.workDir, 'node') } : {}),
    pids: Object.fromEntries(env.processes.map((p) => [p.name, p.pid])),
  };
  writeFileSync(envFile, JSON.stringify(state, null, 2));
  out(`kube-apiserver ${env.apiServerUrl} (Kubernetes ${env.binaries.kubernetesVersion})`);
  out(`nats-server    ${env.natsUrl}`);
  out(`sim state      ${env.simStateDir}`);
  out(`state          ${envFile}`);
  // The sim's workload API servers go into this environment's etcd and state dir, so env:down stops them too.
  out(
    `export KUBECONFIG=${env.kubeconfigPath} CAPSTAN_SIM_STATE_DIR=${env.simStateDir} CAPSTAN_SIM_ETCD_URL=${env.etcdUrl}`,
  );
  if (nodeImages) {
    out(`node           ${env.node!.name} ${env.node!.ip} (kubelet, kube-proxy, containerd, CoreDNS)`);
    out(`then: node apps/cli/bin/capstan.js init --image nats=${nodeImages.natsImage}   (deploy/ as pods)`);
  } else {
    out(`then: node apps/cli/bin/capstan.js init --local --nats-url ${env.natsUrl}`);
  }
  out(`stop with: npm run env:down`);
}

async function down(): Promise<void> {
  if (!existsSync(envFile)) {
    out('no local environment is running');
    return;
  }
  const state = JSON.parse(readFileSync(envFile, 'utf8')) as EnvFile;
  const simProcesses = await stopRecordedSimProcesses(state.simStateDir ?? join(state.workDir, 'sim'));
  if (simProcesses.length > 0)
    out(`stopped ${simProcesses.length} sim processes (workload API servers, node agents)`);
  await Promise.all(Object.values(state.pids).map((pid) => stopPid(pid)));
  if (state.nodeDir) await stopDetachedNode(state.nodeDir);
  rmSync(state.workDir, { recursive: true, force: true });
  rmSync(envFile, { force: true });
  out('local environment stopped');
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** `npm run images`: the base and the five service images, their sizes, and the layers over 50 MiB with their cause. */
async function images(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const engine = await dockerEngine({ log });
  const started = Date.now();
  const built = await buildServiceImages({ socketPath: engine.socketPath, log });
  const rows: [BuiltImage, string][] = [
    [built.base, built.base.rebuilt ? 'built' : 'unchanged'],
    ...built.services.map((image): [BuiltImage, string] => [
      image,
      `${image.rebuilt ? 'built' : 'current'} (${(image.buildMs / 1000).toFixed(1)} s)`,
    ]),
  ];
  const width = Math.max(...rows.map(([image]) => image.tag.length));
  out(`${'IMAGE'.padEnd(width)}  ${'SIZE'.padStart(10)}  BUILD`);
  const row = (image: BuiltImage, size: number, what: string) =>
    out(`${image.tag.padEnd(width)}  ${mib(size).padStart(10)}  ${what}`);
  for (const [image, build] of rows) row(image, image.size, build);
  out('\nlayers over 50 MiB:');
  for (const [image] of rows) {
    for (const layer of image.largeLayers) row(image, layer.size, layer.instruction ?? layer.createdBy);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  out(`\nall built in ${seconds} s; engine: DOCKER_HOST=unix://${engine.socketPath} (${engine.origin})`);
}

/** docker-compose.yml's management cluster (the machine-provider image's entrypoint there): runs until SIGTERM. */
async function managementCluster(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(3),
    options: {
      'work-dir': { type: 'string', default: '/var/lib/capstan-management' },
      port: { type: 'string', default: '6443' },
      'server-name': { type: 'string', default: 'management' },
      'kubeconfig-out': { type: 'string', default: '/kube/kubeconfig.yaml' },
    },
    strict: true,
  });
  const environment = await runManagementCluster({
    workDir: values['work-dir'],
    port: Number(values.port),
    serverName: values['server-name'],
    kubeconfigOut: values['kubeconfig-out'],
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await environment.stop();
}

const command = process.argv[2];
try {
  if (command === 'up') await up();
  else if (command === 'down') await down();
  else if (command === 'binaries') {
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const binaries = resolveControlPlaneBinaries(log);
    // The other pinned minors only when asked (`--other-minors`: the suites and benchmarks): the sim swaps to them
    // when a machine plan installs another version, which the demo never does.
    const others = pinnedKubeApiserverVersions()
      .slice(process.argv.includes('--other-minors') ? 1 : Number.MAX_SAFE_INTEGER)
      .map(
        ({ version }) => `kube-apiserver ${resolveKubeApiserverVersion(version, log)?.path ?? '(not built)'}`,
      );
    const controllerManager = resolveKubeComponent('kube-controller-manager', log);
    // The sim restores workload etcd snapshots with etcdutl; the day-2 suites upload them to the S3-compatible server.
    const etcdutl = resolveEtcdutl(log);
    const s3Server = resolveS3Server(log);
    const scheduler = resolveKubeComponent('kube-scheduler', log);
    // kubectl only for the suites: the dashboard's browser test uses a kubeconfig it downloaded with it.
    const kubectl = process.argv.includes('--other-minors') ? [`kubectl ${resolveKubectl(log)}`] : [];
    out(
      [
        `etcd ${binaries.etcd}`,
        `kube-apiserver ${binaries.kubeApiserver}`,
        ...others,
        `kube-controller-manager ${controllerManager}`,
        `kube-scheduler ${scheduler}`,
        `etcdutl ${etcdutl}`,
        `s3-server ${s3Server}`,
        `nats-server ${resolveNatsServer()}`,
        ...kubectl,
      ].join('\n'),
    );
  } else if (command === 'upstream-binaries') {
    // Upstream Cluster API for the compatibility suite and bench:upstream: built once, then taken from the cache.
    const upstream = resolveUpstreamClusterApi((line) => process.stderr.write(`${line}\n`));
    out(
      Object.entries(upstream.binaries)
        .map(([name, path]) => `${name} ${path}`)
        .join('\n'),
    );
    out(`sources ${upstream.sourceDir}`);
  } else if (command === 'images') await images();
  else if (command === 'management-cluster') await managementCluster();
  else if (command === 'node-binaries') {
    // The real node's programs (the deploy suite, `env:up --node`): built once from the pinned modules, like the rest.
    const log = (line: string) => process.stderr.write(`${line}\n`);
    out(
      [
        `kubelet ${resolveKubeComponent('kubelet', log)}`,
        `kube-proxy ${resolveKubeComponent('kube-proxy', log)}`,
        `pause ${resolveNodeImageProgram('pause', log).path}`,
        `coredns ${resolveNodeImageProgram('coredns', log).path}`,
      ].join('\n'),
    );
  } else {
    process.stderr.write(
      'usage: cli.js up|down|binaries [--other-minors]|upstream-binaries|node-binaries|images|management-cluster\n',
    );
    process.exitCode = 2;
  }
} catch (error) {
  process.stderr.write(`capstan env: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
