import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { type ClusterObjects, type DescribedObject } from '@capstan/describe';
import { CliError } from '../output.js';

const CAPI = { group: 'cluster.x-k8s.io', version: 'v1beta2' };
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

export interface ContractReference {
  apiGroup: string;
  kind: string;
  name: string;
}

/** Finds a provider kind's plural and the version that speaks the v1beta2 contract (its CRD's contract label). */
export async function resolveReference(kc: KubeConfig, ref: Pick<ContractReference, 'apiGroup' | 'kind'>): Promise<{ plural: string; version: string }> {
  const crds = await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition();
  const crd = crds.items.find((c) => c.spec.group === ref.apiGroup && c.spec.names.kind === ref.kind);
  if (!crd) throw new CliError(`no CRD serves ${ref.kind} in group ${ref.apiGroup}`);
  const version =
    crd.metadata?.labels?.['cluster.x-k8s.io/v1beta2'] ?? crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
  return { plural: crd.spec.names.plural, version };
}

/** Reads one object of a custom kind; a missing one is refused as `<Kind> <namespace>/<name> not found`. */
export async function getObject<T = DescribedObject>(
  kc: KubeConfig,
  resource: { group: string; version: string; plural: string; kind: string },
  namespace: string,
  name: string,
): Promise<T> {
  const { group, version, plural } = resource;
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group, version, namespace, plural, name })) as T;
  } catch (error) {
    if ((error as { code?: number }).code === 404) throw new CliError(`${resource.kind} ${namespace}/${name} not found`);
    throw error;
  }
}

export function getCluster(kc: KubeConfig, namespace: string, name: string): Promise<DescribedObject> {
  return getObject(kc, { ...CAPI, plural: 'clusters', kind: 'Cluster' }, namespace, name);
}

/** The Cluster's spec.controlPlaneRef; refused when it has none, as a cluster of workers only has no control plane to act on. */
export function controlPlaneRefOf(cluster: DescribedObject): ContractReference {
  const ref = (cluster.spec as { controlPlaneRef?: ContractReference } | undefined)?.controlPlaneRef;
  if (!ref?.name) {
    throw new CliError(`Cluster ${cluster.metadata.namespace ?? ''}/${cluster.metadata.name} has no control plane (spec.controlPlaneRef)`);
  }
  return ref;
}

/** Everything `describe cluster` shows, read from the management cluster. */
export async function fetchClusterObjects(kc: KubeConfig, namespace: string, name: string): Promise<ClusterObjects> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const cluster = await getCluster(kc, namespace, name);
  const list = async (plural: string) =>
    ((await api.listNamespacedCustomObject({ ...CAPI, namespace, plural, labelSelector: `${CLUSTER_NAME_LABEL}=${name}` })) as { items: DescribedObject[] }).items;
  const referenced = async (ref: ContractReference | undefined): Promise<DescribedObject | undefined> => {
    if (!ref?.name) return undefined;
    const { plural, version } = await resolveReference(kc, ref);
    return (await api
      .getNamespacedCustomObject({ group: ref.apiGroup, version, namespace, plural, name: ref.name })
      .catch(() => undefined)) as DescribedObject | undefined;
  };
  const spec = cluster.spec as { infrastructureRef?: ContractReference; controlPlaneRef?: ContractReference } | undefined;
  const [infrastructure, controlPlane, machineDeployments, machineSets, machines] = await Promise.all([
    referenced(spec?.infrastructureRef),
    referenced(spec?.controlPlaneRef),
    list('machinedeployments'),
    list('machinesets'),
    list('machines'),
  ]);
  return { cluster, infrastructure, controlPlane, machineDeployments, machineSets, machines };
}
