// The clusters of `npm run bench:upstream -- --topology`, as platform teams create them: each side's ClusterClass and
// its templates, applied once before the timed part, then per cluster only a Cluster whose spec.topology names the
// class. Capstan: the capstan-k3s class of `capstan generate cluster --flavor topology`
// (libs/cluster-templates/templates/cluster-template-sim-topology.yaml). Upstream: the docker provider's in-memory quick-start as
// the pinned release ships it (clusterclass-in-memory.yaml and cluster-template-in-memory.yaml).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { getCondition, RESOURCES, type ClusterClass } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import { substitute, type Manifest } from '@capstan/manifests';
import { eventually, repoRoot, upstreamTemplate, type UpstreamClusterApi } from '@capstan/testing';

/** The shape of every cluster (as BenchClusterShape says it). */
export interface TopologyShape {
  namespace: string;
  version: string;
  workers: number;
}

export interface TopologyClusters {
  /** The ClusterClass and its templates, in their file's order (the templates first). */
  classObjects: Manifest[];
  /** The Cluster `name`: spec.topology naming the class, 1 control plane machine, md-0 of the shape's workers. */
  cluster: (name: string) => Manifest;
}

const isClassObject = (manifest: Manifest) =>
  manifest.kind === 'ClusterClass' || manifest.kind.endsWith('Template');

function theCluster(manifests: Manifest[], source: string): Manifest {
  const cluster = manifests.find((manifest) => manifest.kind === 'Cluster');
  if (!cluster) throw new Error(`${source}: no Cluster`);
  return cluster;
}

/** The workers' MachineDeployment class both classes have. */
const WORKER_CLASS = 'default-worker';

/**
 * Capstan's capstan-k3s class and templates, and per cluster the template's Cluster with simMode shared and
 * provisioningDelaySeconds 0: what the flat side sets on the SimCluster and SimMachineTemplates it creates. The
 * template's platform baseline (a ConfigMap and a ClusterResourceSet, and the Cluster's label selecting it) is left
 * out, as the flat side has none.
 */
export function capstanTopologyClusters(shape: TopologyShape): TopologyClusters {
  const path = join(repoRoot(), 'libs', 'cluster-templates', 'templates', 'cluster-template-sim-topology.yaml');
  const template = readFileSync(path, 'utf8');
  const render = (name: string): Manifest[] =>
    parseAllDocuments(
      substitute(template, {
        CLUSTER_NAME: name,
        NAMESPACE: shape.namespace,
        KUBERNETES_VERSION: shape.version,
        CONTROL_PLANE_MACHINE_COUNT: '1',
        WORKER_MACHINE_COUNT: String(shape.workers),
        SIM_MODE: 'shared',
        SIM_PROVISIONING_DELAY_SECONDS: '0',
      }),
    )
      .map((doc) => {
        if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]!.message}`);
        return doc.toJS() as Manifest | null;
      })
      .filter((manifest): manifest is Manifest => manifest !== null);
  const rendered = render('class-only');
  checkWorkers(theCluster(rendered, path), path);
  return {
    classObjects: rendered.filter(isClassObject),
    cluster: (name) => {
      const cluster = theCluster(render(name), path);
      const { labels: _baseline, ...metadata } = cluster.metadata;
      return { ...cluster, metadata };
    },
  };
}

/**
 * Upstream's in-memory class and templates, and per cluster its cluster template's Cluster. The DevMachineTemplates'
 * startupDuration (VM 10 s, node, API server and etcd 2 s each in upstream's file) is set to 0s: the flat side's
 * in-memory quick-start uses vmStartupSeconds 0 and componentStartupSeconds 0, as the sim boots its machines at once.
 * The class's worker classes get the rollout strategy upstream's MachineDeployment defaulting webhook would give their
 * MachineDeployments (RollingUpdate, maxSurge 1, maxUnavailable 0): no webhook is served here, and upstream's
 * MachineDeployment controller refuses one without a strategy ("unexpected deployment strategy type"). The flat
 * side's quick-start writes the same strategy out.
 */
export function upstreamTopologyClusters(
  upstream: UpstreamClusterApi,
  shape: TopologyShape,
): TopologyClusters {
  const classFile = 'clusterclass-in-memory.yaml';
  const clusterFile = 'cluster-template-in-memory.yaml';
  const cluster = (name: string) =>
    theCluster(
      upstreamTemplate(upstream, clusterFile, {
        namespace: shape.namespace,
        values: {
          CLUSTER_NAME: name,
          KUBERNETES_VERSION: shape.version,
          CONTROL_PLANE_MACHINE_COUNT: '1',
          WORKER_MACHINE_COUNT: String(shape.workers),
        },
      }),
      clusterFile,
    );
  checkWorkers(cluster('class-only'), clusterFile);
  return {
    classObjects: upstreamTemplate(upstream, classFile, { namespace: shape.namespace })
      .filter(isClassObject)
      .map((manifest) =>
        manifest.kind === 'DevMachineTemplate'
          ? withoutStartupTime(manifest, classFile)
          : manifest.kind === 'ClusterClass'
            ? withDefaultWorkerRollout(manifest)
            : manifest,
      ),
    cluster,
  };
}

interface InMemoryProvisioning {
  provisioning?: { startupDuration?: string };
}

/** A DevMachineTemplate whose in-memory VM, node, API server and etcd come up at once. */
function withoutStartupTime(template: Manifest, source: string): Manifest {
  const copy = structuredClone(template) as Manifest & {
    spec?: { template?: { spec?: { backend?: { inMemory?: Record<string, InMemoryProvisioning> } } } };
  };
  const inMemory = copy.spec?.template?.spec?.backend?.inMemory;
  const parts = Object.values(inMemory ?? {}).filter((part) => part.provisioning !== undefined);
  if (parts.length === 0)
    throw new Error(`${source}: DevMachineTemplate ${template.metadata.name} has no in-memory provisioning`);
  for (const part of parts) part.provisioning!.startupDuration = '0s';
  return copy;
}

interface WorkerClass {
  rollout?: { strategy?: { type?: string } & Record<string, unknown> } & Record<string, unknown>;
}

/** A ClusterClass whose MachineDeployment classes without a rollout strategy get the defaulting webhook's. */
function withDefaultWorkerRollout(clusterClass: Manifest): Manifest {
  const copy = structuredClone(clusterClass) as Manifest & {
    spec?: { workers?: { machineDeployments?: WorkerClass[] } };
  };
  for (const worker of copy.spec?.workers?.machineDeployments ?? []) {
    if (worker.rollout?.strategy?.type) continue;
    worker.rollout = {
      ...worker.rollout,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    };
  }
  return copy;
}

/** The template's Cluster has the MachineDeployment this bench counts on: md-0 of the worker class. */
function checkWorkers(cluster: Manifest, source: string): void {
  const spec = (
    cluster as Manifest & {
      spec?: { topology?: { workers?: { machineDeployments?: { class?: string; name?: string }[] } } };
    }
  ).spec;
  const deployments = spec?.topology?.workers?.machineDeployments ?? [];
  if (deployments.length !== 1 || deployments[0]!.class !== WORKER_CLASS || deployments[0]!.name !== 'md-0') {
    throw new Error(
      `${source}: the Cluster's topology has not exactly one MachineDeployment md-0 of class ${WORKER_CLASS}`,
    );
  }
}

/**
 * Waits until the ClusterClass among `classObjects` says VariablesReady: a topology controller (Capstan's and
 * upstream's alike) reconciles no Cluster of a class before that.
 */
export async function waitForClassReady(
  client: KubeClient,
  namespace: string,
  classObjects: Manifest[],
): Promise<void> {
  const name = classObjects.find((manifest) => manifest.kind === 'ClusterClass')?.metadata.name;
  if (!name) throw new Error('no ClusterClass among the class objects');
  await eventually(
    async () => {
      const clusterClass = await client
        .resource<ClusterClass>(RESOURCES.ClusterClass)
        .get({ namespace, name });
      return getCondition(clusterClass.status?.conditions, 'VariablesReady')?.status === 'True';
    },
    { message: `ClusterClass ${namespace}/${name} VariablesReady`, timeoutMs: 120_000, intervalMs: 500 },
  );
}
