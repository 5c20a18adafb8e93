import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import type { UpgradeWorkloadCheckSpec } from '@capstan/api';
import { createKubeClient, NODES, type ResourceType } from '@capstan/kube';

// The health gates of a guarded upgrade (docs/day2.md): the workload API answers, every Node is Ready and runs the
// new version, and every workload the user named is available. Read through the cluster's admin kubeconfig, each
// request bounded.

/** How long one gate request may take. */
const GATE_REQUEST_TIMEOUT_MS = 5_000;

const apps = (kind: string, plural: string): ResourceType => ({
  group: 'apps',
  version: 'v1',
  kind,
  plural,
  namespaced: true,
});
const WORKLOAD_TYPES: Record<UpgradeWorkloadCheckSpec['kind'], ResourceType> = {
  Deployment: apps('Deployment', 'deployments'),
  StatefulSet: apps('StatefulSet', 'statefulsets'),
  DaemonSet: apps('DaemonSet', 'daemonsets'),
};

interface WorkloadStatus {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    desiredNumberScheduled?: number;
    numberAvailable?: number;
  };
  metadata: { generation?: number };
}

/** Why a workload is not available, or undefined when it is. */
export function workloadProblem(check: UpgradeWorkloadCheckSpec, obj: WorkloadStatus): string | undefined {
  const name = `${check.kind} ${check.namespace}/${check.name}`;
  const status = obj.status ?? {};
  if (check.kind === 'DaemonSet') {
    const desired = status.desiredNumberScheduled ?? 0;
    const available = status.numberAvailable ?? 0;
    return available < desired ? `${name} has ${available} of ${desired} pods available` : undefined;
  }
  const desired = obj.spec?.replicas ?? 1;
  const available =
    check.kind === 'StatefulSet' ? (status.readyReplicas ?? 0) : (status.availableReplicas ?? 0);
  return available < desired ? `${name} has ${available} of ${desired} replicas available` : undefined;
}

/**
 * The first gate that fails, or undefined when all pass: the API answers, every Node is Ready and reports `version`,
 * every named workload is available.
 */
export async function failingGate(
  kubeconfig: string,
  version: string,
  checks: readonly UpgradeWorkloadCheckSpec[],
): Promise<string | undefined> {
  let client;
  try {
    client = createKubeClient(
      { kubeconfig },
      { requestTimeoutMs: GATE_REQUEST_TIMEOUT_MS, fieldManager: 'capstan-upgrade-gates' },
    );
  } catch (error) {
    return `the cluster's kubeconfig cannot be used: ${(error as Error).message}`;
  }
  try {
    let nodes: V1Node[];
    try {
      nodes = (await client.resource<V1Node & KubernetesObject>(NODES).list()).items;
    } catch (error) {
      return `the workload API does not answer: ${(error as Error).message.split('\n')[0]}`;
    }
    if (nodes.length === 0) return 'the cluster has no Nodes';
    const core = version.replace(/\+.*$/, '');
    for (const node of nodes) {
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'True')
        return `Node ${node.metadata?.name} is not Ready (${ready?.reason ?? 'no Ready condition'})`;
      const kubelet = node.status?.nodeInfo?.kubeletVersion ?? '';
      if (!kubelet.startsWith(core))
        return `Node ${node.metadata?.name} runs ${kubelet || 'an unknown version'}, not ${version}`;
    }
    for (const check of checks) {
      let obj: WorkloadStatus | undefined;
      try {
        obj = await client
          .resource<KubernetesObject & WorkloadStatus>(WORKLOAD_TYPES[check.kind])
          .getIfExists({ namespace: check.namespace, name: check.name });
      } catch (error) {
        return `${check.kind} ${check.namespace}/${check.name} cannot be read: ${(error as Error).message.split('\n')[0]}`;
      }
      if (!obj) return `${check.kind} ${check.namespace}/${check.name} does not exist`;
      const problem = workloadProblem(check, obj);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    await client.close();
  }
}
