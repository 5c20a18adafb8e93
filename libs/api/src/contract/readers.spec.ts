import { readBootstrapConfig } from './bootstrap-config.js';
import { readControlPlane } from './control-plane.js';
import { readInfrastructureCluster } from './infrastructure-cluster.js';
import { readInfrastructureMachine } from './infrastructure-machine.js';

// Provider objects shaped as upstream providers write them: CAPD's DockerCluster/DockerMachine, CABPK's
// KubeadmConfig and KCP, once at v1beta1 (Cluster API <= 1.10) and once at v1beta2 (1.11+).

const time = '2026-01-01T10:00:00Z';

describe('infrastructure cluster', () => {
  const v1beta1 = {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'DockerCluster',
    spec: { controlPlaneEndpoint: { host: '172.18.0.3', port: 6443 } },
    status: {
      ready: true,
      failureDomains: {
        'fd-b': { controlPlane: false, attributes: { zone: 'b' } },
        'fd-a': { controlPlane: true },
      },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: time }],
      v1beta2: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: time },
        ],
      },
    },
  };
  const v1beta2 = {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
    kind: 'DockerCluster',
    spec: { controlPlaneEndpoint: { host: '172.18.0.3', port: 6443 } },
    status: {
      initialization: { provisioned: true },
      failureDomains: [
        { name: 'fd-a', controlPlane: true },
        { name: 'fd-b', controlPlane: false, attributes: { zone: 'b' } },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: '',
          lastTransitionTime: time,
          observedGeneration: 2,
        },
      ],
    },
  };
  const expected = {
    provisioned: true,
    controlPlaneEndpoint: { host: '172.18.0.3', port: 6443 },
    failureDomains: [
      { name: 'fd-a', controlPlane: true },
      { name: 'fd-b', controlPlane: false, attributes: { zone: 'b' } },
    ],
  };

  it('reads the v1beta2 contract', () => {
    expect(readInfrastructureCluster(v1beta2, 'v1beta2')).toEqual({
      ...expected,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: '',
          lastTransitionTime: time,
          observedGeneration: 2,
        },
      ],
    });
  });

  it('reads the v1beta1 contract: status.ready and map-shaped failure domains, v1beta2 conditions first', () => {
    expect(readInfrastructureCluster(v1beta1, 'v1beta1')).toEqual({
      ...expected,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: time }],
    });
  });

  it('falls back to v1beta1 fields when no contract is given, and is strict when one is', () => {
    expect(readInfrastructureCluster(v1beta1)).toMatchObject(expected);
    for (const [obj, contract] of [
      [v1beta1, 'v1beta2'],
      [v1beta2, 'v1beta1'],
    ] as const) {
      const read = readInfrastructureCluster(obj, contract);
      expect(read.provisioned).toBe(false);
      expect(read.failureDomains).toBeUndefined();
    }
  });

  it('reports nothing for a fresh object: no endpoint until host and port are set', () => {
    const fresh = { spec: { controlPlaneEndpoint: { host: '', port: 0 } } };
    expect(readInfrastructureCluster(fresh)).toEqual({ provisioned: false, conditions: [] });
  });
});

describe('infrastructure machine', () => {
  const addresses = [
    { type: 'Hostname', address: 'demo-md-0-abcde' },
    { type: 'InternalIP', address: '172.18.0.4' },
  ];

  it('reads the v1beta2 contract', () => {
    const obj = {
      spec: { providerID: 'docker:////demo-md-0-abcde' },
      status: { initialization: { provisioned: true }, addresses, failureDomain: 'fd-a', conditions: [] },
    };
    expect(readInfrastructureMachine(obj, 'v1beta2')).toEqual({
      provisioned: true,
      providerID: 'docker:////demo-md-0-abcde',
      addresses,
      failureDomain: 'fd-a',
      conditions: [],
    });
  });

  it('reads the v1beta1 contract, with the deprecated spec.failureDomain, dropping malformed addresses', () => {
    const obj = {
      spec: { providerID: 'docker:////demo-md-0-abcde', failureDomain: 'fd-b' },
      status: {
        ready: true,
        addresses: [...addresses, { type: 'Bogus', address: 'x' }, { type: 'InternalIP' }],
      },
    };
    expect(readInfrastructureMachine(obj, 'v1beta1')).toEqual({
      provisioned: true,
      providerID: 'docker:////demo-md-0-abcde',
      addresses,
      failureDomain: 'fd-b',
      conditions: [],
    });
    expect(readInfrastructureMachine(obj).provisioned).toBe(true);
    expect(readInfrastructureMachine(obj, 'v1beta2').provisioned).toBe(false);
  });

  it('has no providerID before the provider set one', () => {
    expect(readInfrastructureMachine({ spec: { providerID: '' } })).toEqual({
      provisioned: false,
      addresses: [],
      conditions: [],
    });
  });
});

describe('bootstrap config', () => {
  it('reads the v1beta2 contract', () => {
    const obj = {
      status: { initialization: { dataSecretCreated: true }, dataSecretName: 'demo-md-0-abcde' },
    };
    expect(readBootstrapConfig(obj, 'v1beta2')).toEqual({
      dataSecretCreated: true,
      dataSecretName: 'demo-md-0-abcde',
      conditions: [],
    });
  });

  it('reads the v1beta1 contract and falls back to it', () => {
    const obj = { status: { ready: true, dataSecretName: 'demo-md-0-abcde' } };
    expect(readBootstrapConfig(obj, 'v1beta1')).toEqual({
      dataSecretCreated: true,
      dataSecretName: 'demo-md-0-abcde',
      conditions: [],
    });
    expect(readBootstrapConfig(obj).dataSecretCreated).toBe(true);
    expect(readBootstrapConfig(obj, 'v1beta2').dataSecretCreated).toBe(false);
  });
});

describe('control plane', () => {
  const v1beta2 = {
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2',
    kind: 'KubeadmControlPlane',
    spec: { replicas: 3, version: 'v1.31.0' },
    status: {
      initialization: { controlPlaneInitialized: true },
      selector: 'cluster.x-k8s.io/cluster-name=demo,cluster.x-k8s.io/control-plane',
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      upToDateReplicas: 1,
      version: 'v1.30.0',
      versions: [
        { version: 'v1.31.0', replicas: 1 },
        { version: 'v1.30.0', replicas: 2 },
      ],
      conditions: [
        { type: 'Available', status: 'True', reason: 'Available', message: '', lastTransitionTime: time },
      ],
    },
  };
  const v1beta1 = {
    apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1',
    kind: 'KubeadmControlPlane',
    spec: { replicas: 3, version: 'v1.31.0' },
    status: {
      initialized: true,
      ready: true,
      selector: 'cluster.x-k8s.io/cluster-name=demo,cluster.x-k8s.io/control-plane',
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: 1,
      unavailableReplicas: 1,
      version: 'v1.30.0',
    },
  };

  it('reads the v1beta2 contract', () => {
    expect(readControlPlane(v1beta2, 'v1beta2')).toEqual({
      initialized: true,
      desiredReplicas: 3,
      selector: 'cluster.x-k8s.io/cluster-name=demo,cluster.x-k8s.io/control-plane',
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      upToDateReplicas: 1,
      version: 'v1.31.0',
      statusVersion: 'v1.30.0',
      versions: [
        { version: 'v1.31.0', replicas: 1 },
        { version: 'v1.30.0', replicas: 2 },
      ],
      conditions: [
        { type: 'Available', status: 'True', reason: 'Available', message: '', lastTransitionTime: time },
      ],
    });
  });

  it('reads the v1beta1 contract: updatedReplicas, and availability from unavailableReplicas', () => {
    expect(readControlPlane(v1beta1, 'v1beta1')).toMatchObject({
      initialized: true,
      availableReplicas: 2,
      upToDateReplicas: 1,
      readyReplicas: 3,
    });
    expect(readControlPlane(v1beta1)).toMatchObject({
      initialized: true,
      availableReplicas: 2,
      upToDateReplicas: 1,
    });
    expect(readControlPlane(v1beta1, 'v1beta2')).toMatchObject({
      initialized: false,
      availableReplicas: undefined,
      upToDateReplicas: undefined,
    });
  });

  it('treats a missing unavailableReplicas as 0 and reads an endpoint the control plane provides', () => {
    const moved = {
      spec: { replicas: 1, controlPlaneEndpoint: { host: 'cp.example.com', port: 443 } },
      status: { ready: true },
    };
    expect(readControlPlane(moved, 'v1beta1')).toMatchObject({
      initialized: true,
      availableReplicas: 1,
      controlPlaneEndpoint: { host: 'cp.example.com', port: 443 },
    });
  });
});
