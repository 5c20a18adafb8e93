import type { SimClusterMode } from '@capstan/api';
import { requireServerTls, type ParsedK3sBootstrap } from '@capstan/k3s-bootstrap';
import type { ApiEndpoint } from '@capstan/pki';
import { servingCertificateNames } from './api-server-certificates.js';
import type { ClusterApiSpec } from './cluster-api.js';
import { simulatedAddress, type NodeIdentity } from './node-object.js';
import { sharedClusterNodeLabels } from './shared-cluster-nodes.js';
import {
  K3S_DEFAULT_CLUSTER_CIDR,
  K3S_DEFAULT_CLUSTER_DOMAIN,
  K3S_DEFAULT_SERVICE_CIDR,
} from './service-network.js';

export interface SimMachineRef {
  namespace: string;
  name: string;
  uid: string;
  providerID: string;
}

export interface SimClusterRef {
  namespace: string;
  clusterName: string;
  mode: SimClusterMode;
  /** The cluster's control plane endpoint (the SimCluster's): what the init server serves. */
  endpoint: ApiEndpoint;
}

/** `sim://<namespace>/<name>`: the provider ID of a SimMachine and of its Node. */
export function simProviderID(namespace: string, name: string): string {
  return `sim://${namespace}/${name}`;
}

/**
 * What a server's bootstrap data says about the cluster API it serves: the CA material (a BootstrapDataError
 * names the first missing file), the token, the SANs and the service network.
 */
export function clusterApiSpecFrom(parsed: ParsedK3sBootstrap, cluster: SimClusterRef): ClusterApiSpec {
  return {
    namespace: cluster.namespace,
    clusterName: cluster.clusterName,
    mode: cluster.mode,
    endpoint: cluster.endpoint,
    identity: {
      tls: requireServerTls(parsed),
      token: parsed.token,
      endpointHost: cluster.endpoint.host,
      tlsSANs: parsed.tlsSANs,
      serviceCIDR: parsed.serviceCIDR ?? K3S_DEFAULT_SERVICE_CIDR,
      clusterCIDR: parsed.clusterCIDR ?? K3S_DEFAULT_CLUSTER_CIDR,
      clusterDomain: parsed.clusterDomain ?? K3S_DEFAULT_CLUSTER_DOMAIN,
    },
    ...(parsed.secretsEncryption && { secretsEncryption: true }),
  };
}

/** The names a server's serving certificate carries: the endpoint, its `tls-san`, the kubernetes Service, localhost. */
export function servingNamesOf(
  parsed: ParsedK3sBootstrap,
  cluster: SimClusterRef,
): { dnsNames: string[]; ipAddresses: string[] } {
  return servingCertificateNames({
    endpointHost: cluster.endpoint.host,
    tlsSANs: parsed.tlsSANs,
    serviceCIDR: parsed.serviceCIDR ?? K3S_DEFAULT_SERVICE_CIDR,
    clusterCIDR: parsed.clusterCIDR ?? K3S_DEFAULT_CLUSTER_CIDR,
    clusterDomain: parsed.clusterDomain ?? K3S_DEFAULT_CLUSTER_DOMAIN,
  });
}

/** Where the node's K3s goes: its `server:` URL, or for the init server the cluster endpoint it serves itself. */
export function serverEndpointOf(parsed: ParsedK3sBootstrap, cluster: SimClusterRef): ApiEndpoint {
  return parsed.endpoint ?? cluster.endpoint;
}

export function machineAddresses(
  machine: Pick<SimMachineRef, 'namespace' | 'name'>,
  nodeName: string,
): NodeIdentity['addresses'] {
  return [
    { type: 'InternalIP', address: simulatedAddress(machine.namespace, machine.name) },
    { type: 'Hostname', address: nodeName },
  ];
}

/** A host name is one DNS label: a machine name past 63 characters is cut there, as a cloud's hostname would be. */
export function hostnameOf(machineName: string): string {
  return machineName.length <= 63 ? machineName : machineName.slice(0, 63).replace(/[-.]+$/, '');
}

/**
 * The Node a machine registers: named after the machine's host name unless its K3s config sets `node-name`, with the
 * machine's provider ID (the one the bootstrap data passes the kubelet must agree; the machine's wins) and
 * the labels and taints of its K3s config; in shared mode also its cluster's labels, which its endpoint selects by.
 */
/** The Node a machine registers is named after its host name, unless its K3s config sets `node-name`. */
export function nodeNameOf(parsed: Pick<ParsedK3sBootstrap, 'nodeName'>, machineName: string): string {
  return parsed.nodeName ?? hostnameOf(machineName);
}

export function nodeIdentityFrom(
  parsed: ParsedK3sBootstrap,
  machine: SimMachineRef,
  cluster: Pick<SimClusterRef, 'namespace' | 'clusterName' | 'mode'>,
): NodeIdentity {
  const name = nodeNameOf(parsed, machine.name);
  return {
    name,
    providerID: machine.providerID,
    role: parsed.role,
    version: parsed.version,
    labels:
      cluster.mode === 'shared'
        ? { ...parsed.nodeLabels, ...sharedClusterNodeLabels(cluster.namespace, cluster.clusterName) }
        : parsed.nodeLabels,
    taints: parsed.nodeTaints,
    addresses: machineAddresses(machine, name),
    machineUID: machine.uid,
  };
}
