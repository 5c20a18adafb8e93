import type { Manifest } from '@capstan/manifests';

// Upstream's in-memory quick-start (test/infrastructure/docker/templates/clusterclass-in-memory.yaml and
// cluster-template-in-memory.yaml, v1.14) written out as the objects its ClusterClass renders: a Cluster on a
// DevCluster with the in-memory backend, a KubeadmControlPlane on DevMachines, and a MachineDeployment of kubeadm
// workers. Flat rather than topology-based, so a core without the topology controller can run it; complete, so no
// defaulting webhook is needed.

export interface InMemoryQuickStartOptions {
  name: string;
  namespace: string;
  /** A Kubernetes version kubeadm supports, e.g. v1.34.4. */
  version: string;
  controlPlaneReplicas: number;
  workerReplicas: number;
  /** How long each part of an in-memory machine takes to come up (upstream's template: VM 10 s, the rest 2 s). */
  vmStartupSeconds?: number;
  componentStartupSeconds?: number;
}

const CORE = 'cluster.x-k8s.io/v1beta2';
const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
const INFRA = `${INFRA_GROUP}/v1beta2`;
const BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
const CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';

/** The kubelet flags upstream's in-memory template sets on every node (no eviction: the nodes are not real). */
const NODE_REGISTRATION = {
  criSocket: 'unix:///var/run/containerd/containerd.sock',
  kubeletExtraArgs: [{ name: 'eviction-hard', value: 'nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%' }],
};

export function inMemoryQuickStart(options: InMemoryQuickStartOptions): Manifest[] {
  const { name, namespace } = options;
  const meta = (objectName: string) => ({ name: objectName, namespace });
  const provisioning = (seconds: number) => ({ provisioning: { startupDuration: `${seconds}s`, startupJitter: '0.2' } });
  const component = provisioning(options.componentStartupSeconds ?? 2);
  const machineSpec = {
    backend: {
      inMemory: { vm: provisioning(options.vmStartupSeconds ?? 10), node: component, apiServer: component, etcd: component },
    },
  };
  const controlPlaneMachines = `${name}-control-plane`;
  const workerMachines = `${name}-md-0`;
  return [
    {
      apiVersion: CORE,
      kind: 'Cluster',
      metadata: meta(name),
      spec: {
        clusterNetwork: {
          services: { cidrBlocks: ['10.128.0.0/12'] },
          pods: { cidrBlocks: ['192.168.0.0/16'] },
          serviceDomain: 'cluster.local',
        },
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'DevCluster', name },
        controlPlaneRef: { apiGroup: CONTROL_PLANE_GROUP, kind: 'KubeadmControlPlane', name },
      },
    },
    {
      apiVersion: INFRA,
      kind: 'DevCluster',
      // The annotations the topology controller writes when it clones the DevClusterTemplate. They are needed, not
      // decoration: v1.14's in-memory backend stores its listener in the DevCluster's annotations and panics on a
      // DevCluster that has none.
      metadata: {
        ...meta(name),
        annotations: {
          'cluster.x-k8s.io/cloned-from-name': 'in-memory-cluster',
          'cluster.x-k8s.io/cloned-from-groupkind': `DevClusterTemplate.${INFRA_GROUP}`,
        },
      },
      spec: { backend: { inMemory: {} } },
    },
    { apiVersion: INFRA, kind: 'DevMachineTemplate', metadata: meta(controlPlaneMachines), spec: { template: { spec: machineSpec } } },
    {
      apiVersion: `${CONTROL_PLANE_GROUP}/v1beta2`,
      kind: 'KubeadmControlPlane',
      metadata: meta(name),
      spec: {
        replicas: options.controlPlaneReplicas,
        version: options.version,
        machineTemplate: {
          spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'DevMachineTemplate', name: controlPlaneMachines } },
        },
        kubeadmConfigSpec: {
          clusterConfiguration: { apiServer: { certSANs: ['localhost', '127.0.0.1', '0.0.0.0', 'host.docker.internal'] } },
          initConfiguration: { nodeRegistration: NODE_REGISTRATION },
          joinConfiguration: { nodeRegistration: NODE_REGISTRATION },
        },
      },
    },
    { apiVersion: INFRA, kind: 'DevMachineTemplate', metadata: meta(workerMachines), spec: { template: { spec: machineSpec } } },
    {
      apiVersion: `${BOOTSTRAP_GROUP}/v1beta2`,
      kind: 'KubeadmConfigTemplate',
      metadata: meta(workerMachines),
      spec: { template: { spec: { joinConfiguration: { nodeRegistration: NODE_REGISTRATION } } } },
    },
    {
      apiVersion: CORE,
      kind: 'MachineDeployment',
      metadata: meta(workerMachines),
      spec: {
        clusterName: name,
        replicas: options.workerReplicas,
        selector: { matchLabels: { 'cluster.x-k8s.io/cluster-name': name, 'cluster.x-k8s.io/deployment-name': workerMachines } },
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        template: {
          metadata: { labels: { 'cluster.x-k8s.io/cluster-name': name, 'cluster.x-k8s.io/deployment-name': workerMachines } },
          spec: {
            clusterName: name,
            version: options.version,
            bootstrap: { configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'KubeadmConfigTemplate', name: workerMachines } },
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: 'DevMachineTemplate', name: workerMachines },
          },
        },
      },
    },
  ];
}
