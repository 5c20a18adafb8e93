import { ConflictException } from '@nestjs/common';
import { LABELS, RESOURCES, type Cluster, type MachineDeployment } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import type { ProviderKinds } from '@capstan/provider-kit';

// Where a replica count is written. A topology Cluster's replicas are fields of its topology: the topology controller
// owns its MachineDeployments and control plane and would set a count written there straight back. A topology
// MachineDeployment whose topology leaves `replicas` unset (the autoscaler's, upstream's rule) is scaled itself.

/** What was scaled: the object written, and the count it now asks for. */
export interface ScaleWritten {
  kind: string;
  name: string;
  replicas: number;
}

/** Scales a MachineDeployment as `client`'s user: through its Cluster's topology when the topology holds its count. */
export async function scaleMachineDeployment(
  client: KubeClient,
  namespace: string,
  name: string,
  replicas: number,
): Promise<ScaleWritten> {
  const deployments = client.resource<MachineDeployment>(RESOURCES.MachineDeployment);
  const deployment = await deployments.get({ namespace, name });
  const topologyName = deployment.metadata.labels?.[LABELS.topologyDeploymentName];
  if (topologyName !== undefined && deployment.metadata.labels?.[LABELS.topologyOwned] !== undefined) {
    const clusterName = deployment.spec.clusterName;
    const cluster = await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace, name: clusterName });
    const entries = cluster.spec?.topology?.workers?.machineDeployments ?? [];
    const index = entries.findIndex((entry) => entry.name === topologyName);
    if (index >= 0 && entries[index]!.replicas !== undefined) {
      const path = `/spec/topology/workers/machineDeployments/${index}`;
      // The test makes it a compare-and-swap on the entry: a list reordered meanwhile is refused, not miswritten.
      await client.resource<Cluster>(RESOURCES.Cluster).jsonPatch({ namespace, name: clusterName }, [
        { op: 'test', path: `${path}/name`, value: topologyName },
        { op: 'replace', path: `${path}/replicas`, value: replicas },
      ]);
      return { kind: 'Cluster', name: clusterName, replicas };
    }
  }
  const updated = await deployments.mergePatch({ namespace, name }, { spec: { replicas } });
  return { kind: 'MachineDeployment', name, replicas: updated.spec.replicas ?? replicas };
}

/**
 * Scales a Cluster's control plane as `client`'s user: `spec.topology.controlPlane.replicas` of a topology Cluster,
 * else `spec.replicas` of the object `spec.controlPlaneRef` names. The control plane's own rules (K3s wants an odd
 * count) are the API server's to refuse.
 */
export async function scaleControlPlane(
  client: KubeClient,
  kinds: ProviderKinds,
  namespace: string,
  name: string,
  replicas: number,
): Promise<ScaleWritten> {
  const clusters = client.resource<Cluster>(RESOURCES.Cluster);
  const cluster = await clusters.get({ namespace, name });
  if (cluster.spec?.topology) {
    await clusters.mergePatch({ namespace, name }, { spec: { topology: { controlPlane: { replicas } } } });
    return { kind: 'Cluster', name, replicas };
  }
  const ref = cluster.spec?.controlPlaneRef;
  if (!ref?.name)
    throw new ConflictException(`Cluster ${namespace}/${name} has no control plane (spec.controlPlaneRef)`);
  const type = await kinds.resourceOf(ref.apiGroup, ref.kind);
  await client.resource(type).mergePatch({ namespace, name: ref.name }, { spec: { replicas } });
  return { kind: ref.kind, name: ref.name, replicas };
}
