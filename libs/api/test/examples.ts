// Upstream-style example objects of every kind, as `clusterctl generate cluster` and the quick start write them.
// Shared by the unit tests (class validation) and the integration tests (API server validation).

export interface ExampleObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const CLUSTER = 'demo';
const ref = (apiGroup: string, kind: string, name: string) => ({ apiGroup, kind, name });

export function cluster(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: CLUSTER },
    spec: {
      clusterNetwork: { pods: { cidrBlocks: ['10.42.0.0/16'] }, services: { cidrBlocks: ['10.43.0.0/16'] } },
      infrastructureRef: ref('infrastructure.capstan.dev', 'SimCluster', CLUSTER),
      controlPlaneRef: ref('controlplane.capstan.dev', 'K3sControlPlane', `${CLUSTER}-control-plane`),
    },
  };
}

export function machine(name = `${CLUSTER}-md-0-abcde`): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: {
      clusterName: CLUSTER,
      version: 'v1.31.4',
      bootstrap: { configRef: ref('bootstrap.capstan.dev', 'K3sConfig', name) },
      infrastructureRef: ref('infrastructure.capstan.dev', 'SimMachine', name),
      deletion: { nodeDrainTimeoutSeconds: 300 },
      readinessGates: [{ conditionType: 'capstan.dev/AgentReady' }],
    },
  };
}

function machineTemplate(): Record<string, unknown> {
  return {
    metadata: { labels: { 'cluster.x-k8s.io/deployment-name': `${CLUSTER}-md-0` } },
    spec: {
      clusterName: CLUSTER,
      version: 'v1.31.4',
      bootstrap: { configRef: ref('bootstrap.capstan.dev', 'K3sConfigTemplate', `${CLUSTER}-md-0`) },
      infrastructureRef: ref('infrastructure.capstan.dev', 'SimMachineTemplate', `${CLUSTER}-md-0`),
    },
  };
}

export function machineSet(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineSet',
    metadata: { name: `${CLUSTER}-md-0-x7k2p` },
    spec: {
      clusterName: CLUSTER,
      replicas: 2,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': `${CLUSTER}-md-0` } },
      template: machineTemplate(),
      deletion: { order: 'Oldest' },
    },
  };
}

export function machineDeployment(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: { name: `${CLUSTER}-md-0` },
    spec: {
      clusterName: CLUSTER,
      replicas: 3,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': `${CLUSTER}-md-0` } },
      template: machineTemplate(),
    },
  };
}

export function machineHealthCheck(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineHealthCheck',
    metadata: { name: `${CLUSTER}-md-0-unhealthy` },
    spec: {
      clusterName: CLUSTER,
      selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': `${CLUSTER}-md-0` } },
      checks: {
        unhealthyNodeConditions: [
          { type: 'Ready', status: 'False', timeoutSeconds: 300 },
          { type: 'Ready', status: 'Unknown', timeoutSeconds: 300 },
        ],
      },
      remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
    },
  };
}

export function simCluster(): ExampleObject {
  return {
    apiVersion: 'infrastructure.capstan.dev/v1alpha1',
    kind: 'SimCluster',
    metadata: { name: CLUSTER },
    spec: { failureDomains: [{ name: 'zone-a', controlPlane: true, attributes: { rack: '1' } }] },
  };
}

export function simMachine(name = `${CLUSTER}-md-0-abcde`): ExampleObject {
  return {
    apiVersion: 'infrastructure.capstan.dev/v1alpha1',
    kind: 'SimMachine',
    metadata: { name },
    spec: { provisioningDelaySeconds: 2, nodeNotReadyAfterSeconds: 60 },
  };
}

export function simMachineTemplate(): ExampleObject {
  return {
    apiVersion: 'infrastructure.capstan.dev/v1alpha1',
    kind: 'SimMachineTemplate',
    metadata: { name: `${CLUSTER}-md-0` },
    spec: { template: { spec: { provisioningDelaySeconds: 1 } } },
  };
}

function k3sConfigSpec(): Record<string, unknown> {
  return {
    version: 'v1.31.4+k3s1',
    agentConfig: {
      nodeLabels: ['capstan.dev/pool=md-0'],
      nodeTaints: ['dedicated=infra:NoSchedule'],
      kubeletArgs: ['max-pods=110'],
    },
    files: [
      { path: '/etc/motd', content: 'managed by capstan', permissions: '0644', owner: 'root:root' },
      { path: '/etc/registry.crt', contentFrom: { secret: { name: 'registry-ca', key: 'ca.crt' } } },
    ],
    privateRegistriesConfig: {
      mirrors: {
        'docker.io': {
          endpoint: ['https://registry.example.com:5000'],
          rewrite: { '^rancher/(.*)': 'mirrorproject/rancher-images/$1' },
        },
      },
      configs: {
        'registry.example.com:5000': {
          authSecret: { name: 'registry-auth' },
          tls: { tlsConfigSecret: { name: 'registry-tls' }, insecureSkipVerify: false },
        },
      },
    },
    preK3sCommands: ['echo pre'],
    postK3sCommands: ['echo post'],
  };
}

export function k3sConfig(name = `${CLUSTER}-md-0-abcde`): ExampleObject {
  return {
    apiVersion: 'bootstrap.capstan.dev/v1alpha1',
    kind: 'K3sConfig',
    metadata: { name },
    spec: k3sConfigSpec(),
  };
}

export function k3sConfigTemplate(): ExampleObject {
  return {
    apiVersion: 'bootstrap.capstan.dev/v1alpha1',
    kind: 'K3sConfigTemplate',
    metadata: { name: `${CLUSTER}-md-0` },
    spec: { template: { spec: k3sConfigSpec() } },
  };
}

export function k3sControlPlane(): ExampleObject {
  return {
    apiVersion: 'controlplane.capstan.dev/v1alpha1',
    kind: 'K3sControlPlane',
    metadata: { name: `${CLUSTER}-control-plane` },
    spec: {
      replicas: 3,
      version: 'v1.31.4',
      machineTemplate: {
        metadata: { labels: { tier: 'control-plane' } },
        spec: {
          infrastructureRef: ref(
            'infrastructure.capstan.dev',
            'SimMachineTemplate',
            `${CLUSTER}-control-plane`,
          ),
          deletion: { nodeDrainTimeoutSeconds: 120 },
        },
      },
      k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'], tlsSANs: ['demo.example.com'] } },
      remediation: { maxRetry: 3, retryPeriodSeconds: 60 },
    },
  };
}

export function k3sControlPlaneTemplate(): ExampleObject {
  return {
    apiVersion: 'controlplane.capstan.dev/v1alpha1',
    kind: 'K3sControlPlaneTemplate',
    metadata: { name: 'capstan-k3s-control-plane' },
    spec: {
      template: {
        metadata: { labels: { tier: 'control-plane' } },
        spec: {
          machineTemplate: {
            metadata: { labels: { tier: 'control-plane' } },
            spec: { deletion: { nodeDrainTimeoutSeconds: 120 } },
          },
          k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'] } },
          rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
          remediation: { maxRetry: 3 },
          etcd: { snapshotScheduleCron: '0 */6 * * *', snapshotRetention: 5 },
        },
      },
    },
  };
}

export function simClusterTemplate(): ExampleObject {
  return {
    apiVersion: 'infrastructure.capstan.dev/v1alpha1',
    kind: 'SimClusterTemplate',
    metadata: { name: 'capstan-k3s-cluster' },
    spec: { template: { spec: { mode: 'dedicated', failureDomains: [{ name: 'zone-a', controlPlane: true }] } } },
  };
}

export function machinePool(): ExampleObject {
  const name = `${CLUSTER}-mp-0`;
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachinePool',
    metadata: { name },
    spec: {
      clusterName: CLUSTER,
      replicas: 2,
      failureDomains: ['zone-a'],
      template: {
        metadata: { labels: { pool: 'mp-0' } },
        spec: {
          clusterName: CLUSTER,
          version: 'v1.31.4',
          bootstrap: { configRef: ref('bootstrap.cluster.x-k8s.io', 'KubeadmConfig', name) },
          infrastructureRef: ref('infrastructure.cluster.x-k8s.io', 'DockerMachinePool', name),
        },
      },
    },
  };
}

export function machineDrainRule(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDrainRule',
    metadata: { name: 'drain-storage-last' },
    spec: {
      drain: { behavior: 'Drain', order: 100 },
      machines: [
        {
          selector: {
            matchExpressions: [{ key: 'cluster.x-k8s.io/control-plane', operator: 'DoesNotExist' }],
          },
          clusterSelector: { matchLabels: { stage: 'production' } },
        },
      ],
      pods: [
        {
          selector: { matchLabels: { app: 'storage' } },
          namespaceSelector: { matchLabels: { tier: 'infra' } },
        },
      ],
    },
  };
}

export function clusterResourceSet(): ExampleObject {
  return {
    apiVersion: 'addons.cluster.x-k8s.io/v1beta2',
    kind: 'ClusterResourceSet',
    metadata: { name: 'cni' },
    spec: {
      clusterSelector: { matchLabels: { cni: 'calico' } },
      resources: [
        { name: 'calico-manifests', kind: 'ConfigMap' },
        { name: 'calico-credentials', kind: 'Secret' },
      ],
      strategy: 'Reconcile',
    },
  };
}

export function clusterResourceSetBinding(): ExampleObject {
  return {
    apiVersion: 'addons.cluster.x-k8s.io/v1beta2',
    kind: 'ClusterResourceSetBinding',
    metadata: { name: CLUSTER },
    spec: {
      clusterName: CLUSTER,
      bindings: [
        {
          clusterResourceSetName: 'cni',
          resources: [
            {
              name: 'calico-manifests',
              kind: 'ConfigMap',
              applied: true,
              hash: 'sha256:5d41402abc4b2a76b9719d911017c592',
              lastAppliedTime: '2025-06-01T12:00:00Z',
            },
          ],
        },
      ],
    },
  };
}

const IP_POOL = ref('ipam.cluster.x-k8s.io', 'InClusterIPPool', `${CLUSTER}-pool`);

export function ipAddressClaim(): ExampleObject {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: { name: `${CLUSTER}-md-0-abcde-eth0` },
    spec: { clusterName: CLUSTER, poolRef: IP_POOL },
  };
}

export function ipAddress(): ExampleObject {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddress',
    metadata: { name: `${CLUSTER}-md-0-abcde-eth0` },
    spec: {
      address: '10.0.0.5',
      prefix: 24,
      gateway: '10.0.0.1',
      claimRef: { name: `${CLUSTER}-md-0-abcde-eth0` },
      poolRef: IP_POOL,
    },
  };
}

/** Cluster-scoped, as upstream's. */
export function extensionConfig(): ExampleObject {
  return {
    apiVersion: 'runtime.cluster.x-k8s.io/v1beta2',
    kind: 'ExtensionConfig',
    metadata: { name: 'test-extension' },
    spec: {
      clientConfig: {
        service: { namespace: 'test-extension-system', name: 'test-extension-webhook', port: 8443 },
      },
      namespaceSelector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['default'] }],
      },
      settings: { defaultAllHandlersToBlocking: 'true' },
    },
  };
}

/** Upstream's quick start ClusterClass, shortened: templates of upstream's providers, a variable, inline patches. */
export function clusterClass(): ExampleObject {
  const templateRef = (apiVersion: string, kind: string, name: string) => ({
    templateRef: { apiVersion, kind, name },
  });
  const infrastructure = 'infrastructure.cluster.x-k8s.io/v1beta2';
  const controlPlane = 'controlplane.cluster.x-k8s.io/v1beta2';
  const checks = {
    unhealthyNodeConditions: [
      { type: 'Ready', status: 'Unknown', timeoutSeconds: 300 },
      { type: 'Ready', status: 'False', timeoutSeconds: 300 },
    ],
  };
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'ClusterClass',
    metadata: { name: 'quick-start' },
    spec: {
      controlPlane: {
        ...templateRef(controlPlane, 'KubeadmControlPlaneTemplate', 'quick-start-control-plane'),
        machineInfrastructure: templateRef(
          infrastructure,
          'DockerMachineTemplate',
          'quick-start-control-plane',
        ),
        healthCheck: { checks },
      },
      infrastructure: templateRef(infrastructure, 'DockerClusterTemplate', 'quick-start-cluster'),
      workers: {
        machineDeployments: [
          {
            class: 'default-worker',
            bootstrap: templateRef(
              'bootstrap.cluster.x-k8s.io/v1beta2',
              'KubeadmConfigTemplate',
              'quick-start-default-worker',
            ),
            infrastructure: templateRef(
              infrastructure,
              'DockerMachineTemplate',
              'quick-start-default-worker',
            ),
            healthCheck: { checks, remediation: { maxInFlight: '50%' } },
            rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
          },
        ],
      },
      variables: [
        {
          name: 'imageRepository',
          required: true,
          schema: {
            openAPIV3Schema: {
              type: 'string',
              default: '',
              example: 'registry.k8s.io',
              description: 'imageRepository is the registry images are pulled from; empty: the default.',
            },
          },
        },
        {
          name: 'podSecurityStandard',
          required: false,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                enabled: { type: 'boolean', default: true },
                enforce: {
                  type: 'string',
                  default: 'baseline',
                  enum: ['privileged', 'baseline', 'restricted'],
                },
              },
              default: { enabled: true, enforce: 'baseline' },
            },
          },
        },
      ],
      patches: [
        {
          name: 'imageRepository',
          description: 'Sets the imageRepository of the KubeadmControlPlane.',
          enabledIf: '{{ ne .imageRepository "" }}',
          definitions: [
            {
              selector: {
                apiVersion: controlPlane,
                kind: 'KubeadmControlPlaneTemplate',
                matchResources: { controlPlane: true },
              },
              jsonPatches: [
                {
                  op: 'add',
                  path: '/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository',
                  valueFrom: { variable: 'imageRepository' },
                },
              ],
            },
          ],
        },
        {
          name: 'loadBalancer',
          definitions: [
            {
              selector: {
                apiVersion: infrastructure,
                kind: 'DockerClusterTemplate',
                matchResources: { infrastructureCluster: true },
              },
              jsonPatches: [
                {
                  op: 'add',
                  path: '/spec/template/spec/loadBalancer',
                  value: { imageRepository: 'kindest', ports: [6443] },
                },
                {
                  op: 'replace',
                  path: '/spec/template/spec/loadBalancer/imageTag',
                  value: 'v20230510-486859a6',
                },
              ],
            },
          ],
        },
      ],
    },
  };
}

/**
 * Upstream's in-memory Cluster template (test/infrastructure/docker/templates/cluster-template-in-memory.yaml) with
 * its defaults filled in, plus variables of the quick start ClusterClass: a topology-based Cluster, no refs.
 */
export function topologyCluster(): ExampleObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'in-memory' },
    spec: {
      clusterNetwork: {
        services: { cidrBlocks: ['10.128.0.0/12'] },
        pods: { cidrBlocks: ['192.168.0.0/16'] },
        serviceDomain: 'cluster.local',
      },
      topology: {
        classRef: { name: 'in-memory', namespace: 'default' },
        version: 'v1.34.4',
        controlPlane: { replicas: 3 },
        workers: { machineDeployments: [{ class: 'default-worker', name: 'md-0', replicas: 5 }] },
        variables: [
          { name: 'imageRepository', value: 'registry.k8s.io' },
          { name: 'podSecurityStandard', value: { enabled: true, enforce: 'restricted', exemptions: ['kube-system'] } },
        ],
      },
    },
  };
}

/** One valid example of every kind. */
export function validExamples(): ExampleObject[] {
  return [
    cluster(),
    machine(),
    machineSet(),
    machineDeployment(),
    machineHealthCheck(),
    machinePool(),
    machineDrainRule(),
    clusterClass(),
    clusterResourceSet(),
    clusterResourceSetBinding(),
    ipAddressClaim(),
    ipAddress(),
    extensionConfig(),
    simCluster(),
    simMachine(),
    simMachineTemplate(),
    simClusterTemplate(),
    k3sConfig(),
    k3sConfigTemplate(),
    k3sControlPlane(),
    k3sControlPlaneTemplate(),
  ];
}
