/** Finalizers (upstream names for the core kinds; Capstan names for its providers). */
export const FINALIZERS = {
  cluster: 'cluster.cluster.x-k8s.io',
  machine: 'machine.cluster.x-k8s.io',
  machineSet: 'cluster.x-k8s.io/machineset',
  machineDeployment: 'cluster.x-k8s.io/machinedeployment',
  machineSetTopology: 'machineset.topology.cluster.x-k8s.io',
  machineDeploymentTopology: 'machinedeployment.topology.cluster.x-k8s.io',
  simCluster: 'simcluster.infrastructure.capstan.dev',
  simMachine: 'simmachine.infrastructure.capstan.dev',
  k3sConfig: 'k3sconfig.bootstrap.capstan.dev',
  k3sControlPlane: 'k3scontrolplane.controlplane.capstan.dev',
  etcdSnapshot: 'etcdsnapshot.controlplane.capstan.dev',
} as const;
