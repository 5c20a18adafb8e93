import type { Cluster, K3sConfigSpec as ApiK3sConfigSpec, Machine } from '@capstan/api';
import type {
  K3sBootstrapInput,
  K3sConfigSpec,
  K3sFile,
  K3sRegistries,
  K3sRole,
  K3sServerConfigSpec,
} from '@capstan/k3s-bootstrap';
import { k3sRelease } from '@capstan/k3s-bootstrap';
import type { ClusterCertificates } from '@capstan/pki';

/**
 * The K3s release to install: the K3sConfig's `spec.version` when set, else the Machine's Kubernetes
 * version. A version with build metadata (`+k3s2`) is taken as is; a plain one gets the first K3s build.
 */
export function k3sReleaseFor(
  configVersion: string | undefined,
  machineVersion: string | undefined,
): string | undefined {
  const version = configVersion || machineVersion;
  return version ? k3sRelease(version) : undefined;
}

/**
 * Server settings with the Cluster's network as defaults: pods and services CIDRs and the service domain
 * apply unless the K3sConfig sets them, so every server of a cluster agrees on them.
 */
export function serverConfigWithClusterDefaults(
  server: ApiK3sConfigSpec['serverConfig'],
  cluster: Cluster,
): K3sServerConfigSpec {
  const network = cluster.spec?.clusterNetwork;
  const pods = network?.pods?.cidrBlocks ?? [];
  const services = network?.services?.cidrBlocks ?? [];
  const merged: K3sServerConfigSpec = { ...(server ?? {}) };
  if (!merged.clusterCIDR && pods.length > 0) merged.clusterCIDR = pods.join(',');
  if (!merged.serviceCIDR && services.length > 0) merged.serviceCIDR = services.join(',');
  if (!merged.clusterDomain && network?.serviceDomain) merged.clusterDomain = network.serviceDomain;
  return merged;
}

export interface RenderInputs {
  role: K3sRole;
  spec: ApiK3sConfigSpec;
  /** The files with every `contentFrom` already resolved, in spec order. */
  files: K3sFile[];
  /** `spec.privateRegistriesConfig` with its Secrets read (resolveRegistries). */
  registries?: K3sRegistries;
  version: string;
  machine: Machine;
  cluster: Cluster;
  token: string;
  certificates?: ClusterCertificates;
}

/**
 * Maps the API objects onto the renderer's input. The providerID goes in as a kubelet arg only when the
 * Machine already has one (bring-your-own hosts, or data rendered again after its secret was deleted);
 * otherwise the infrastructure sets it on the Node (the sim registers its Nodes with it, clouds run a
 * cloud controller manager).
 */
export function bootstrapInputFor(inputs: RenderInputs): K3sBootstrapInput {
  const { spec, cluster, machine } = inputs;
  const endpoint = cluster.spec?.controlPlaneEndpoint;
  if (!endpoint) throw new TypeError('bootstrapInputFor: the cluster has no control plane endpoint');
  const k3sSpec: K3sConfigSpec = {
    version: inputs.version,
    ...(inputs.role !== 'agent' && {
      serverConfig: serverConfigWithClusterDefaults(spec.serverConfig, cluster),
    }),
    ...(spec.agentConfig && { agentConfig: spec.agentConfig }),
    ...(inputs.files.length > 0 && { files: inputs.files }),
    ...(inputs.registries && { registries: inputs.registries }),
    ...(spec.preK3sCommands && { preK3sCommands: spec.preK3sCommands }),
    ...(spec.postK3sCommands && { postK3sCommands: spec.postK3sCommands }),
    ...(spec.airGapped !== undefined && { airGapped: spec.airGapped }),
    ...(spec.airGappedInstallScriptPath && { airGappedInstallScriptPath: spec.airGappedInstallScriptPath }),
  };
  return {
    role: inputs.role,
    spec: k3sSpec,
    endpoint: { host: endpoint.host, port: endpoint.port },
    token: inputs.token,
    ...(machine.spec.providerID && { providerID: machine.spec.providerID }),
    ...(inputs.role !== 'agent' && inputs.certificates && { certificates: inputs.certificates }),
  };
}
