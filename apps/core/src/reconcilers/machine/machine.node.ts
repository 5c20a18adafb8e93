import { type V1Node } from '@kubernetes/client-node';
import { ANNOTATIONS, NODE_TAINTS, type Cluster, type Machine } from '@capstan/api';
import { getControllerOf } from '@capstan/kube';
import { patchNode } from '../../remote/nodes.js';
import {
  WorkloadClusterUnavailableError,
  type WorkloadClusterAccess,
  type WorkloadClusters,
} from '../../remote/workload-clusters.js';
import { type NodeObservation } from './machine.status.js';

/** Label domains the core copies from a Machine to its Node (upstream machine_controller_node_labels.go). */
const SYNCED_LABEL_DOMAINS = [
  'node-role.kubernetes.io',
  'node-restriction.kubernetes.io',
  'node.cluster.x-k8s.io',
];

export interface NodeLookup {
  observation: NodeObservation;
  access?: WorkloadClusterAccess;
}

/**
 * Finds the Machine's Node: by `status.nodeRef` once known, else by `spec.providerID` in the workload cluster's
 * Node cache. Says what it waits for while the cluster, its kubeconfig or the providerID are not there yet.
 */
export async function lookUpNode(
  machine: Machine,
  cluster: Cluster | undefined,
  workloads: WorkloadClusters,
): Promise<NodeLookup> {
  const namespace = machine.metadata!.namespace!;
  const clusterName = machine.spec.clusterName;
  if (!cluster)
    return { observation: { state: 'waiting', message: `Cluster ${clusterName} does not exist` } };
  if (cluster.status?.initialization?.infrastructureProvisioned !== true) {
    return {
      observation: {
        state: 'waiting',
        message: 'Waiting for Cluster status.initialization.infrastructureProvisioned to be true',
      },
    };
  }
  const nodeName = machine.status?.nodeRef?.name;
  if (!nodeName && !machine.spec.providerID) {
    return {
      observation: {
        state: 'waiting',
        message: `Waiting for ${machine.spec.infrastructureRef?.kind ?? 'the infrastructure'} to report spec.providerID`,
      },
    };
  }
  let access: WorkloadClusterAccess | undefined;
  try {
    access = await workloads.access(namespace, clusterName);
  } catch (error) {
    if (!(error instanceof WorkloadClusterUnavailableError)) throw error;
    return { observation: { state: 'connectionDown', message: error.message } };
  }
  if (!access) {
    const message =
      cluster.status?.initialization?.controlPlaneInitialized === true
        ? `Secret ${clusterName}-kubeconfig does not exist`
        : 'Waiting for Cluster control plane to be initialized';
    return { observation: { state: 'waiting', message } };
  }
  const node = nodeName
    ? access.nodes.getByName(undefined, nodeName)
    : workloads.nodeByProviderID(access, machine.spec.providerID!);
  return { observation: node ? { state: 'found', node } : { state: 'notFound' }, access };
}

/**
 * Puts upstream's annotations on the Node (cluster name and namespace, machine, owner), copies the Machine's
 * node-role / node-restriction / node.cluster.x-k8s.io labels and lifts the uninitialized taint the bootstrap
 * provider put on, in one write, only when something differs.
 */
export async function syncNode(
  access: WorkloadClusterAccess,
  node: V1Node,
  machine: Machine,
): Promise<boolean> {
  const owner = getControllerOf(machine);
  const previouslySynced = (node.metadata?.annotations?.[ANNOTATIONS.nodeLabelsFromMachine] ?? '')
    .split(',')
    .filter((key) => key !== '');
  const wanted = Object.entries(machine.metadata?.labels ?? {}).filter(([key]) => isSyncedLabel(key));
  const labels: Record<string, string | null> = Object.fromEntries(wanted);
  for (const key of previouslySynced) if (!(key in labels)) labels[key] = null;
  const annotations: Record<string, string | null> = {
    [ANNOTATIONS.nodeClusterName]: machine.spec.clusterName,
    [ANNOTATIONS.nodeClusterNamespace]: machine.metadata!.namespace!,
    [ANNOTATIONS.nodeMachine]: machine.metadata!.name!,
    [ANNOTATIONS.nodeOwnerKind]: owner?.kind ?? null,
    [ANNOTATIONS.nodeOwnerName]: owner?.name ?? null,
    [ANNOTATIONS.nodeLabelsFromMachine]:
      wanted.length > 0
        ? wanted
            .map(([key]) => key)
            .sort()
            .join(',')
        : null,
  };
  // With its labels in place the node may take workloads: upstream lifts the uninitialized taint after the label sync.
  return patchNode(access.client, node, { annotations, labels, removeTaints: [NODE_TAINTS.uninitialized] });
}

function isSyncedLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return SYNCED_LABEL_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`));
}
