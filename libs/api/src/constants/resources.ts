import {
  ADDONS_GROUP,
  BOOTSTRAP_GROUP,
  CAPSTAN_PROVIDER_VERSION,
  CLUSTER_API_GROUP,
  CLUSTER_API_VERSION,
  CONTROL_PLANE_GROUP,
  INFRASTRUCTURE_GROUP,
  IPAM_GROUP,
  RUNTIME_GROUP,
  apiVersionOf,
} from './groups.js';

/** Where a kind lives in the API: what a dynamic client needs to read, list or watch it. */
export interface ResourceDefinition {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  /** `group/version`. */
  readonly apiVersion: string;
}

function resource(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceDefinition {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    apiVersion: apiVersionOf(group, version),
  };
}

/** Every kind Capstan serves, by kind name. */
export const RESOURCES = {
  Cluster: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'Cluster', 'clusters'),
  Machine: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'Machine', 'machines'),
  MachineSet: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'MachineSet', 'machinesets'),
  MachineDeployment: resource(
    CLUSTER_API_GROUP,
    CLUSTER_API_VERSION,
    'MachineDeployment',
    'machinedeployments',
  ),
  MachineHealthCheck: resource(
    CLUSTER_API_GROUP,
    CLUSTER_API_VERSION,
    'MachineHealthCheck',
    'machinehealthchecks',
  ),
  MachinePool: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'MachinePool', 'machinepools'),
  MachineDrainRule: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'MachineDrainRule', 'machinedrainrules'),
  ClusterClass: resource(CLUSTER_API_GROUP, CLUSTER_API_VERSION, 'ClusterClass', 'clusterclasses'),
  ClusterResourceSet: resource(
    ADDONS_GROUP,
    CLUSTER_API_VERSION,
    'ClusterResourceSet',
    'clusterresourcesets',
  ),
  ClusterResourceSetBinding: resource(
    ADDONS_GROUP,
    CLUSTER_API_VERSION,
    'ClusterResourceSetBinding',
    'clusterresourcesetbindings',
  ),
  IPAddressClaim: resource(IPAM_GROUP, CLUSTER_API_VERSION, 'IPAddressClaim', 'ipaddressclaims'),
  IPAddress: resource(IPAM_GROUP, CLUSTER_API_VERSION, 'IPAddress', 'ipaddresses'),
  ExtensionConfig: resource(RUNTIME_GROUP, CLUSTER_API_VERSION, 'ExtensionConfig', 'extensionconfigs', false),
  SimCluster: resource(INFRASTRUCTURE_GROUP, CAPSTAN_PROVIDER_VERSION, 'SimCluster', 'simclusters'),
  SimClusterTemplate: resource(
    INFRASTRUCTURE_GROUP,
    CAPSTAN_PROVIDER_VERSION,
    'SimClusterTemplate',
    'simclustertemplates',
  ),
  SimMachine: resource(INFRASTRUCTURE_GROUP, CAPSTAN_PROVIDER_VERSION, 'SimMachine', 'simmachines'),
  SimMachineTemplate: resource(
    INFRASTRUCTURE_GROUP,
    CAPSTAN_PROVIDER_VERSION,
    'SimMachineTemplate',
    'simmachinetemplates',
  ),
  K3sConfig: resource(BOOTSTRAP_GROUP, CAPSTAN_PROVIDER_VERSION, 'K3sConfig', 'k3sconfigs'),
  K3sConfigTemplate: resource(
    BOOTSTRAP_GROUP,
    CAPSTAN_PROVIDER_VERSION,
    'K3sConfigTemplate',
    'k3sconfigtemplates',
  ),
  K3sControlPlane: resource(
    CONTROL_PLANE_GROUP,
    CAPSTAN_PROVIDER_VERSION,
    'K3sControlPlane',
    'k3scontrolplanes',
  ),
  K3sControlPlaneTemplate: resource(
    CONTROL_PLANE_GROUP,
    CAPSTAN_PROVIDER_VERSION,
    'K3sControlPlaneTemplate',
    'k3scontrolplanetemplates',
  ),
  EtcdSnapshot: resource(CONTROL_PLANE_GROUP, CAPSTAN_PROVIDER_VERSION, 'EtcdSnapshot', 'etcdsnapshots'),
} as const satisfies Record<string, ResourceDefinition>;

export type CapstanKind = keyof typeof RESOURCES;

export const ALL_RESOURCES: readonly ResourceDefinition[] = Object.values(RESOURCES);

/** The definition of a Capstan kind by API group and kind (references carry no version), if Capstan serves it. */
export function findResource(apiGroup: string, kind: string): ResourceDefinition | undefined {
  return ALL_RESOURCES.find((r) => r.group === apiGroup && r.kind === kind);
}

/** The CRD name of a kind: `<plural>.<group>`, as upstream's contract requires. */
export function crdName(resource: Pick<ResourceDefinition, 'plural' | 'group'>): string {
  return `${resource.plural}.${resource.group}`;
}
