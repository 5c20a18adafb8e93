import type { Unstructured } from '../contract/unstructured.js';
import { CONVERSION_DATA_ANNOTATION } from './conversion-data.js';
import { ConversionError } from './conversion-error.js';
import { answerConversionReview } from './conversion-review.js';
import { convertObject, V1BETA1, V1BETA2 } from './convert.js';
import { durationToSeconds, parseGoDuration, secondsToDuration } from './durations.js';
import type { ApiVersionLookup } from './references.js';

const lookup: ApiVersionLookup = ({ group }) => {
  const versions: Record<string, string> = {
    'infrastructure.capstan.dev': 'v1alpha1',
    'bootstrap.capstan.dev': 'v1alpha1',
    'controlplane.capstan.dev': 'v1alpha1',
  };
  const version = versions[group];
  if (!version) throw new ConversionError(`no CRD with a contract label for group ${group}`);
  return `${group}/${version}`;
};

const up = (obj: Unstructured) => convertObject(obj, V1BETA2, lookup);
const down = (obj: Unstructured) => convertObject(obj, V1BETA1, lookup);
const annotationOf = (obj: Unstructured) =>
  (obj['metadata'] as { annotations?: Record<string, string> }).annotations?.[CONVERSION_DATA_ANNOTATION];

const metadata = { name: 'm-1', namespace: 'fleet', uid: 'u-1', resourceVersion: '7' };

describe('durations', () => {
  it('reads Go duration strings and truncates to whole seconds as upstream does', () => {
    expect(parseGoDuration('1m30s', 'f')).toBe(90);
    expect(parseGoDuration('1.5h', 'f')).toBe(5400);
    expect(parseGoDuration('300ms', 'f')).toBeCloseTo(0.3);
    expect(durationToSeconds('1.9s', 'f')).toBe(1);
    expect(durationToSeconds('500ms', 'f')).toBe(0);
    expect(durationToSeconds('10m', 'f')).toBe(600);
    expect(durationToSeconds('1000000h', 'f')).toBe(2_147_483_647);
    expect(() => parseGoDuration('ten minutes', 'spec.nodeDrainTimeout')).toThrow(
      'spec.nodeDrainTimeout: is not a duration such as "10s", "1m30s" or "1.5h"',
    );
  });

  it('writes seconds as Go writes a Duration', () => {
    expect([0, 10, 90, 600, 3600, 3723].map(secondsToDuration)).toEqual(['0s', '10s', '1m30s', '10m0s', '1h0m0s', '1h2m3s']);
  });
});

describe('Machine', () => {
  const v1beta2: Unstructured = {
    apiVersion: V1BETA2,
    kind: 'Machine',
    metadata,
    spec: {
      clusterName: 'c',
      bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name: 'm-1' }, dataSecretName: 's' },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'm-1' },
      version: 'v1.34.4',
      minReadySeconds: 5,
      deletion: { nodeDrainTimeoutSeconds: 600, nodeDeletionTimeoutSeconds: 10 },
    },
    status: {
      phase: 'Updating',
      failureDomain: 'fd-a',
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: false },
      nodeRef: { name: 'node-1' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: '2026-11-24T10:00:00Z' }],
      deprecated: { v1beta1: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-24T10:00:00Z' }] } },
      observedGeneration: 3,
    },
  };

  it('writes v1beta1 as upstream does: apiVersions from the contract, durations, old and new conditions apart', () => {
    const old = down(v1beta2);
    expect(old['apiVersion']).toBe(V1BETA1);
    expect(old['spec']).toEqual({
      clusterName: 'c',
      bootstrap: {
        configRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfig', name: 'm-1', namespace: 'fleet' },
        dataSecretName: 's',
      },
      infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'm-1', namespace: 'fleet' },
      version: 'v1.34.4',
      nodeDrainTimeout: '10m0s',
      nodeDeletionTimeout: '10s',
    });
    expect(old['status']).toMatchObject({
      phase: 'Running', // v1beta1 has no Updating
      bootstrapReady: true,
      infrastructureReady: false,
      nodeRef: { apiVersion: 'v1', kind: 'Node', name: 'node-1' },
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-24T10:00:00Z' }],
      v1beta2: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: '2026-11-24T10:00:00Z' }] },
    });
    expect(JSON.parse(annotationOf(old)!)).not.toHaveProperty('metadata');
  });

  it('round-trips v1beta2 -> v1beta1 -> v1beta2 exactly, v1beta2-only fields kept in the annotation', () => {
    expect(up(down(v1beta2))).toEqual(v1beta2);
  });

  it('reads a v1beta1 Machine written by a v1beta1 client (no annotation)', () => {
    const hub = up({
      apiVersion: V1BETA1,
      kind: 'Machine',
      metadata,
      spec: {
        clusterName: 'c',
        bootstrap: { configRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfig', name: 'b', uid: 'x' } },
        infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachine', name: 'i', namespace: 'fleet' },
        nodeDrainTimeout: '1m30s',
        version: '',
      },
      status: { bootstrapReady: false, infrastructureReady: true, phase: 'Running', failureReason: 'Boom' },
    });
    expect(hub['spec']).toEqual({
      clusterName: 'c',
      bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name: 'b' } },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'i' },
      deletion: { nodeDrainTimeoutSeconds: 90 },
    });
    expect(hub['status']).toEqual({
      initialization: { infrastructureProvisioned: true },
      phase: 'Running',
      deprecated: { v1beta1: { failureReason: 'Boom' } },
    });
  });

  it('refuses a reference whose apiVersion is not group/version, naming the field', () => {
    const bad = { apiVersion: V1BETA1, kind: 'Machine', metadata, spec: { clusterName: 'c', infrastructureRef: { apiVersion: 'a/b/c' } } };
    expect(() => up(bad)).toThrow('spec.infrastructureRef: apiVersion is not <group>/<version> or <version>');
  });
});

describe('MachineDeployment', () => {
  const v1beta1: Unstructured = {
    apiVersion: V1BETA1,
    kind: 'MachineDeployment',
    metadata,
    spec: {
      clusterName: 'c',
      replicas: 3,
      minReadySeconds: 10,
      revisionHistoryLimit: 1,
      rolloutAfter: '2026-11-24T10:00:00Z',
      selector: { matchLabels: { a: 'b' } },
      strategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: 1, maxUnavailable: 0, deletePolicy: 'Oldest' },
        remediation: { maxInFlight: '50%' },
      },
      template: {
        metadata: { labels: { a: 'b' } },
        spec: {
          clusterName: 'c',
          bootstrap: { configRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfigTemplate', name: 't' } },
          infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachineTemplate', name: 't' },
          version: 'v1.34.4',
        },
      },
    },
    status: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, v1beta2: { readyReplicas: 3, upToDateReplicas: 3 } },
  };

  it('splits the strategy three ways and moves minReadySeconds into the template, dropping revisionHistoryLimit', () => {
    const hub = up(v1beta1);
    expect(hub['spec']).toMatchObject({
      rollout: { after: '2026-11-24T10:00:00Z', strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
      deletion: { order: 'Oldest' },
      remediation: { maxInFlight: '50%' },
      template: { spec: { minReadySeconds: 10, infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 't' } } },
    });
    expect(hub['spec']).not.toHaveProperty('revisionHistoryLimit');
    expect(hub['status']).toEqual({
      replicas: 3,
      readyReplicas: 3,
      upToDateReplicas: 3,
      deprecated: { v1beta1: { readyReplicas: 2, updatedReplicas: 3 } },
    });
  });

  it('rebuilds the v1beta1 strategy on the way back', () => {
    const back = down(up(v1beta1));
    const { revisionHistoryLimit: _dropped, ...spec } = v1beta1['spec'] as Unstructured;
    const template = spec['template'] as Unstructured;
    expect(back['spec']).toEqual({
      ...spec,
      paused: false,
      template: {
        ...template,
        spec: {
          ...(template['spec'] as Unstructured),
          bootstrap: { configRef: { apiVersion: 'bootstrap.capstan.dev/v1alpha1', kind: 'K3sConfigTemplate', name: 't', namespace: 'fleet' } },
          infrastructureRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimMachineTemplate', name: 't', namespace: 'fleet' },
        },
      },
    });
    expect(back['status']).toEqual(v1beta1['status']);
  });
});

describe('MachineSet', () => {
  it('carries minReadySeconds 0 as unset and writes no annotation', () => {
    const hub: Unstructured = {
      apiVersion: V1BETA2,
      kind: 'MachineSet',
      metadata,
      spec: {
        clusterName: 'c',
        replicas: 2,
        selector: {},
        deletion: { order: 'Newest' },
        template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 't' } } },
      },
      status: { replicas: 2, availableReplicas: 2, deprecated: { v1beta1: { availableReplicas: 1 } } },
    };
    const old = down(hub);
    expect(annotationOf(old)).toBeUndefined();
    expect(old['spec']).toMatchObject({ deletePolicy: 'Newest' });
    expect(old['status']).toEqual({ replicas: 2, availableReplicas: 1, v1beta2: { availableReplicas: 2 } });
    expect(up(old)).toEqual(hub);
  });
});

describe('Cluster', () => {
  const hub: Unstructured = {
    apiVersion: V1BETA2,
    kind: 'Cluster',
    metadata: { name: 'c', namespace: 'fleet' },
    spec: {
      paused: false,
      clusterNetwork: { pods: { cidrBlocks: ['10.42.0.0/16'] }, apiServerPort: 0 },
      controlPlaneRef: { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane', name: 'c-cp' },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name: 'c' },
      controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
    },
    status: {
      initialization: { infrastructureProvisioned: true, controlPlaneInitialized: false },
      failureDomains: [
        { name: 'a', controlPlane: true },
        { name: 'b', controlPlane: false, attributes: { zone: 'b' } },
      ],
      controlPlane: { desiredReplicas: 1, readyReplicas: 1 },
      phase: 'Provisioned',
    },
  };

  it('turns failure domains into the v1beta1 map and explicit false back into false through the annotation', () => {
    const old = down(hub);
    expect(old['spec']).toMatchObject({
      paused: false,
      clusterNetwork: { pods: { cidrBlocks: ['10.42.0.0/16'] } },
      controlPlaneRef: { apiVersion: 'controlplane.capstan.dev/v1alpha1', kind: 'K3sControlPlane', name: 'c-cp', namespace: 'fleet' },
    });
    expect((old['spec'] as Unstructured)['clusterNetwork']).not.toHaveProperty('apiServerPort');
    expect(old['status']).toMatchObject({
      infrastructureReady: true,
      controlPlaneReady: false,
      failureDomains: { a: { controlPlane: true }, b: { controlPlane: false, attributes: { zone: 'b' } } },
      v1beta2: { controlPlane: { desiredReplicas: 1, readyReplicas: 1 } },
    });
    const back = up(old);
    expect((back['spec'] as Unstructured)['paused']).toBe(false);
    expect((back['status'] as Unstructured)['initialization']).toEqual({ infrastructureProvisioned: true, controlPlaneInitialized: false });
    expect((back['status'] as Unstructured)['failureDomains']).toEqual((hub['status'] as Unstructured)['failureDomains']);
  });

  it('converts a topology: class to classRef, timeouts to seconds, the health check moved', () => {
    const converted = up({
      apiVersion: V1BETA1,
      kind: 'Cluster',
      metadata: { name: 'c', namespace: 'fleet' },
      spec: {
        topology: {
          class: 'quick-start',
          classNamespace: 'classes',
          version: 'v1.34.4',
          rolloutAfter: '2026-01-01T00:00:00Z',
          controlPlane: { replicas: 3, nodeDrainTimeout: '5m', machineHealthCheck: { enable: true, nodeStartupTimeout: '10m', maxUnhealthy: '40%' } },
          workers: {
            machineDeployments: [
              { class: 'default-worker', name: 'md-0', replicas: 2, strategy: { type: 'RollingUpdate', remediation: { maxInFlight: 1 } } },
            ],
          },
        },
      },
    });
    expect((converted['spec'] as Unstructured)['topology']).toEqual({
      classRef: { name: 'quick-start', namespace: 'classes' },
      version: 'v1.34.4',
      controlPlane: {
        replicas: 3,
        deletion: { nodeDrainTimeoutSeconds: 300 },
        healthCheck: {
          enabled: true,
          checks: { nodeStartupTimeoutSeconds: 600 },
          remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
        },
      },
      workers: {
        machineDeployments: [
          {
            class: 'default-worker',
            name: 'md-0',
            replicas: 2,
            rollout: { strategy: { type: 'RollingUpdate' } },
            healthCheck: { remediation: { maxInFlight: 1 } },
          },
        ],
      },
    });
  });

  it('round-trips a v1beta2 topology (upstream in-memory template, variables, overrides) through v1beta1 exactly', () => {
    const topology: Unstructured = {
      classRef: { name: 'in-memory', namespace: 'fleet' },
      version: 'v1.34.4',
      variables: [
        { name: 'kubeadmControlPlaneMaxSurge', value: '0' },
        { name: 'podSecurityStandard', value: { enabled: true, enforce: 'baseline', exemptions: ['kube-system'] } },
        { name: 'workerCount', value: 3 },
      ],
      controlPlane: {
        metadata: { labels: { tier: 'cp' } },
        replicas: 3,
        rollout: { after: '2026-01-01T00:00:00Z' },
        deletion: { nodeDrainTimeoutSeconds: 300, nodeDeletionTimeoutSeconds: 10 },
        healthCheck: {
          enabled: true,
          checks: { nodeStartupTimeoutSeconds: 600 },
          remediation: { triggerIf: { unhealthyLessThanOrEqualTo: '40%' } },
        },
        readinessGates: [{ conditionType: 'capstan.dev/AgentReady' }],
        variables: { overrides: [{ name: 'kubeadmControlPlaneMaxSurge', value: '1' }] },
      },
      workers: {
        machineDeployments: [
          {
            class: 'default-worker',
            name: 'md-0',
            replicas: 2,
            failureDomain: 'fd1',
            minReadySeconds: 5,
            rollout: { after: '2026-01-01T00:00:00Z', strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
            deletion: { order: 'Oldest', nodeVolumeDetachTimeoutSeconds: 60 },
            healthCheck: { enabled: false, remediation: { maxInFlight: '50%' } },
            variables: { overrides: [{ name: 'workerCount', value: 5 }] },
          },
        ],
        machinePools: [
          {
            class: 'default-pool',
            name: 'mp-0',
            replicas: 1,
            failureDomains: ['fd1', 'fd2'],
            deletion: { nodeDrainTimeoutSeconds: 90 },
            variables: { overrides: [{ name: 'podSecurityStandard', value: { enabled: false } }] },
          },
        ],
      },
    };
    const hub: Unstructured = {
      apiVersion: V1BETA2,
      kind: 'Cluster',
      metadata: { name: 'c', namespace: 'fleet' },
      spec: { clusterNetwork: { services: { cidrBlocks: ['10.128.0.0/12'] } }, topology },
    };
    const old = down(hub);
    expect((old['spec'] as Unstructured)['topology']).toMatchObject({
      class: 'in-memory',
      classNamespace: 'fleet',
      variables: topology['variables'],
      controlPlane: { nodeDrainTimeout: '5m0s', machineHealthCheck: { enable: true, nodeStartupTimeout: '10m0s' } },
    });
    expect((up(old)['spec'] as Unstructured)['topology']).toEqual(topology);
  });

  it('drops definitionFrom from v1beta1 variable overrides, as from the Cluster variables', () => {
    const definitionFrom = 'inline';
    const converted = up({
      apiVersion: V1BETA1,
      kind: 'Cluster',
      metadata: { name: 'c', namespace: 'fleet' },
      spec: {
        topology: {
          class: 'in-memory',
          version: 'v1.34.4',
          variables: [{ name: 'a', definitionFrom, value: { b: 'c' } }],
          controlPlane: { variables: { overrides: [{ name: 'a', definitionFrom, value: 'x' }] } },
          workers: {
            machineDeployments: [{ class: 'w', name: 'md-0', variables: { overrides: [{ name: 'a', definitionFrom, value: 1 }] } }],
            machinePools: [{ class: 'p', name: 'mp-0', variables: { overrides: [{ name: 'a', definitionFrom, value: true }] } }],
          },
        },
      },
    });
    expect((converted['spec'] as Unstructured)['topology']).toEqual({
      classRef: { name: 'in-memory' },
      version: 'v1.34.4',
      variables: [{ name: 'a', value: { b: 'c' } }],
      controlPlane: { variables: { overrides: [{ name: 'a', value: 'x' }] } },
      workers: {
        machineDeployments: [{ class: 'w', name: 'md-0', variables: { overrides: [{ name: 'a', value: 1 }] } }],
        machinePools: [{ class: 'p', name: 'mp-0', variables: { overrides: [{ name: 'a', value: true }] } }],
      },
    });
  });
});

describe('MachineHealthCheck', () => {
  it('moves the checks and the remediation trigger, and round-trips', () => {
    const old: Unstructured = {
      apiVersion: V1BETA1,
      kind: 'MachineHealthCheck',
      metadata,
      spec: {
        clusterName: 'c',
        selector: { matchLabels: { a: 'b' } },
        nodeStartupTimeout: '10m0s',
        maxUnhealthy: '40%',
        unhealthyRange: '[1-3]',
        unhealthyConditions: [{ type: 'Ready', status: 'Unknown', timeout: '5m0s' }],
        remediationTemplate: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimRemediationTemplate', name: 'r', namespace: 'fleet' },
      },
      status: { expectedMachines: 3, currentHealthy: 3, remediationsAllowed: 0 },
    };
    const hub = up(old);
    expect(hub['spec']).toEqual({
      clusterName: 'c',
      selector: { matchLabels: { a: 'b' } },
      checks: { nodeStartupTimeoutSeconds: 600, unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }] },
      remediation: {
        triggerIf: { unhealthyLessThanOrEqualTo: '40%', unhealthyInRange: '[1-3]' },
        templateRef: { apiVersion: 'infrastructure.capstan.dev/v1alpha1', kind: 'SimRemediationTemplate', name: 'r' },
      },
    });
    // 0 written by a v1beta1 client is "unset" in v1beta2 (no annotation says otherwise).
    expect(hub['status']).toEqual({ expectedMachines: 3, currentHealthy: 3 });
    const back = down(hub);
    expect(back['spec']).toEqual(old['spec']);
    expect(up(back)).toEqual(hub);
  });
});

describe('status.deprecated.v1beta1 as the core writes it', () => {
  const conditions = [
    { type: 'Ready', status: 'False', severity: 'Info', lastTransitionTime: '2026-11-24T10:00:00Z', reason: 'WaitingForInfrastructure', message: '1 of 2 completed' },
    { type: 'BootstrapReady', status: 'True', lastTransitionTime: '2026-11-24T10:00:00Z' },
  ];
  const failure = { failureReason: 'InvalidConfiguration', failureMessage: 'SimMachine fleet/m-1 has been deleted after provisioning was completed' };
  const refs = {
    clusterName: 'c',
    bootstrap: { dataSecretName: 's' },
    infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'm-1' },
  };
  const template = { spec: { ...refs, infrastructureRef: { ...refs.infrastructureRef, kind: 'SimMachineTemplate' } } };
  const objects: Record<string, { spec: Unstructured; status: Unstructured; v1beta1Status: Unstructured }> = {
    Machine: {
      spec: refs,
      status: { phase: 'Provisioning', deprecated: { v1beta1: { conditions, ...failure } } },
      v1beta1Status: { conditions, ...failure },
    },
    Cluster: {
      spec: {},
      status: { phase: 'Provisioning', deprecated: { v1beta1: { conditions, ...failure } } },
      v1beta1Status: { conditions, ...failure },
    },
    MachineSet: {
      spec: { clusterName: 'c', replicas: 1, selector: {}, template },
      status: {
        replicas: 1,
        readyReplicas: 1,
        deprecated: { v1beta1: { conditions, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0 } },
      },
      v1beta1Status: { conditions, fullyLabeledReplicas: 1, readyReplicas: 0, availableReplicas: 0 },
    },
    MachineDeployment: {
      spec: { clusterName: 'c', replicas: 1, selector: {}, template },
      status: {
        replicas: 1,
        deprecated: { v1beta1: { conditions, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 1 } },
      },
      v1beta1Status: { conditions, updatedReplicas: 1, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 1 },
    },
    MachineHealthCheck: {
      spec: { clusterName: 'c', selector: {} },
      status: { expectedMachines: 1, currentHealthy: 1, deprecated: { v1beta1: { conditions } } },
      v1beta1Status: { conditions },
    },
  };

  it.each(Object.keys(objects))('%s: reads back as the v1beta1 status fields and round-trips exactly', (kind) => {
    const { spec, status, v1beta1Status } = objects[kind]!;
    const hub: Unstructured = { apiVersion: V1BETA2, kind, metadata, spec, status };
    const old = down(hub);
    expect(old['status']).toMatchObject(v1beta1Status);
    expect(old['status']).not.toHaveProperty('deprecated');
    expect(up(old)).toEqual(hub);
  });
});

const resolve = (gk: { group: string; kind: string }) => Promise.resolve().then(() => lookup(gk));

describe('ConversionReview', () => {
  const review = (objects: unknown[], desiredAPIVersion = V1BETA1) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'r-1', desiredAPIVersion, objects },
  });

  it('answers with the converted objects under the request uid', async () => {
    const machine = { apiVersion: V1BETA2, kind: 'Machine', metadata, spec: { clusterName: 'c', infrastructureRef: {} } };
    const answer = await answerConversionReview(review([machine]), { resolve });
    expect(answer.response).toMatchObject({ uid: 'r-1', result: { status: 'Success' } });
    expect((answer.response!.convertedObjects![0] as Unstructured)['apiVersion']).toBe(V1BETA1);
  });

  it('answers a Failure naming the field when an object cannot be converted, without its values', async () => {
    const machine = {
      apiVersion: V1BETA2,
      kind: 'Machine',
      metadata,
      spec: { clusterName: 'c', infrastructureRef: { apiGroup: 'infra.unknown.example', kind: 'X', name: 'secret-name' } },
    };
    const answer = await answerConversionReview(review([machine]), { resolve });
    expect(answer.response?.result).toEqual({
      status: 'Failure',
      message: `conversion to ${V1BETA1} failed: no CRD with a contract label for group infra.unknown.example`,
    });
    expect(JSON.stringify(answer)).not.toContain('secret-name');
  });

  it('fails an object that converts into an invalid one, with the checker\'s reasons', async () => {
    const machine = { apiVersion: V1BETA1, kind: 'Machine', metadata, spec: { infrastructureRef: {} } };
    const answer = await answerConversionReview(review([machine], V1BETA2), {
      resolve,
      check: (obj) => ((obj['spec'] as Unstructured)['clusterName'] ? [] : ['spec.clusterName: must be set']),
    });
    expect(answer.response?.result.message).toBe(`conversion to ${V1BETA2} failed: Machine m-1 is invalid: spec.clusterName: must be set`);
  });

  it('throws on a body that is not a review', async () => {
    await expect(answerConversionReview({ kind: 'Nope' }, { resolve })).rejects.toThrow('not a ConversionReview');
  });
});
