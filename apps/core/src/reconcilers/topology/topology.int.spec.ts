import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  getCondition,
  LABELS,
  RESOURCES,
  type Cluster,
  type ClusterClass,
  type ExtensionConfig,
  type MachineDeployment,
  type MachineHealthCheck,
  type Unstructured,
} from '@capstan/api';
import type { ResourceType } from '@capstan/kube';
import { startTestExtension, type TestExtension } from '../../runtime/testing/test-extension.js';
import { eventually, startWorkloadEnv, type WorkloadEnv } from '../../testing/workload-env.js';

/**
 * The topology and ClusterClass controllers on the real API server, with the capstan-k3s class the CLI ships
 * (libs/cluster-templates/templates/cluster-template-sim-topology.yaml). No Cluster controller or provider runs: the test plays the
 * control plane provider where an upgrade needs it (status.version), as upstream's envtest tests do.
 */
describe('topology controller', () => {
  let env: WorkloadEnv;
  const ns = () => env.ns.name;
  const OLD = 'v1.34.4';
  const NEW = 'v1.35.0';

  const typeOf = (kind: string): ResourceType => {
    const type = (RESOURCES as Record<string, ResourceType>)[kind];
    if (!type) throw new Error(`no resource ${kind}`);
    return type;
  };
  const clusters = () => env.client.resource<Cluster>(RESOURCES.Cluster);
  const read = <T>(kind: string, name: string) =>
    env.client.resource<T & Unstructured>(typeOf(kind)).get({ namespace: ns(), name }) as Promise<T>;
  const cluster = (name: string) => clusters().get({ namespace: ns(), name });
  const topologyCondition = async (name: string) =>
    getCondition((await cluster(name)).status?.conditions, 'TopologyReconciled');
  const spec = (object: unknown) => (object as { spec: Record<string, any> }).spec; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of provider objects' specs
  const meta = (object: unknown) =>
    (object as { metadata: { labels?: object; annotations?: object } }).metadata;
  const topologyMachineDeployment = async (clusterName: string, topologyName: string) =>
    (
      await env.client.resource<MachineDeployment>(RESOURCES.MachineDeployment).list({
        namespace: ns(),
        labelSelector: `${LABELS.clusterName}=${clusterName},${LABELS.topologyDeploymentName}=${topologyName}`,
      })
    ).items[0];
  const patchTopology = (
    name: string,
    topology: Partial<NonNullable<NonNullable<Cluster['spec']>['topology']>>,
  ) => clusters().mergePatch({ namespace: ns(), name }, { spec: { topology } });

  /** An ExtensionConfig for the test extension, for this run's namespace only (other files' Clusters never call it). */
  const registerExtension = async (configName: string, extension: TestExtension) => {
    const configs = env.client.resource<ExtensionConfig>(RESOURCES.ExtensionConfig);
    await configs.create({
      apiVersion: RESOURCES.ExtensionConfig.apiVersion,
      kind: RESOURCES.ExtensionConfig.kind,
      metadata: { name: configName },
      spec: {
        clientConfig: { url: extension.url, caBundle: extension.caBundle },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns() } },
      },
    } as ExtensionConfig);
    await eventually(
      'the extension discovered',
      async () =>
        getCondition((await configs.get({ name: configName })).status?.conditions, 'Discovered')?.status ===
        'True',
    );
  };

  /** The shipped template with its variables filled in, as `capstan generate cluster --flavor topology` does. */
  function shippedObjects(clusterName: string): Unstructured[] {
    const text = readFileSync(
      join(process.cwd(), 'libs/cluster-templates/templates/cluster-template-sim-topology.yaml'),
      'utf8',
    );
    const values: Record<string, string> = {
      NAMESPACE: ns(),
      CLUSTER_NAME: clusterName,
      KUBERNETES_VERSION: OLD,
    };
    const filled = text.replace(
      /\$\{(\w+)(?::=([^}]*))?\}/g,
      (_, name: string, fallback?: string) => values[name] ?? fallback ?? '',
    );
    return parseAllDocuments(filled).map((doc) => doc.toJS() as Unstructured);
  }

  beforeAll(async () => {
    env = await startWorkloadEnv('topology');
    for (const object of shippedObjects('alpha'))
      if (object.kind !== 'ConfigMap' && object.kind !== 'ClusterResourceSet')
        await env.client.resource<Unstructured>(typeOf(object.kind as string)).create(object);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('marks the class reconciled with its inline variables', async () => {
    const clusterClass = await eventually('VariablesReady', async () => {
      const cc = await read<ClusterClass>('ClusterClass', 'capstan-k3s');
      return getCondition(cc.status?.conditions, 'VariablesReady')?.status === 'True' && cc;
    });
    expect(clusterClass.status?.observedGeneration).toBe(clusterClass.metadata?.generation);
    expect(clusterClass.status?.variables?.map((v) => [v.name, v.definitions[0]?.from])).toEqual([
      ['simMode', 'inline'],
      ['provisioningDelaySeconds', 'inline'],
      ['inPlaceControlPlane', 'inline'],
      ['workerNodeLabels', 'inline'],
    ]);
  });

  it('creates the infrastructure cluster, control plane, worker MachineDeployment, their templates and health check from the class, patched', async () => {
    const created = await eventually('the topology reconciled', async () => {
      const c = await cluster('alpha');
      return getCondition(c.status?.conditions, 'TopologyReconciled')?.status === 'True' && c;
    });
    const infraRef = created.spec!.infrastructureRef!;
    const cpRef = created.spec!.controlPlaneRef!;
    expect(infraRef).toMatchObject({
      apiGroup: 'infrastructure.capstan.dev',
      kind: 'SimCluster',
      name: expect.stringMatching(/^alpha-[a-z0-9]{5}$/),
    });
    expect(cpRef).toMatchObject({ apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane' });

    const simCluster = await read<Unstructured>('SimCluster', infraRef.name);
    expect(spec(simCluster).mode).toBe('dedicated');
    expect(meta(simCluster).labels).toMatchObject({
      [LABELS.clusterName]: 'alpha',
      [LABELS.topologyOwned]: '',
    });
    expect(meta(simCluster).annotations).toMatchObject({
      'cluster.x-k8s.io/cloned-from-name': 'capstan-k3s',
      'cluster.x-k8s.io/cloned-from-groupkind': 'SimClusterTemplate.infrastructure.capstan.dev',
    });

    const cp = await read<Unstructured>('K3sControlPlane', cpRef.name);
    expect(spec(cp)).toMatchObject({
      version: OLD,
      replicas: 1,
      k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'] } },
      machineTemplate: {
        metadata: { labels: { [LABELS.clusterName]: 'alpha', [LABELS.topologyOwned]: '' } },
        spec: { infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate' } },
      },
    });
    expect(spec(cp).rollout?.inPlace).toBeUndefined();
    const cpMachines = await read<Unstructured>(
      'SimMachineTemplate',
      spec(cp).machineTemplate.spec.infrastructureRef.name,
    );
    expect(spec(cpMachines).template.spec.provisioningDelaySeconds).toBe(1);

    const md = (await topologyMachineDeployment('alpha', 'md-0'))!;
    expect(md.metadata.name).toMatch(/^alpha-md-0-[a-z0-9]{5}$/);
    expect(md.spec).toMatchObject({
      clusterName: 'alpha',
      replicas: 0,
      template: {
        spec: {
          version: OLD,
          bootstrap: { configRef: { kind: 'K3sConfigTemplate' } },
          infrastructureRef: { kind: 'SimMachineTemplate' },
        },
      },
    });
    const bootstrap = await read<Unstructured>(
      'K3sConfigTemplate',
      md.spec.template.spec.bootstrap.configRef!.name,
    );
    expect(spec(bootstrap).template.spec.agentConfig.nodeLabels).toEqual(['capstan.dev/pool=md-0']);
    const mhc = await read<MachineHealthCheck>('MachineHealthCheck', md.metadata.name!);
    expect(mhc.spec.selector.matchLabels).toEqual({
      [LABELS.topologyOwned]: '',
      [LABELS.topologyDeploymentName]: 'md-0',
    });
  });

  it('rolls the worker templates when a variable changes, and collects the old copy once nothing references it', async () => {
    const before = (await topologyMachineDeployment('alpha', 'md-0'))!;
    const oldTemplate = before.spec.template.spec.bootstrap.configRef!.name;
    await patchTopology('alpha', {
      variables: [
        { name: 'simMode', value: 'dedicated' },
        { name: 'provisioningDelaySeconds', value: 1 },
        { name: 'workerNodeLabels', value: ['tier=gold'] },
      ],
    });
    const rotated = await eventually('a new bootstrap template', async () => {
      const md = await topologyMachineDeployment('alpha', 'md-0');
      const name = md?.spec.template.spec.bootstrap.configRef?.name;
      return name !== undefined && name !== oldTemplate && name;
    });
    const bootstrap = await read<Unstructured>('K3sConfigTemplate', rotated);
    expect(spec(bootstrap).template.spec.agentConfig.nodeLabels).toEqual([
      'capstan.dev/pool=md-0',
      'tier=gold',
    ]);
    expect((await topologyMachineDeployment('alpha', 'md-0'))!.metadata.name).toBe(before.metadata.name);
    // The MachineDeployment keeps its last old MachineSet (history of one), which still names the first copy; a second
    // change rolls again, that MachineSet goes, and with it the first copy.
    await patchTopology('alpha', {
      variables: [
        { name: 'simMode', value: 'dedicated' },
        { name: 'provisioningDelaySeconds', value: 1 },
        { name: 'workerNodeLabels', value: ['tier=silver'] },
      ],
    });
    await eventually('rolled again', async () => {
      const name = (await topologyMachineDeployment('alpha', 'md-0'))?.spec.template.spec.bootstrap.configRef
        ?.name;
      return name !== undefined && name !== rotated;
    });
    await eventually('the old copy deleted', () =>
      read('K3sConfigTemplate', oldTemplate).then(
        () => false,
        () => true,
      ),
    );
  });

  it('refuses a variable of the wrong value with a condition naming it, and changes nothing', async () => {
    const md = (await topologyMachineDeployment('alpha', 'md-0'))!;
    await patchTopology('alpha', { variables: [{ name: 'provisioningDelaySeconds', value: 9999 }] });
    const condition = await eventually('TopologyReconciled False', async () => {
      const c = await topologyCondition('alpha');
      return c?.status === 'False' && c;
    });
    expect(condition.reason).toBe('ReconcileFailed');
    expect(condition.message).toContain('provisioningDelaySeconds');
    expect(condition.message).not.toContain('9999');
    expect((await topologyMachineDeployment('alpha', 'md-0'))!.spec.template.spec.infrastructureRef).toEqual(
      md.spec.template.spec.infrastructureRef,
    );
    await patchTopology('alpha', { variables: [{ name: 'provisioningDelaySeconds', value: 1 }] });
    await eventually('reconciled again', async () => (await topologyCondition('alpha'))?.status === 'True');
  });

  it('upgrades the control plane first, and the workers once it has arrived', async () => {
    const cpName = (await cluster('alpha')).spec!.controlPlaneRef!.name;
    const controlPlanes = env.client.resource<Unstructured>(typeOf('K3sControlPlane'));
    const cpStatus = (version: string) =>
      controlPlanes.patchStatus(
        { namespace: ns(), name: cpName },
        { version, replicas: 1, readyReplicas: 1, upToDateReplicas: 1 },
      );
    await cpStatus(OLD);
    const c = await cluster('alpha');
    await patchTopology('alpha', { version: NEW, workers: c.spec!.topology!.workers });
    await eventually(
      'the control plane asked for the new version',
      async () => spec(await read('K3sControlPlane', cpName)).version === NEW,
    );
    const waiting = await eventually('ClusterUpgrading', async () => {
      const found = await topologyCondition('alpha');
      return found?.reason === 'ClusterUpgrading' && found;
    });
    expect(waiting.status).toBe('False');
    expect(waiting?.message).toContain('control plane upgrading');
    expect((await topologyMachineDeployment('alpha', 'md-0'))!.spec.template.spec.version).toBe(OLD);

    await cpStatus(NEW);
    await eventually(
      'the workers follow',
      async () => (await topologyMachineDeployment('alpha', 'md-0'))?.spec.template.spec.version === NEW,
    );
    await eventually('upgrade done', async () => (await topologyCondition('alpha'))?.status === 'True');
  });

  it('holds an upgrade while a BeforeClusterUpgrade extension blocks it, and calls the After hooks as it completes', async () => {
    const extension = await startTestExtension({
      handlers: [
        { name: 'hold-upgrades', hook: 'BeforeClusterUpgrade' },
        { name: 'after-cp', hook: 'AfterControlPlaneUpgrade' },
        { name: 'after-cluster', hook: 'AfterClusterUpgrade' },
      ],
    });
    const configs = env.client.resource<ExtensionConfig>(RESOURCES.ExtensionConfig);
    const configName = `${ns()}-upgrades`;
    try {
      extension.block('BeforeClusterUpgrade', 2);
      await registerExtension(configName, extension);
      const cpName = (await cluster('alpha')).spec!.controlPlaneRef!.name;
      const controlPlanes = env.client.resource<Unstructured>(typeOf('K3sControlPlane'));
      const cpStatus = (version: string) =>
        controlPlanes.patchStatus(
          { namespace: ns(), name: cpName },
          { version, replicas: 1, readyReplicas: 1, upToDateReplicas: 1 },
        );
      const LATER = 'v1.36.1';
      await patchTopology('alpha', { version: LATER });
      const held = await eventually('the upgrade held by the hook', async () => {
        const found = await topologyCondition('alpha');
        return found?.message?.includes('BeforeClusterUpgrade hook is blocking') && found;
      });
      expect(held).toMatchObject({ status: 'False', reason: 'ClusterUpgrading' });
      expect(spec(await read('K3sControlPlane', cpName)).version).toBe(NEW);
      expect(extension.calls('BeforeClusterUpgrade').at(-1)).toMatchObject({
        fromKubernetesVersion: NEW,
        toKubernetesVersion: LATER,
      });

      extension.release('BeforeClusterUpgrade');
      await eventually(
        'the control plane moves once released',
        async () => spec(await read('K3sControlPlane', cpName)).version === LATER,
        15_000,
      );
      expect(extension.calls('AfterControlPlaneUpgrade')).toEqual([]);
      await cpStatus(LATER);
      await eventually(
        'the workers follow',
        async () => (await topologyMachineDeployment('alpha', 'md-0'))?.spec.template.spec.version === LATER,
      );
      expect(extension.calls('AfterControlPlaneUpgrade')).toHaveLength(1);
      // AfterControlPlaneInitialized stays pending here: no Cluster controller says the control plane is initialized.
      await eventually('AfterClusterUpgrade called, no upgrade hook pending', async () => {
        const pending = (await cluster('alpha')).metadata.annotations?.[
          'runtime.cluster.x-k8s.io/pending-hooks'
        ];
        return (
          extension.calls('AfterClusterUpgrade').length > 0 && pending === 'AfterControlPlaneInitialized'
        );
      });
      await eventually('reconciled', async () => (await topologyCondition('alpha'))?.status === 'True');
    } finally {
      await configs.delete({ name: configName }).catch(() => undefined);
      await extension.stop();
    }
  });

  it('applies an external patch the class names (GeneratePatches), and refuses what ValidateTopology fails', async () => {
    const extension = await startTestExtension({
      handlers: [
        { name: 'gen', hook: 'GeneratePatches' },
        { name: 'check', hook: 'ValidateTopology' },
      ],
    });
    const configs = env.client.resource<ExtensionConfig>(RESOURCES.ExtensionConfig);
    const classes = env.client.resource<ClusterClass>(RESOURCES.ClusterClass);
    const configName = `${ns()}-patches`;
    const encode = (ops: object[]) => Buffer.from(JSON.stringify(ops)).toString('base64');
    extension.answer('GeneratePatches', (request) => ({
      apiVersion: 'hooks.runtime.cluster.x-k8s.io/v1alpha1',
      kind: 'GeneratePatchesResponse',
      status: 'Success',
      items: (request['items'] as { uid: string; object: { kind: string } }[])
        .filter((item) => item.object.kind === 'K3sConfigTemplate')
        .map((item) => ({
          uid: item.uid,
          patchType: 'JSONPatch',
          patch: encode([
            { op: 'add', path: '/spec/template/spec/agentConfig/nodeLabels/-', value: 'external=yes' },
          ]),
        })),
    }));
    const original = await read<ClusterClass>('ClusterClass', 'capstan-k3s');
    try {
      await registerExtension(configName, extension);
      await classes.mergePatch(
        { namespace: ns(), name: 'capstan-k3s' },
        {
          spec: {
            patches: [
              ...(original.spec.patches ?? []),
              {
                name: 'external-labels',
                external: {
                  generatePatchesExtension: `gen.${configName}`,
                  validateTopologyExtension: `check.${configName}`,
                },
              },
            ],
          },
        },
      );
      const template = await eventually('the external label on the worker template copy', async () => {
        const md = await topologyMachineDeployment('alpha', 'md-0');
        const name = md?.spec.template.spec.bootstrap.configRef?.name;
        const copy = name ? await read<Unstructured>('K3sConfigTemplate', name) : undefined;
        const labels = copy ? (spec(copy).template.spec.agentConfig.nodeLabels as string[]) : [];
        return labels.at(-1) === 'external=yes' && name;
      });
      const request = extension.calls('GeneratePatches').at(-1)!;
      expect(request['items']).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            holderReference: expect.objectContaining({
              kind: 'MachineDeployment',
              fieldPath: 'spec.template.spec.bootstrap.configRef',
            }),
          }),
        ]),
      );
      expect(extension.calls('ValidateTopology').length).toBeGreaterThan(0);

      extension.fail('ValidateTopology', 'workers need three zones');
      await patchTopology('alpha', {
        variables: [
          { name: 'simMode', value: 'dedicated' },
          { name: 'provisioningDelaySeconds', value: 1 },
          { name: 'workerNodeLabels', value: ['tier=bronze'] },
        ],
      });
      const refused = await eventually('TopologyReconciled False', async () => {
        const found = await topologyCondition('alpha');
        return found?.status === 'False' && found.reason === 'ReconcileFailed' && found;
      });
      expect(refused.message).toContain('patch "external-labels"');
      expect(refused.message).toContain('ValidateTopology');
      expect(
        (await topologyMachineDeployment('alpha', 'md-0'))!.spec.template.spec.bootstrap.configRef!.name,
      ).toBe(template);
    } finally {
      await classes.mergePatch(
        { namespace: ns(), name: 'capstan-k3s' },
        { spec: { patches: original.spec.patches } },
      );
      await configs.delete({ name: configName }).catch(() => undefined);
      await extension.stop();
    }
    await eventually('reconciled again', async () => (await topologyCondition('alpha'))?.status === 'True');
  });

  it('creates and deletes MachineDeployments as the topology lists them', async () => {
    const old = (await topologyMachineDeployment('alpha', 'md-0'))!;
    await patchTopology('alpha', {
      workers: { machineDeployments: [{ class: 'in-place-worker', name: 'md-1', replicas: 0 }] },
    });
    const added = await eventually('md-1 created', () => topologyMachineDeployment('alpha', 'md-1'));
    expect(added.spec.rollout?.inPlace).toBe('Preferred');
    await eventually('md-0 deleted', () =>
      read('MachineDeployment', old.metadata.name!).then(
        (md) => (md as MachineDeployment).metadata.deletionTimestamp !== undefined,
        () => true,
      ),
    );
  });

  it('names a worker class the ClusterClass does not define', async () => {
    await patchTopology('alpha', {
      workers: { machineDeployments: [{ class: 'gpu-worker', name: 'md-2' }] },
    });
    const condition = await eventually('TopologyReconciled False', async () => {
      const found = await topologyCondition('alpha');
      return found?.status === 'False' && found.reason === 'ReconcileFailed' && found;
    });
    expect(condition.message).toContain('"gpu-worker"');
    expect(condition.message).toContain('capstan-k3s');
  });

  it('names a template of the class that does not exist, and writes nothing until it does', async () => {
    const original = await read<ClusterClass>('ClusterClass', 'capstan-k3s');
    const infrastructure = original.spec.infrastructure.templateRef;
    const template = await read<Unstructured>(infrastructure.kind, infrastructure.name);
    const missing = { ...infrastructure, name: 'not-there-yet' };
    await env.client
      .resource<ClusterClass>(RESOURCES.ClusterClass)
      .create({
        ...original,
        metadata: { name: 'missing-template', namespace: ns() },
        spec: { ...original.spec, infrastructure: { ...original.spec.infrastructure, templateRef: missing } },
        status: undefined,
      } as ClusterClass);
    const beta = shippedObjects('beta').find((object) => object.kind === 'Cluster') as unknown as Cluster;
    beta.spec!.topology!.classRef = { name: 'missing-template' };
    await clusters().create(beta);
    const condition = await eventually('TopologyReconciled False', async () => {
      const found = await topologyCondition('beta');
      return found?.status === 'False' && found.reason === 'ReconcileFailed' && found;
    });
    expect(condition.message).toContain(`${infrastructure.kind} ${ns()}/not-there-yet of the ClusterClass was not found`);
    const written = await cluster('beta');
    expect(written.spec?.infrastructureRef).toBeUndefined();
    expect(written.spec?.controlPlaneRef).toBeUndefined();
    expect(await topologyMachineDeployment('beta', 'md-0')).toBeUndefined();

    await env.client.resource<Unstructured>(typeOf(infrastructure.kind)).create({
      ...template,
      metadata: { name: 'not-there-yet', namespace: ns() },
    } as Unstructured);
    // Templates are not watched (as upstream's): the failed reconcile is retried with backoff, or at once on a change.
    await clusters().mergePatch({ namespace: ns(), name: 'beta' }, { metadata: { annotations: { touched: 'yes' } } });
    await eventually('reconciled once the template exists', async () => (await topologyCondition('beta'))?.status === 'True');
  });
});
