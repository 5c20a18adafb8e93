import { ConditionReason } from '@capstan/api';
import type { K3sRole } from '@capstan/k3s-bootstrap';

/** What the reconciler observed about one K3sConfig's machine and cluster. */
export interface BootstrapFacts {
  /** The Machine carries `cluster.x-k8s.io/control-plane`. */
  controlPlaneMachine: boolean;
  /** The K3sConfig carries the init-server annotation of the control plane provider. */
  designatedInitServer: boolean;
  /** `Cluster.status.initialization.infrastructureProvisioned`. */
  infrastructureProvisioned: boolean;
  /** `Cluster.spec.controlPlaneEndpoint` has a host and a port. */
  endpointKnown: boolean;
  /** The Cluster, or its K3sControlPlane, reports the control plane initialized. */
  controlPlaneInitialized: boolean;
}

export type BootstrapDecision =
  { action: 'render'; role: K3sRole } | { action: 'wait'; reason: string; message: string };

/** Reasons of `DataSecretAvailable` / `Ready` while bootstrap data cannot be rendered yet. */
export const WaitingReason = {
  ClusterInfrastructure: ConditionReason.WaitingForClusterInfrastructureReady,
  ControlPlaneInitialized: ConditionReason.WaitingForControlPlaneInitialized,
  ClusterCertificates: 'WaitingForClusterCertificates',
  MachineOwner: 'WaitingForMachineOwner',
  Cluster: 'WaitingForCluster',
  FileSecret: 'WaitingForFileSecret',
  RegistrySecret: 'WaitingForRegistrySecret',
} as const;

/**
 * The role a machine bootstraps as, or what it waits for. Only the machine the control plane provider
 * designated initializes the cluster, and only while the control plane is not initialized; every other
 * control plane machine joins as a server, and worker machines as agents, once it is. Everybody waits
 * for the cluster infrastructure and its endpoint, which every role writes into its config.
 */
export function decideBootstrap(facts: BootstrapFacts): BootstrapDecision {
  if (!facts.infrastructureProvisioned || !facts.endpointKnown) {
    return {
      action: 'wait',
      reason: WaitingReason.ClusterInfrastructure,
      message: facts.infrastructureProvisioned
        ? 'Waiting for the cluster control plane endpoint'
        : 'Waiting for the cluster infrastructure to be provisioned',
    };
  }
  if (facts.controlPlaneMachine && facts.designatedInitServer && !facts.controlPlaneInitialized) {
    return { action: 'render', role: 'init-server' };
  }
  if (!facts.controlPlaneInitialized) {
    return {
      action: 'wait',
      reason: WaitingReason.ControlPlaneInitialized,
      message: facts.controlPlaneMachine
        ? 'Waiting for the control plane to be initialized before joining as a server'
        : 'Waiting for the control plane to be initialized before joining as an agent',
    };
  }
  return { action: 'render', role: facts.controlPlaneMachine ? 'join-server' : 'agent' };
}
