/** Cluster phases (upstream cluster_phase_types.go). `Failed` is kept for conversion only and never set. */
export const ClusterPhase = {
  Pending: 'Pending',
  Provisioning: 'Provisioning',
  Provisioned: 'Provisioned',
  Deleting: 'Deleting',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;
export type ClusterPhase = (typeof ClusterPhase)[keyof typeof ClusterPhase];

/** Machine phases (upstream machine_phase_types.go). `Failed` is kept for conversion only and never set. */
export const MachinePhase = {
  Pending: 'Pending',
  Provisioning: 'Provisioning',
  Provisioned: 'Provisioned',
  Running: 'Running',
  Updating: 'Updating',
  Deleting: 'Deleting',
  Deleted: 'Deleted',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;
export type MachinePhase = (typeof MachinePhase)[keyof typeof MachinePhase];

/** MachineDeployment phases (upstream machinedeployment_types.go). */
export const MachineDeploymentPhase = {
  ScalingUp: 'ScalingUp',
  ScalingDown: 'ScalingDown',
  Running: 'Running',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;
export type MachineDeploymentPhase = (typeof MachineDeploymentPhase)[keyof typeof MachineDeploymentPhase];
