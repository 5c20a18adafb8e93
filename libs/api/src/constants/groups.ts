/** API groups and versions served by Capstan (ARCHITECTURE §4). */
export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';
export const CLUSTER_API_VERSION = 'v1beta2';
/** Upstream's other core groups (ClusterResourceSets, IP address management, Runtime SDK); also at CLUSTER_API_VERSION. */
export const ADDONS_GROUP = 'addons.cluster.x-k8s.io';
export const IPAM_GROUP = 'ipam.cluster.x-k8s.io';
export const RUNTIME_GROUP = 'runtime.cluster.x-k8s.io';
export const INFRASTRUCTURE_GROUP = 'infrastructure.capstan.dev';
export const BOOTSTRAP_GROUP = 'bootstrap.capstan.dev';
export const CONTROL_PLANE_GROUP = 'controlplane.capstan.dev';
/** The one API version every Capstan provider group serves. */
export const CAPSTAN_PROVIDER_VERSION = 'v1alpha1';

/** `group/version` as written in `apiVersion`. */
export function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** Splits an `apiVersion` into group and version (the core group has no slash). */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
