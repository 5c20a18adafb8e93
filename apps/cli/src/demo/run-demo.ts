// `npm run demo [-- --once]`: a real cluster provisioned on this machine with nothing installed by hand.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { applyOrder, deployDir, installCrds, loadKustomization, ManifestApplier, type Manifest } from '@capstan/manifests';

import { workloadKubeconfig } from '../commands/get.js';
import { getCluster } from '../describe/fetch.js';
import { buildTree, renderTree, treeRows } from '../describe/tree.js';
import { generateCluster } from '../generate/cluster-template.js';
import { startLocalServices, startTestEnvironment, stopLocalServices, type LocalService, type TestEnvironment } from '@capstan/testing';
import { CliError, terminalOutput } from '../output.js';
import { nodesTable } from './nodes-table.js';
import { waitForClusterAvailable } from './wait-for-cluster.js';

const CLUSTER = 'demo';
const NAMESPACE = 'default';
const KUBERNETES_VERSION = 'v1.34.4';
const output = terminalOutput();
const once = process.argv.includes('--once');
/** Ctrl-C at any stage tears down what was started; a second Ctrl-C exits at once. */
const interrupted = new AbortController();
const onSignal = () => {
  if (interrupted.signal.aborted) process.exit(130);
  interrupted.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
const stateDir = resolve('.capstan', 'demo');

async function main(): Promise<void> {
  const startedAt = Date.now();
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(0)}s`;
  let environment: TestEnvironment | undefined;
  let services: LocalService[] = [];
  const teardown = async () => {
    await stopLocalServices(services);
    await environment?.stop();
  };
  try {
    const envProgress = output.progress('Starting the management cluster (etcd, kube-apiserver) and NATS JetStream');
    environment = await startTestEnvironment({ log: (line) => envProgress.update(line) });
    envProgress.done(`Management cluster and event bus are up (${environment.kind})`);
    const kc = new KubeConfig();
    kc.loadFromString(environment.kubeconfig);

    const crdProgress = output.progress('Installing the Capstan CRDs');
    const crds = applyOrder(loadKustomization(deployDir())).filter((m) => m.kind === 'CustomResourceDefinition');
    const applier = new ManifestApplier(kc);
    await installCrds(kc, applier, crds, { fieldManager: 'capstan-cli' });
    crdProgress.done(`Installed ${crds.length} CRDs`);

    const serviceProgress = output.progress('Starting the five Capstan services');
    services = await startLocalServices({
      kubeconfigPath: environment.kubeconfigPath,
      natsUrl: environment.natsUrl,
      logDir: join(stateDir, 'logs'),
      env: environment.etcdUrl ? { CAPSTAN_SIM_ETCD_URL: environment.etcdUrl } : {},
      syncPeriodSeconds: 30,
      onProgress: (name, state) => serviceProgress.update(`${state === 'ready' ? 'Started' : 'Starting'} ${name}`),
    });
    serviceProgress.done(`Running ${services.map((s) => s.name).join(', ')} (logs in ${join(stateDir, 'logs')})`);

    const yaml = generateCluster({
      clusterName: CLUSTER,
      infrastructure: 'sim',
      targetNamespace: NAMESPACE,
      kubernetesVersion: KUBERNETES_VERSION,
      controlPlaneMachineCount: 1,
      workerMachineCount: 2,
      env: {},
    });
    for (const doc of parseAllDocuments(yaml)) await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-cli' });
    output.line(`Applied cluster ${NAMESPACE}/${CLUSTER}: 1 control plane machine, 2 workers (capstan generate cluster ${CLUSTER} ...)`);

    const clusterProgress = output.progress(`Provisioning cluster ${CLUSTER}`);
    const objects = await waitForClusterAvailable(kc, NAMESPACE, CLUSTER, {
      timeoutMs: 300_000,
      signal: interrupted.signal,
      onProgress: (p) =>
        clusterProgress.update(
          `Provisioning cluster ${CLUSTER}: phase ${p.phase}, ${p.machines.running}/${p.machines.total} machines running` +
            `${p.waitingFor ? `, ${p.waitingFor}` : ''} (${elapsed()})`,
        ),
    }).catch((error: Error) => {
      clusterProgress.fail();
      throw new CliError(error.message);
    });
    clusterProgress.done(`Cluster ${CLUSTER} is Available after ${elapsed()}`);

    output.line('');
    output.line(`$ capstan describe cluster ${CLUSTER}`);
    output.line(renderTree(treeRows(buildTree(objects)), output.colour));

    const kubeconfig = await workloadKubeconfig(kc, NAMESPACE, CLUSTER);
    mkdirSync(stateDir, { recursive: true });
    const kubeconfigPath = join(stateDir, `${CLUSTER}.kubeconfig`);
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
    output.line('');
    output.line(`Workload kubeconfig: ${kubeconfigPath}`);
    output.line(`$ kubectl --kubeconfig ${kubeconfigPath} get nodes`);
    output.line(await getNodes(kubeconfigPath, kubeconfig));
    output.line('');
    output.line(`Management cluster: export KUBECONFIG=${environment.kubeconfigPath}   Events: capstan events --nats-url ${environment.natsUrl}`);

    if (once) {
      const deleting = output.progress(`Deleting cluster ${CLUSTER}`);
      await deleteCluster(kc, (reason) => deleting.update(`Deleting cluster ${CLUSTER}: ${reason}`));
      deleting.done(`Cluster ${CLUSTER} deleted after ${elapsed()}`);
    } else {
      output.line(`Demo ready in ${elapsed()}. Running until Ctrl-C.`);
      await new Promise<void>((resolveWait) => interrupted.signal.addEventListener('abort', () => resolveWait(), { once: true }));
    }
    const stopping = output.progress('Stopping services and the management cluster');
    await teardown();
    stopping.done(`Done in ${elapsed()}`);
  } catch (error) {
    if (interrupted.signal.aborted) {
      output.line('Interrupted: stopping everything');
    } else {
      output.error(error instanceof Error ? error.message : String(error));
      for (const s of services) output.error(`  ${s.name} log: ${s.logFile}`);
      process.exitCode = 1;
    }
    await teardown();
  }
}

/** `kubectl get nodes` when kubectl is installed; the same table through the API otherwise. */
async function getNodes(kubeconfigPath: string, kubeconfig: string): Promise<string> {
  try {
    return execFileSync('kubectl', ['--kubeconfig', kubeconfigPath, 'get', 'nodes'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
  } catch {
    const workload = new KubeConfig();
    workload.loadFromString(kubeconfig);
    const nodes = await workload.makeApiClient(CoreV1Api).listNode();
    return nodesTable(nodes.items);
  }
}

async function deleteCluster(kc: KubeConfig, onReason: (reason: string) => void): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteNamespacedCustomObject({ group: 'cluster.x-k8s.io', version: 'v1beta2', namespace: NAMESPACE, plural: 'clusters', name: CLUSTER });
  const deadline = Date.now() + 180_000;
  for (;;) {
    const cluster = await getCluster(kc, NAMESPACE, CLUSTER).catch(() => undefined);
    if (!cluster) return;
    const deleting = cluster.status?.conditions?.find((c) => c.type === 'Deleting');
    if (deleting?.reason) onReason(deleting.reason);
    if (Date.now() > deadline) throw new CliError(`Cluster ${CLUSTER} still exists after 180s (${deleting?.reason ?? 'no Deleting reason'})`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

await main();
