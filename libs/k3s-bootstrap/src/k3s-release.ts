/** The K3s build a version that names only the Kubernetes release gets (`v1.31.4` -> `v1.31.4+k3s1`). */
export const DEFAULT_K3S_BUILD = 'k3s1';

/**
 * A Kubernetes version as the K3s release that ships it: `v1.34.4` -> `v1.34.4+k3s1`; a version with build metadata
 * (`v1.34.4+k3s2`) is taken as is. K3s clusters are versioned by release everywhere (K3sControlPlane, MachineDeployment
 * templates, Machines), as cluster-api-k3s does, because that is what their Nodes report as kubelet version: upstream
 * Cluster API's core compares the two strings and never sees a Machine up to date otherwise.
 */
export function k3sRelease(version: string): string {
  return version.includes('+') ? version : `${version}+${DEFAULT_K3S_BUILD}`;
}
