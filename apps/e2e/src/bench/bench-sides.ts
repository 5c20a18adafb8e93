// The two sides the cluster benchmarks run on fresh management servers: Capstan (its five services, or the all-in-one
// process, with the sim in shared mode) and upstream Cluster API (core, kubeadm bootstrap and control plane, and the
// docker provider's in-memory backend). Each says which processes are its controllers and which its stand-in for the
// workload clusters, and how to create one cluster of the benchmarks' shape.
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES } from '@capstan/api';
import type { KubeClient, ResourceType } from '@capstan/kube';
import { installCrds, ManifestApplier, type Manifest } from '@capstan/manifests';
import {
  inMemoryQuickStart,
  installCapstanDefinitions,
  startLocalServices,
  startUpstreamManagers,
  stopLocalServices,
  stopUpstreamManagers,
  upstreamCrds,
  type LocalEnvironment,
  type UpstreamClusterApi,
  type UpstreamManager,
} from '@capstan/testing';
import { createSimK3sCluster } from '../sim-cluster-fixture.js';
import { logErrors } from './bench-machine.js';
import { BENCH_SIM_ENV, simProcesses, type ClusterWorkload } from './cluster-workload.js';
import { capstanTopologyClusters, upstreamTopologyClusters, waitForClassReady, type TopologyClusters } from './topology-clusters.js';
import type { BenchSide } from './upstream-report.js';

const UPSTREAM_MANAGERS: UpstreamManager[] = ['core', 'kubeadm-bootstrap', 'kubeadm-control-plane', 'docker'];

/** The management cluster's servers the benchmarks measure, by the names libs/testing gives their processes. */
export const MANAGEMENT_PROCESSES: Record<string, string> = {
  'kube-apiserver': 'management kube-apiserver',
  etcd: 'management etcd',
  'kube-controller-manager': 'management kube-controller-manager',
};

/** The shape of every benchmark cluster: one control plane machine and a MachineDeployment of `workers`. */
export interface BenchClusterShape {
  namespace: string;
  /** The workload clusters' Kubernetes version. */
  version: string;
  workers: number;
  /**
   * Each cluster from the side's ClusterClass (a Cluster with spec.topology), the class applied once when the side
   * starts, before the timed part; otherwise its objects one by one.
   */
  topology?: boolean;
}

/** The workload side of one run: the processes to measure, how to create one cluster, how to stop it all. */
export interface SideUnderTest {
  controllers: { service: string; pid: number }[];
  /** The stand-in's processes now (Capstan's come with the first cluster). */
  standIns: () => { service: string; pid: number }[];
  createCluster: (name: string) => Promise<void>;
  /** The controllers' Prometheus endpoints (controller_runtime_reconcile_total). */
  metricsUrls: string[];
  logDir: string;
  stop: () => Promise<void>;
}

/** The plural of the quick-start's kinds (Cluster, DevCluster, KubeadmControlPlane, ...): all are the kind + s. */
function resourceOf(manifest: Manifest): ResourceType {
  const [group, version] = manifest.apiVersion.split('/') as [string, string];
  return { group, version, kind: manifest.kind, plural: `${manifest.kind.toLowerCase()}s`, namespaced: true };
}

/** Applies the class objects and waits for the ClusterClass; createCluster then creates only the Cluster. */
async function applyClass(kc: KubeConfig, client: KubeClient, shape: BenchClusterShape, topology: TopologyClusters): Promise<(name: string) => Promise<void>> {
  const applier = new ManifestApplier(kc);
  for (const manifest of topology.classObjects) await applier.apply(manifest, { fieldManager: 'capstan-bench' });
  await waitForClassReady(client, shape.namespace, topology.classObjects);
  return async (name) => {
    await client.resource(RESOURCES.Cluster).create(topology.cluster(name) as KubernetesObject);
  };
}

async function startCapstanSide(
  env: LocalEnvironment,
  kc: KubeConfig,
  client: KubeClient,
  workDir: string,
  shape: BenchClusterShape,
  allInOne: boolean,
): Promise<SideUnderTest> {
  await installCapstanDefinitions(kc);
  const logDir = join(workDir, 'logs');
  // No CAPSTAN_SIM_ETCD_URL: the sim runs its own etcd, so the management servers serve the management cluster only,
  // as on the upstream side.
  const services = await startLocalServices({
    kubeconfigPath: env.kubeconfigPath,
    natsUrl: env.natsUrl,
    logDir,
    simStateDir: env.simStateDir,
    env: { ...BENCH_SIM_ENV, CAPSTAN_SIM_ETCD_URL: undefined },
    allInOne,
  });
  const nats = env.processes.find((p) => p.name === 'nats-server')!;
  let createFromClass: ((name: string) => Promise<void>) | undefined;
  try {
    createFromClass = shape.topology ? await applyClass(kc, client, shape, capstanTopologyClusters(shape)) : undefined;
  } catch (error) {
    await stopLocalServices(services);
    throw error;
  }
  return {
    // The NATS server carries Capstan's events between its services: it counts with them.
    controllers: [
      // The all-in-one's services share its one process (the sampler counts a pid once).
      ...services.map((s) => ({ service: allInOne ? 'all-in-one' : s.name, pid: s.pid })),
      { service: 'nats-server', pid: nats.pid },
    ],
    standIns: () => simProcesses(env.simStateDir),
    createCluster: (name) =>
      createFromClass?.(name) ??
      createSimK3sCluster(client, {
        namespace: shape.namespace,
        name,
        version: shape.version,
        controlPlaneReplicas: 1,
        workers: shape.workers,
        mode: 'shared',
      }),
    metricsUrls: services.map((s) => `${s.url}/metrics`),
    logDir,
    stop: () => stopLocalServices(services),
  };
}

async function startUpstreamSide(
  env: LocalEnvironment,
  kc: KubeConfig,
  client: KubeClient,
  workDir: string,
  shape: BenchClusterShape,
  upstream: UpstreamClusterApi,
): Promise<SideUnderTest> {
  await installCrds(kc, new ManifestApplier(kc), upstreamCrds(upstream, UPSTREAM_MANAGERS), { fieldManager: 'capstan-bench' });
  const managers = await startUpstreamManagers({
    upstream,
    kubeconfigPath: env.kubeconfigPath,
    workDir,
    managers: UPSTREAM_MANAGERS,
    // The topology controller (and the ClusterClass one) is alpha in v1.14, off by default.
    ...(shape.topology && { extraArgs: { core: ['--feature-gates=ClusterTopology=true'] } }),
    readyTimeoutMs: 120_000,
  });
  const docker = managers.find((m) => m.name === 'upstream-docker')!;
  let createFromClass: ((name: string) => Promise<void>) | undefined;
  try {
    createFromClass = shape.topology ? await applyClass(kc, client, shape, upstreamTopologyClusters(upstream, shape)) : undefined;
  } catch (error) {
    await stopUpstreamManagers(managers);
    throw error;
  }
  return {
    controllers: managers.filter((m) => m !== docker).map((m) => ({ service: m.name, pid: m.pid })),
    standIns: () => [{ service: 'upstream-docker (in-memory)', pid: docker.pid }],
    createCluster: async (name) => {
      if (createFromClass) return createFromClass(name);
      // No simulated startup time, as the sim boots its machines at once.
      const manifests = inMemoryQuickStart({
        name,
        namespace: shape.namespace,
        version: shape.version,
        controlPlaneReplicas: 1,
        workerReplicas: shape.workers,
        vmStartupSeconds: 0,
        componentStartupSeconds: 0,
      });
      for (const manifest of manifests) {
        await client.resource(resourceOf(manifest)).create(manifest as KubernetesObject);
      }
    },
    // The docker provider is the stand-in, but its DevMachine and DevCluster controllers are the counterparts of the
    // machine-provider's and cluster-provider's: their reconciles count.
    metricsUrls: managers.map((m) => m.metricsUrl),
    logDir: workDir,
    stop: () => stopUpstreamManagers(managers),
  };
}

/** Starts one side's controllers against `env` (CRDs installed first); the caller stops them before the servers. */
export function startSide(
  side: BenchSide,
  env: LocalEnvironment,
  kc: KubeConfig,
  client: KubeClient,
  workDir: string,
  shape: BenchClusterShape,
  upstream: UpstreamClusterApi,
): Promise<SideUnderTest> {
  return side === 'upstream'
    ? startUpstreamSide(env, kc, client, workDir, shape, upstream)
    : startCapstanSide(env, kc, client, workDir, shape, side === 'Capstan all-in-one');
}

/**
 * Ends a side's run in order (the bench's informers and client, the side's controllers, the servers) and notes the
 * error lines of the controllers' logs under `label`.
 */
export async function stopSideRun(
  label: string,
  run: { workload: ClusterWorkload; client: KubeClient; under: SideUnderTest | undefined; env: LocalEnvironment },
  errorNotes: string[],
): Promise<void> {
  await run.workload.stop();
  await run.client.close();
  await run.under?.stop();
  await run.env.stop();
  if (run.under) {
    const errors = logErrors(run.under.logDir);
    errorNotes.push(
      `- ${label} (${run.under.logDir}): ${errors.length === 0 ? 'none' : `${errors.length} log file(s) with errors`}`,
      ...errors.map((e) => `  - ${e}`),
    );
  }
}
