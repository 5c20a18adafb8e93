// `npm run demo [-- --once] [-- --node]`: a real cluster provisioned on this machine with nothing installed by hand;
// with --node, Capstan runs as users deploy it: its images built here, a real node, `capstan init` (docs/deploy.md).
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import {
  applyOrder,
  deployDir,
  installAdmissionPolicies,
  installCrds,
  isAdmissionPolicy,
  loadKustomization,
  ManifestApplier,
  type Manifest,
} from '@capstan/manifests';
import { buildTree, renderTree, treeRows } from '@capstan/describe';
import { workloadKubeconfig } from '../commands/get.js';
import { getCluster } from '../describe/fetch.js';
import { generateCluster } from '@capstan/cluster-templates';
import { waitForAddon } from './wait-for-addon.js';
import {
  buildNodeImageArchive,
  DASHBOARD_SERVICE,
  localServiceLines,
  repoRoot,
  startLocalEnvironment,
  startLocalServices,
  startTestEnvironment,
  stopLocalServices,
  waitForNoLeftovers,
  type LocalService,
  type TestEnvironment,
} from '@capstan/testing';
import { ALL_RESOURCES, RESOURCES } from '@capstan/api';
import { CliError, terminalOutput } from '../output.js';
import { dashboardLines, grantDemoDashboardUser } from './demo-dashboard.js';
import { createDemoWorkDir, pruneEndedDemoRuns } from './demo-work-dir.js';
import { DEMO_DEPLOYMENT, podsTable, runDemoWorkload } from './demo-workload.js';
import { nodesTable } from './nodes-table.js';
import { waitForClusterAvailable } from './wait-for-cluster.js';
import { deleteClusterInManagement, formatElapsed } from './wait-for-deletion.js';

const CLUSTER = 'demo';
const NAMESPACE = 'default';
const KUBERNETES_VERSION = 'v1.34.4';
const output = terminalOutput();
const once = process.argv.includes('--once');
/** deploy/ on a real node instead of the five services as local processes. */
const onNode = process.argv.includes('--node');
/** Ctrl-C at any stage tears down what was started; a second Ctrl-C exits at once. */
const interrupted = new AbortController();
const onSignal = () => {
  if (interrupted.signal.aborted) process.exit(130);
  interrupted.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
/** Paths as the user can type them: relative to the repository root, where `npm run demo` runs. */
const shown = (path: string) => {
  const inRepo = relative(process.cwd(), path);
  return inRepo.startsWith('..') ? path : inRepo;
};

async function main(): Promise<void> {
  const startedAt = Date.now();
  const elapsed = () => formatElapsed(Date.now() - startedAt);
  pruneEndedDemoRuns();
  const workDir = createDemoWorkDir();
  let environment: TestEnvironment | undefined;
  let services: LocalService[] = [];
  // Services first (the machine-provider stops its workload API servers; what its pid files still name is stopped
  // after it), then the management cluster. The logs stay until the next demo starts; so does the sim state (API
  // server and node agent logs) when the demo failed.
  const teardown = async ({ keepSimState }: { keepSimState: boolean }) => {
    await stopLocalServices(services);
    await environment?.stop();
    if (!keepSimState) rmSync(workDir.simStateDir, { recursive: true, force: true });
  };
  try {
    let kc: KubeConfig;
    let applier: ManifestApplier;
    if (onNode) {
      ({ environment, kc, applier } = await deployOnNode());
    } else {
      const envProgress = output.progress(
        'Starting the management cluster (etcd, kube-apiserver) and NATS JetStream',
      );
      environment = await startTestEnvironment({ log: (line) => envProgress.update(line) });
      envProgress.done(`Management cluster and event bus are up (${environment.kind})`);
      kc = new KubeConfig();
      kc.loadFromString(environment.kubeconfig);

      const crdProgress = output.progress('Installing the Capstan CRDs and admission policies');
      const manifests = applyOrder(loadKustomization(deployDir()));
      const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
      applier = new ManifestApplier(kc);
      await installCrds(kc, applier, crds, { fieldManager: 'capstan-cli' });
      await installAdmissionPolicies(applier, manifests, { fieldManager: 'capstan-cli' });
      crdProgress.done(
        `Installed ${crds.length} CRDs and ${manifests.filter(isAdmissionPolicy).length} admission policy objects`,
      );

      const serviceProgress = output.progress('Starting the five Capstan services and the dashboard');
      services = await startLocalServices({
        kubeconfigPath: environment.kubeconfigPath,
        natsUrl: environment.natsUrl,
        logDir: workDir.logDir,
        simStateDir: workDir.simStateDir,
        env: environment.etcdUrl ? { CAPSTAN_SIM_ETCD_URL: environment.etcdUrl } : {},
        syncPeriodSeconds: 30,
        conversionWebhook: true,
        webhookClientCaFile: environment.webhookClientCaPath,
        dashboard: true,
        onProgress: (name, state) =>
          serviceProgress.update(`${state === 'ready' ? 'Started' : 'Starting'} ${name}`),
      });
      serviceProgress.done(
        `Running ${services.length} services (logs in ${shown(workDir.logDir)}, sim state in ${shown(workDir.simStateDir)})`,
      );
      for (const line of localServiceLines(services)) output.line(line);
    }

    const yaml = generateCluster({
      clusterName: CLUSTER,
      infrastructure: 'sim',
      targetNamespace: NAMESPACE,
      kubernetesVersion: KUBERNETES_VERSION,
      controlPlaneMachineCount: 1,
      workerMachineCount: 2,
      env: {},
    });
    for (const doc of parseAllDocuments(yaml))
      await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-cli' });
    const appliedAt = Date.now();
    const sinceApply = () => formatElapsed(Date.now() - appliedAt);
    output.line(
      `Applied cluster ${NAMESPACE}/${CLUSTER}: 1 control plane machine, 2 workers (capstan generate cluster ${CLUSTER} ...)`,
    );

    const clusterProgress = output.progress(`Provisioning cluster ${CLUSTER}`);
    const objects = await waitForClusterAvailable(kc, NAMESPACE, CLUSTER, {
      timeoutMs: 300_000,
      signal: interrupted.signal,
      onProgress: (p) =>
        clusterProgress.update(
          `Provisioning cluster ${CLUSTER}: phase ${p.phase}, ${p.machines.running}/${p.machines.total} machines running` +
            `${p.waitingFor ? `, ${p.waitingFor}` : ''} (${sinceApply()})`,
        ),
    }).catch((error: Error) => {
      clusterProgress.fail();
      throw new CliError(error.message);
    });
    clusterProgress.done(`Cluster ${CLUSTER} is Available ${sinceApply()} after apply`);
    const addonSet = 'platform-baseline';
    const addon = await waitForAddon(kc, NAMESPACE, CLUSTER, addonSet, {
      timeoutMs: 60_000,
      signal: interrupted.signal,
    }).catch((error: Error) => {
      throw new CliError(error.message);
    });
    output.line(
      `Add-on delivered by ClusterResourceSet ${addon.set}: ${addon.resources.join(', ')} applied (namespace platform with default container requests)`,
    );

    output.line('');
    output.line(`$ capstan describe cluster ${CLUSTER}`);
    output.line(renderTree(treeRows(buildTree(objects)), output.colour));

    const kubeconfig = await workloadKubeconfig(kc, NAMESPACE, CLUSTER);
    const kubeconfigPath = shown(join(workDir.root, `${CLUSTER}.kubeconfig`));
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    output.line('');
    output.line(`Workload kubeconfig: ${kubeconfigPath}`);
    output.line(`$ kubectl --kubeconfig ${kubeconfigPath} get nodes`);
    output.line(await getNodes(kubeconfigPath, kubeconfig));
    output.line('');
    const { name, image, replicas } = DEMO_DEPLOYMENT;
    const deploying = output.progress(
      `Running Deployment ${name} (${replicas} replicas) on the workload cluster`,
    );
    const pods = await runDemoWorkload(kubeconfig, { timeoutMs: 120_000, signal: interrupted.signal }).catch(
      (error: Error) => {
        deploying.fail();
        throw new CliError(error.message);
      },
    );
    deploying.done(
      `Deployment ${name}: ${replicas}/${replicas} pods Running, placed by the cluster's kube-scheduler`,
    );
    output.line(
      `$ kubectl --kubeconfig ${kubeconfigPath} create deployment ${name} --image=${image} --replicas=${replicas}`,
    );
    output.line(`$ kubectl --kubeconfig ${kubeconfigPath} get pods -o wide`);
    output.line(podsTable(pods));
    output.line('');
    output.line(
      onNode
        ? `Management cluster: export KUBECONFIG=${environment.kubeconfigPath}   Capstan's pods: kubectl -n capstan-system get pods`
        : `Management cluster: export KUBECONFIG=${environment.kubeconfigPath}   Events: capstan events --nats-url ${environment.natsUrl}`,
    );
    const dashboard = services.find((service) => service.name === DASHBOARD_SERVICE);
    if (dashboard) {
      await grantDemoDashboardUser(kc, NAMESPACE);
      const caPath = shown(join(workDir.logDir, 'admin-tls', 'ca.crt'));
      for (const line of dashboardLines(dashboard, environment.kubeconfigPath, NAMESPACE, caPath)) output.line(line);
    }

    if (once) {
      const { uid } = (await getCluster(kc, NAMESPACE, CLUSTER)).metadata;
      const deleting = output.progress(`Deleting cluster ${CLUSTER}`);
      const took = await deleteClusterInManagement(kc, NAMESPACE, CLUSTER, {
        timeoutMs: 180_000,
        signal: interrupted.signal,
        onProgress: (progress, ms) =>
          deleting.update(`Deleting cluster ${CLUSTER}: ${progress} (${formatElapsed(ms)})`),
      }).catch((error: Error) => {
        deleting.fail();
        throw error;
      });
      deleting.done(`Cluster ${CLUSTER} deleted ${formatElapsed(took)} after the delete request`);
      // What the Cluster owned goes with it through the garbage collector: Secrets, templates, the health check.
      const collecting = output.progress(`Checking that nothing of cluster ${CLUSTER} is left`);
      const left = await waitForNoLeftovers(
        kc,
        { namespace: NAMESPACE, name: CLUSTER, uid: uid! },
        ALL_RESOURCES.filter((resource) => resource !== RESOURCES.Cluster),
        { timeoutMs: 60_000, signal: interrupted.signal },
      );
      if (left.length > 0) {
        collecting.fail();
        throw new CliError(`left of cluster ${CLUSTER} 60s after its deletion: ${left.join(', ')}`);
      }
      collecting.done(`Nothing of cluster ${CLUSTER} is left (Secrets, templates and health check included)`);
    } else {
      output.line(`Demo ready in ${elapsed()}. Running until Ctrl-C.`);
      await new Promise<void>((resolveWait) =>
        interrupted.signal.addEventListener('abort', () => resolveWait(), { once: true }),
      );
    }
    const stopping = output.progress('Stopping services and the management cluster');
    await teardown({ keepSimState: false });
    stopping.done(
      `Stopped; the demo took ${elapsed()} (logs stay in ${shown(workDir.logDir)} until the next demo)`,
    );
  } catch (error) {
    const failed = !interrupted.signal.aborted;
    if (failed) {
      output.error(error instanceof Error ? error.message : String(error));
      for (const s of services) output.error(`  ${s.name} log: ${shown(s.logFile)}`);
      output.error(`  workload API server and node agent logs: ${shown(workDir.simStateDir)}`);
      process.exitCode = 1;
    } else {
      output.line('Interrupted: stopping everything');
    }
    await teardown({ keepSimState: failed });
  }
}

/**
 * --node: the images built here, the management cluster with a real node, then `capstan init` as a user runs it (NATS
 * from Debian's nats-server through --image): every service a pod of its own ServiceAccount.
 */
async function deployOnNode(): Promise<{
  environment: TestEnvironment;
  kc: KubeConfig;
  applier: ManifestApplier;
}> {
  const imagesProgress = output.progress('Building the images (nothing is pulled)');
  const images = await buildNodeImageArchive((line) => imagesProgress.update(line.slice(0, 100)));
  imagesProgress.done('Built the base, the five service images, NATS, pause and CoreDNS');
  const envProgress = output.progress(
    'Starting the management cluster with a real node (kubelet, kube-proxy, containerd, CoreDNS)',
  );
  const local = await startLocalEnvironment({
    node: { imageArchives: [images.archive] },
    log: (line) => envProgress.update(line),
  });
  envProgress.done(`Management cluster and node ${local.node!.name} (${local.node!.ip}) are up`);
  const environment: TestEnvironment = {
    kind: 'local',
    kubeconfigPath: local.kubeconfigPath,
    kubeconfig: local.kubeconfig,
    natsUrl: local.natsUrl,
    processes: local.processes,
    stop: local.stop,
  };
  const initProgress = output.progress(`$ capstan init --image nats=${images.natsImage}`);
  try {
    execFileSync(
      process.execPath,
      [join(repoRoot(), 'apps/cli/bin/capstan.js'), 'init', '--image', `nats=${images.natsImage}`],
      {
        env: { ...process.env, KUBECONFIG: local.kubeconfigPath },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 600_000,
      },
    );
  } catch (error) {
    initProgress.fail();
    await local.stop();
    throw new CliError(
      `capstan init failed: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`,
    );
  }
  initProgress.done('Capstan is running as pods on the node: NATS and the five services, each Ready');
  const kc = new KubeConfig();
  kc.loadFromString(local.kubeconfig);
  return { environment, kc, applier: new ManifestApplier(kc) };
}

/** `kubectl get nodes` when kubectl is installed; the same table through the API otherwise. */
async function getNodes(kubeconfigPath: string, kubeconfig: string): Promise<string> {
  try {
    return execFileSync('kubectl', ['--kubeconfig', kubeconfigPath, 'get', 'nodes'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trimEnd();
  } catch {
    const workload = new KubeConfig();
    workload.loadFromString(kubeconfig);
    const nodes = await workload.makeApiClient(CoreV1Api).listNode();
    return nodesTable(nodes.items);
  }
}

await main();
