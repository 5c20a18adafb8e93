import { parseAllDocuments } from 'yaml';
import { builtInTemplates, generateCluster, templateVariables, UnknownTemplateError } from './cluster-template.js';
import { MissingVariablesError } from '@capstan/manifests';

interface Doc {
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

describe('generate cluster (sim)', () => {
  const generate = (extra: Partial<Parameters<typeof generateCluster>[0]> = {}) =>
    parseAllDocuments(
      generateCluster({ clusterName: 'demo', infrastructure: 'sim', kubernetesVersion: 'v1.34.4', env: {}, ...extra }),
    ).map((d) => d.toJS() as Doc);

  it('renders every object of a cluster, in the target namespace, with a MachineHealthCheck and an add-on', () => {
    const docs = generate({ targetNamespace: 'fleet', controlPlaneMachineCount: 3, workerMachineCount: 2 });
    expect(docs.map((d) => d.kind)).toEqual([
      'Cluster',
      'SimCluster',
      'K3sControlPlane',
      'SimMachineTemplate',
      'MachineDeployment',
      'SimMachineTemplate',
      'K3sConfigTemplate',
      'MachineHealthCheck',
      'ConfigMap',
      'ClusterResourceSet',
    ]);
    expect(new Set(docs.map((d) => d.metadata.namespace))).toEqual(new Set(['fleet']));
    // The add-on's set belongs to the namespace: it selects every cluster carrying the label.
    const set = docs.find((d) => d.kind === 'ClusterResourceSet')!;
    expect(set.spec).toMatchObject({
      strategy: 'Reconcile',
      clusterSelector: { matchLabels: { 'capstan.dev/platform-baseline': 'enabled' } },
      resources: [{ kind: 'ConfigMap', name: 'platform-baseline' }],
    });
    expect(docs.find((d) => d.kind === 'Cluster')!.metadata).toMatchObject({
      labels: { 'capstan.dev/platform-baseline': 'enabled' },
    });
    expect(docs.find((d) => d.kind === 'K3sControlPlane')!.spec).toMatchObject({ replicas: 3, version: 'v1.34.4+k3s1' });
    // One rule for K3s versions: the release, as the nodes report it, on the control plane and the workers alike.
    expect(docs.find((d) => d.kind === 'MachineDeployment')!.spec).toMatchObject({ template: { spec: { version: 'v1.34.4+k3s1' } } });
    expect(docs.find((d) => d.kind === 'MachineDeployment')!.spec).toMatchObject({ replicas: 2, clusterName: 'demo' });
    // Complete for upstream's core too, which refuses a MachineDeployment without a rollout strategy type.
    expect(docs.find((d) => d.kind === 'MachineDeployment')!.spec).toMatchObject({
      rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
    });
  });

  it('renders the topology flavor: the capstan-k3s ClusterClass with its templates, and a Cluster naming it', () => {
    const docs = generate({ flavor: 'topology', targetNamespace: 'fleet', controlPlaneMachineCount: 3, workerMachineCount: 2 });
    expect(docs.map((d) => d.kind)).toEqual([
      'SimClusterTemplate',
      'K3sControlPlaneTemplate',
      'SimMachineTemplate',
      'SimMachineTemplate',
      'K3sConfigTemplate',
      'ClusterClass',
      'Cluster',
      'ConfigMap',
      'ClusterResourceSet',
    ]);
    expect(new Set(docs.map((d) => d.metadata.namespace))).toEqual(new Set(['fleet']));
    const cluster = docs.find((d) => d.kind === 'Cluster')!;
    expect(cluster.spec).not.toHaveProperty('infrastructureRef');
    expect(cluster.spec['topology']).toMatchObject({
      classRef: { name: 'capstan-k3s' },
      version: 'v1.34.4+k3s1',
      controlPlane: { replicas: 3 },
      workers: { machineDeployments: [{ class: 'default-worker', name: 'md-0', replicas: 2 }] },
    });
    const clusterClass = docs.find((d) => d.kind === 'ClusterClass')!;
    const workerClasses = (clusterClass.spec['workers'] as { machineDeployments: { class: string }[] }).machineDeployments;
    expect(workerClasses.map((w) => w.class)).toEqual(['default-worker', 'in-place-worker']);
  });

  it('takes flags over environment variables and defaults the counts as clusterctl does', () => {
    const docs = generate({ kubernetesVersion: undefined, env: { KUBERNETES_VERSION: 'v1.33.0', NAMESPACE: 'from-env' } });
    expect(docs[0]!.metadata.namespace).toBe('from-env');
    expect(docs.find((d) => d.kind === 'K3sControlPlane')!.spec).toMatchObject({ replicas: 1, version: 'v1.33.0+k3s1' });
    expect(docs.find((d) => d.kind === 'MachineDeployment')!.spec).toMatchObject({ replicas: 0 });
  });

  it('refuses to render without a Kubernetes version, naming the variable', () => {
    expect(() => generate({ kubernetesVersion: undefined })).toThrow(MissingVariablesError);
    expect(() => generate({ kubernetesVersion: undefined })).toThrow(/KUBERNETES_VERSION/);
  });

  it('lists required and optional variables', () => {
    const vars = templateVariables({ infrastructure: 'sim' });
    expect(vars.required.map((v) => v.name)).toEqual(['CLUSTER_NAME', 'NAMESPACE', 'KUBERNETES_VERSION']);
    expect(vars.optional).toContainEqual({ name: 'WORKER_MACHINE_COUNT', defaultValue: '0' });
  });

  it('names the available templates when the flavor does not exist', () => {
    expect(() => generate({ flavor: 'nope' })).toThrow(UnknownTemplateError);
    expect(() => generate({ flavor: 'nope' })).toThrow(/available: sim, sim-topology$/);
  });

  it('lists the built-in templates by infrastructure and flavor', () => {
    expect(builtInTemplates()).toEqual([{ infrastructure: 'sim' }, { infrastructure: 'sim', flavor: 'topology' }]);
  });

  it('renders a template given with --from', () => {
    const out = generateCluster({ clusterName: 'x', infrastructure: 'sim', templateText: 'name: ${CLUSTER_NAME}', env: {} });
    expect(out).toBe('name: x');
  });
});
