import { LABELS, RESOURCES, type ContractVersionedObjectReference } from '@capstan/api';
import type { ClusterObjects, DescribedObject } from '@capstan/describe';
import { isForbidden, isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';
import { ProviderKindError, type ProviderKinds } from '@capstan/provider-kit';

type Reference = Pick<ContractVersionedObjectReference, 'apiGroup' | 'kind' | 'name'>;

/**
 * What `capstan describe cluster` shows (apps/cli/src/describe/fetch.ts), read with `client`: the Cluster, the
 * infrastructure cluster and control plane it references, and the MachineDeployments, MachineSets and Machines
 * labelled with its name in its namespace. The dashboard passes a client impersonating the user, so RBAC decides: a
 * Cluster or a list the user may not read fails with the API server's answer. A referenced object that is missing,
 * not readable by the user, or of a kind no CRD serves is left out of the tree, as the CLI leaves it out.
 *
 * `kinds` resolves a reference's kind to its resource (Capstan's own kinds without a read, others from their CRDs).
 */
export async function readClusterObjects(
  client: KubeClient,
  kinds: ProviderKinds,
  namespace: string,
  name: string,
): Promise<ClusterObjects> {
  const get = async (type: ResourceType, objectName: string) =>
    (await client.resource(type).get({ namespace, name: objectName })) as unknown as DescribedObject;
  const list = async (type: ResourceType) =>
    (await client.resource(type).listAll({ namespace, labelSelector: `${LABELS.clusterName}=${name}` }))
      .items as unknown as DescribedObject[];
  const referenced = async (ref: Reference | undefined): Promise<DescribedObject | undefined> => {
    if (!ref?.name) return undefined;
    try {
      return await get(await kinds.resourceOf(ref.apiGroup, ref.kind), ref.name);
    } catch (error) {
      if (error instanceof ProviderKindError || isNotFound(error) || isForbidden(error)) return undefined;
      throw error;
    }
  };

  const cluster = await get(RESOURCES.Cluster, name);
  const spec = cluster.spec as { infrastructureRef?: Reference; controlPlaneRef?: Reference } | undefined;
  const [infrastructure, controlPlane, machineDeployments, machineSets, machines] = await Promise.all([
    referenced(spec?.infrastructureRef),
    referenced(spec?.controlPlaneRef),
    list(RESOURCES.MachineDeployment),
    list(RESOURCES.MachineSet),
    list(RESOURCES.Machine),
  ]);
  return { cluster, infrastructure, controlPlane, machineDeployments, machineSets, machines };
}
