// `npm run env:up` / `env:down`: the same local servers as the tests, kept running for work by hand.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  pinnedKubeApiserverVersions,
  resolveControlPlaneBinaries,
  resolveKubeApiserverVersion,
  resolveKubeComponent,
  resolveNatsServer,
} from './binaries.js';
import { startLocalEnvironment } from './local-environment.js';
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
  const env = await startLocalEnvironment({
    detached: true,
    workDir: join(stateDir, 'env'),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const state: EnvFile = {
    kubeconfig: env.kubeconfigPath,
    natsUrl: env.natsUrl,
    etcdUrl: env.etcdUrl,
    apiServerUrl: env.apiServerUrl,
    workDir: env.workDir,
    simStateDir: env.simStateDir,
    webhookClientCaPath: env.webhookClientCaPath,
    pids: Object.fromEntries(env.processes.map((p) => [p.name, p.pid])),
  };
  writeFileSync(envFile, JSON.stringify(state, null, 2));
  out(`kube-apiserver ${env.apiServerUrl} (Kubernetes ${env.binaries.kubernetesVersion})`);
  out(`nats-server    ${env.natsUrl}`);
  out(`sim state      ${env.simStateDir}`);
  out(`state          ${envFile}`);
  // The sim's workload API servers go into this environment's etcd and state dir, so env:down stops them too.
  out(`export KUBECONFIG=${env.kubeconfigPath} CAPSTAN_SIM_STATE_DIR=${env.simStateDir} CAPSTAN_SIM_ETCD_URL=${env.etcdUrl}`);
  out(`then: node apps/cli/bin/capstan.js init --local --nats-url ${env.natsUrl}`);
  out(`stop with: npm run env:down`);
}

async function down(): Promise<void> {
  if (!existsSync(envFile)) {
    out('no local environment is running');
    return;
  }
  const state = JSON.parse(readFileSync(envFile, 'utf8')) as EnvFile;
  const simProcesses = await stopRecordedSimProcesses(state.simStateDir ?? join(state.workDir, 'sim'));
  if (simProcesses.length > 0) out(`stopped ${simProcesses.length} sim processes (workload API servers, node agents)`);
  await Promise.all(Object.values(state.pids).map((pid) => stopPid(pid)));
  rmSync(state.workDir, { recursive: true, force: true });
  rmSync(envFile, { force: true });
  out('local environment stopped');
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
      .map(({ version }) => `kube-apiserver ${resolveKubeApiserverVersion(version, log)?.path ?? '(not built)'}`);
    const controllerManager = resolveKubeComponent('kube-controller-manager', log);
    const scheduler = resolveKubeComponent('kube-scheduler', log);
    out(
      [
        `etcd ${binaries.etcd}`,
        `kube-apiserver ${binaries.kubeApiserver}`,
        ...others,
        `kube-controller-manager ${controllerManager}`,
        `kube-scheduler ${scheduler}`,
        `nats-server ${resolveNatsServer()}`,
      ].join('\n'),
    );
  }
  else if (command === 'upstream-binaries') {
    // Upstream Cluster API for the compatibility suite and bench:upstream: built once, then taken from the cache.
    const upstream = resolveUpstreamClusterApi((line) => process.stderr.write(`${line}\n`));
    out(Object.entries(upstream.binaries).map(([name, path]) => `${name} ${path}`).join('\n'));
    out(`sources ${upstream.sourceDir}`);
  }
  else {
    process.stderr.write('usage: cli.js up|down|binaries [--other-minors]|upstream-binaries\n');
    process.exitCode = 2;
  }
} catch (error) {
  process.stderr.write(`capstan env: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
