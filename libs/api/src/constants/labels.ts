/** Well-known labels (upstream `api/core/v1beta2` common_types.go, machine_types.go, machinedeployment_types.go). */
export const LABELS = {
  /** On machines and on every object that belongs to a cluster (provider objects, secrets). */
  clusterName: 'cluster.x-k8s.io/cluster-name',
  /** Empty value; on control plane machines and their provider objects. */
  controlPlane: 'cluster.x-k8s.io/control-plane',
  /** Name of the control plane object controlling a machine (may be a hash past 63 characters). */
  controlPlaneName: 'cluster.x-k8s.io/control-plane-name',
  /** Name of the MachineDeployment a MachineSet or Machine belongs to. */
  deploymentName: 'cluster.x-k8s.io/deployment-name',
  /** Name of the MachineSet controlling a machine (may be a hash past 63 characters). */
  setName: 'cluster.x-k8s.io/set-name',
  poolName: 'cluster.x-k8s.io/pool-name',
  /** Keeps the Machines of one MachineSet apart inside a MachineDeployment; value `<hash>-<random>`. */
  machineTemplateHash: 'machine-template-hash',
  /** On every component of a provider's manifest, e.g. `infrastructure-sim`. */
  provider: 'cluster.x-k8s.io/provider',
  watchFilter: 'cluster.x-k8s.io/watch-filter',
  interruptible: 'cluster.x-k8s.io/interruptible',
  topologyOwned: 'topology.cluster.x-k8s.io/owned',
  /** On a topology's MachineDeployments, their Machines and templates: the MachineDeployment's topology name. */
  topologyDeploymentName: 'topology.cluster.x-k8s.io/deployment-name',
} as const;

/** Label on a provider CRD naming the API versions that speak a contract, e.g. `cluster.x-k8s.io/v1beta2: v1alpha1`. */
export function contractLabelKey(contract: string): string {
  return `cluster.x-k8s.io/${contract}`;
}
