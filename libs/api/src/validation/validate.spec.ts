import { MachineSchema } from '../types/machine.js';
import {
  k3sConfig,
  machine,
  machineDeployment,
  machineHealthCheck,
  simCluster,
  topologyCluster,
  validExamples,
} from '../../test/examples.js';
import { ResourceValidationError, assertValid, validateAs, validateResource } from './validate.js';

function withSpec<T extends { spec?: Record<string, unknown> }>(
  obj: T,
  change: (spec: Record<string, unknown>) => void,
): T {
  const copy = structuredClone(obj);
  change(copy.spec!);
  return copy;
}

describe('class validation', () => {
  it.each(validExamples().map((e) => [e.kind, e] as const))(
    'accepts the upstream-style %s example',
    (_kind, example) => {
      expect(validateResource(example)).toEqual([]);
    },
  );

  it('accepts a topology-based Cluster (upstream in-memory template) and checks its topology', () => {
    expect(validateResource(topologyCluster())).toEqual([]);
    const badName = withSpec(topologyCluster(), (s) => {
      const topology = s['topology'] as { workers: { machineDeployments: { name: string }[] } };
      topology.workers.machineDeployments[0]!.name = 'MD_0';
    });
    expect(validateResource(badName)).toEqual([
      { path: 'spec.topology.workers.machineDeployments.0.name', message: expect.stringContaining('must match') },
    ]);
  });

  it('reports a missing required field at its path', () => {
    const issues = validateResource(withSpec(machine(), (s) => delete s['clusterName']));
    expect(issues).toContainEqual({
      path: 'spec.clusterName',
      message: expect.stringContaining('clusterName must be'),
    });
  });

  it('reports nested fields with their full path', () => {
    const badRef = withSpec(
      machine(),
      (s) => ((s['infrastructureRef'] as Record<string, unknown>)['kind'] = '9-not-a-kind'),
    );
    expect(validateResource(badRef)).toEqual([
      { path: 'spec.infrastructureRef.kind', message: expect.stringContaining('must match') },
    ]);
    const badItem = withSpec(
      machineHealthCheck(),
      (s) =>
        (s['checks'] = { unhealthyNodeConditions: [{ type: 'Ready', status: 'Maybe', timeoutSeconds: 1 }] }),
    );
    expect(validateResource(badItem)).toEqual([
      {
        path: 'spec.checks.unhealthyNodeConditions.0.status',
        message: expect.stringContaining('must be one of the following values: True, False, Unknown'),
      },
    ]);
  });

  it('reports enum, integer, int-or-string and map violations', () => {
    expect(validateResource(withSpec(simCluster(), (s) => (s['mode'] = 'huge')))[0]?.path).toBe('spec.mode');
    expect(validateResource(withSpec(machineDeployment(), (s) => (s['replicas'] = 1.5)))[0]).toEqual({
      path: 'spec.replicas',
      message: 'replicas must be a 32-bit integer',
    });
    const surge = withSpec(
      machineDeployment(),
      (s) => (s['rollout'] = { strategy: { rollingUpdate: { maxSurge: true } } }),
    );
    expect(validateResource(surge)[0]?.path).toBe('spec.rollout.strategy.rollingUpdate.maxSurge');
    const labels = withSpec(machineDeployment(), (s) => (s['selector'] = { matchLabels: { a: 1 } }));
    expect(validateResource(labels)[0]?.path).toBe('spec.selector.matchLabels');
  });

  it('reports each bad item of a string list', () => {
    const issues = validateResource(
      withSpec(k3sConfig(), (s) => (s['agentConfig'] = { nodeLabels: ['ok=1', 'broken'] })),
    );
    expect(issues).toEqual([
      {
        path: 'spec.agentConfig.nodeLabels',
        message: 'each nodeLabels entry must be key=value with a valid label key and value',
      },
    ]);
  });

  it('checks a map of objects: its keys, and each value as its class, at the key', () => {
    const registries = (value: unknown) =>
      validateResource(withSpec(k3sConfig(), (s) => (s['privateRegistriesConfig'] = value)));
    expect(registries({ mirrors: { 'docker.io': { endpoint: ['ftp://mirror'] } } })).toEqual([
      {
        path: 'spec.privateRegistriesConfig.mirrors.docker.io.endpoint',
        message: 'each endpoint must be an http:// or https:// URL with a host and no credentials',
      },
    ]);
    expect(registries({ configs: { 'registry:5000': { authSecret: { name: 'a', key: 'x' } } } })).toEqual([
      {
        path: 'spec.privateRegistriesConfig.configs.registry:5000.authSecret.key',
        message: 'property key should not exist',
      },
    ]);
    expect(registries({ configs: { 'https://registry': {} } })).toEqual([
      {
        path: 'spec.privateRegistriesConfig.configs',
        message: 'configs must be a map of at most 32 entries; configs keys must be a registry host[:port] or *',
      },
    ]);
    const notAnObject = registries({ mirrors: { '*': 'not an object' } });
    expect(notAnObject[0]?.path).toBe('spec.privateRegistriesConfig.mirrors.*');
  });

  it('reports fields the class does not declare, unless told not to', () => {
    const typo = withSpec(machine(), (s) => (s['clustername'] = 'demo'));
    expect(validateResource(typo)).toEqual([
      { path: 'spec.clustername', message: 'property clustername should not exist' },
    ]);
    expect(validateResource(typo, { forbidUnknownFields: false })).toEqual([]);
  });

  it('refuses kinds Capstan does not serve and non-objects', () => {
    expect(validateResource({ apiVersion: 'v1', kind: 'Pod' })).toEqual([
      { path: 'kind', message: 'v1 Pod is not a kind Capstan serves' },
    ]);
    expect(validateAs(MachineSchema, 'machine')).toEqual([{ path: '', message: 'must be an object' }]);
  });

  it('assertValid returns the typed object or throws every issue', () => {
    const valid = assertValid(MachineSchema, machine());
    expect(valid.spec.clusterName).toBe('demo');
    const invalid = withSpec(machine(), (s) => {
      delete s['clusterName'];
      s['version'] = '';
    });
    expect(() => assertValid(MachineSchema, invalid)).toThrow(ResourceValidationError);
    try {
      assertValid(MachineSchema, invalid);
    } catch (error) {
      expect((error as ResourceValidationError).issues.map((i) => i.path).sort()).toEqual([
        'spec.clusterName',
        'spec.clusterName',
        'spec.clusterName',
        'spec.version',
      ]);
    }
  });
});
