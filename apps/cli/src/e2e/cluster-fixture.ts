import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ManifestApplier, type Manifest } from '@capstan/manifests';
import { eventually, type CapstanUnderTest } from '@capstan/testing';
import { workloadKubeconfig } from '../commands/get.js';
import { getCluster } from '../describe/fetch.js';
import { waitForClusterAvailable } from '../demo/wait-for-cluster.js';
import { generateCluster } from '@capstan/cluster-templates';

export const CAPI = { group: 'cluster.x-k8s.io', version: 'v1beta2' };

/** Applies `capstan generate cluster` output for a sim cluster and waits until the Cluster is Available. */
export async function createSimCluster(
  capstan: CapstanUnderTest,
  name: string,
  counts: { controlPlane: number; workers: number; kubernetesVersion?: string },
): Promise<void> {
  const { kc, name: namespace } = capstan.namespace;
  const applier = new ManifestApplier(kc);
  const yaml = generateCluster({
    clusterName: name,
    infrastructure: 'sim',
    targetNamespace: namespace,
    kubernetesVersion: counts.kubernetesVersion ?? 'v1.34.4',
    controlPlaneMachineCount: counts.controlPlane,
    workerMachineCount: counts.workers,
    env: {},
  });
  for (const doc of parseAllDocuments(yaml)) await applier.apply(doc.toJS() as Manifest, { fieldManager: 'capstan-e2e' });
  await waitForClusterAvailable(kc, namespace, name, { timeoutMs: 240_000, onProgress: () => undefined });
}

/** A client of the workload cluster, through `<cluster>-kubeconfig` as a user would get it. */
export async function workloadClient(capstan: CapstanUnderTest, cluster: string): Promise<KubeConfig> {
  const workload = new KubeConfig();
  workload.loadFromString(await workloadKubeconfig(capstan.namespace.kc, capstan.namespace.name, cluster));
  return workload;
}

export async function readyNodes(workload: KubeConfig): Promise<V1Node[]> {
  const nodes = await workload.makeApiClient(CoreV1Api).listNode();
  return nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

export async function deleteClusterAndWait(capstan: CapstanUnderTest, name: string): Promise<void> {
  const { kc, name: namespace } = capstan.namespace;
  await kc.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ ...CAPI, namespace, plural: 'clusters', name });
  await eventually(async () => (await getCluster(kc, namespace, name).catch(() => undefined)) === undefined || undefined, {
    timeoutMs: 180_000,
    message: `Cluster ${name} deleted`,
  });
}
