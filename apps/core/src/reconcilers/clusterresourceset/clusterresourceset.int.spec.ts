import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  getCondition,
  RESOURCES,
  type Cluster,
  type ClusterResourceSet,
  type ClusterResourceSetBinding,
} from '@capstan/api';
import { CONFIG_MAPS, isNotFound, NAMESPACES, SECRETS, type ResourceClient } from '@capstan/kube';
import {
  createKubeconfigSecret,
  createReadyCluster,
  eventually,
  startWorkloadEnv,
  type WorkloadEnv,
} from '../../testing/workload-env.js';
import { RESOURCE_SET_SECRET_TYPE } from './resource-set-data.js';

/**
 * The test API server doubles as the workload cluster (the `<cluster>-kubeconfig` Secret holds the test kubeconfig):
 * what a ClusterResourceSet applies lands in a namespace of its own there, made by the set itself.
 */
describe('ClusterResourceSet controller', () => {
  let env: WorkloadEnv;
  let sets: ResourceClient<ClusterResourceSet>;
  let bindings: ResourceClient<ClusterResourceSetBinding>;
  let configMaps: ResourceClient<V1ConfigMap>;
  let target: string;

  const ns = () => env.ns.name;
  const manifest = (objects: Record<string, unknown>[]) =>
    objects.map((o) => JSON.stringify(o)).join('\n---\n');
  const addonConfigMap = (name: string, data: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: target },
    data,
  });
  const createSet = (name: string, spec: Partial<ClusterResourceSet['spec']>) =>
    sets.create({
      apiVersion: RESOURCES.ClusterResourceSet.apiVersion,
      kind: RESOURCES.ClusterResourceSet.kind,
      metadata: { name, namespace: ns() },
      spec: { clusterSelector: { matchLabels: { cni: 'calico' } }, resources: [], ...spec },
    } as ClusterResourceSet);
  const condition = async (name: string) =>
    getCondition((await sets.get({ namespace: ns(), name })).status?.conditions, 'ResourcesApplied');
  const applied = (name: string) => configMaps.get({ namespace: target, name }).then((cm) => cm.data);

  beforeAll(async () => {
    env = await startWorkloadEnv('crs');
    target = `${ns()}-addons`;
    sets = env.client.resource<ClusterResourceSet>(RESOURCES.ClusterResourceSet);
    bindings = env.client.resource<ClusterResourceSetBinding>(RESOURCES.ClusterResourceSetBinding);
    configMaps = env.client.resource<V1ConfigMap>(CONFIG_MAPS);
    for (const [name, labels] of [
      ['matched', { cni: 'calico' }],
      ['unmatched', { cni: 'cilium' }],
    ] as const) {
      await createReadyCluster(env, name);
      await env.client
        .resource<Cluster>(RESOURCES.Cluster)
        .mergePatch({ namespace: ns(), name }, { metadata: { labels } });
      await createKubeconfigSecret(env, name);
    }
  });
  afterAll(async () => {
    await env?.client
      .resource(NAMESPACES)
      .delete({ name: target })
      .catch(() => undefined);
    await env?.stop();
  });

  it('applies a ConfigMap and a resource-set Secret to the matched cluster, records them, and re-applies a change under Reconcile', async () => {
    await configMaps.create({
      metadata: { name: 'calico-addon', namespace: ns() },
      data: {
        'addon.yaml': manifest([
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } },
          addonConfigMap('calico-config', { mode: 'v1' }),
        ]),
      },
    });
    await env.client.resource<V1Secret>(SECRETS).create({
      metadata: { name: 'calico-credentials', namespace: ns() },
      type: RESOURCE_SET_SECRET_TYPE,
      stringData: { 'secret.yaml': manifest([addonConfigMap('from-secret', { token: 'in-a-secret' })]) },
    });
    await createSet('calico', {
      strategy: 'Reconcile',
      resources: [
        { kind: 'ConfigMap', name: 'calico-addon' },
        { kind: 'Secret', name: 'calico-credentials' },
      ],
    });

    expect(
      await eventually('the add-on applied', () => applied('calico-config').catch(() => undefined)),
    ).toEqual({
      mode: 'v1',
    });
    expect(await applied('from-secret')).toEqual({ token: 'in-a-secret' });
    const binding = await eventually('the binding records both', async () => {
      const b = await bindings.get({ namespace: ns(), name: 'matched' }).catch(() => undefined);
      const resources = b?.spec.bindings?.find((s) => s.clusterResourceSetName === 'calico')?.resources ?? [];
      return resources.length === 2 && resources.every((r) => r.applied) && b;
    });
    expect(binding.spec.clusterName).toBe('matched');
    expect(binding.metadata.ownerReferences?.map((o) => o.kind).sort()).toEqual([
      'Cluster',
      'ClusterResourceSet',
    ]);
    const recorded = binding.spec.bindings![0]!.resources!;
    expect(recorded.map((r) => r.hash)).toEqual([
      expect.stringMatching(/^sha256:/),
      expect.stringMatching(/^sha256:/),
    ]);
    expect(await condition('calico')).toMatchObject({ status: 'True', reason: 'Applied' });
    // The core only reads what it applies from: the source stays as its owner wrote it.
    const source = await configMaps.get({ namespace: ns(), name: 'calico-addon' });
    expect(source.metadata?.ownerReferences).toBeUndefined();
    // The unmatched cluster gets nothing.
    await expect(bindings.get({ namespace: ns(), name: 'unmatched' })).rejects.toMatchObject({ code: 404 });

    await configMaps.mergePatch(
      { namespace: ns(), name: 'calico-addon' },
      {
        data: {
          'addon.yaml': manifest([
            { apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } },
            addonConfigMap('calico-config', { mode: 'v2' }),
          ]),
        },
      },
    );
    await eventually(
      'the change re-applied',
      async () => (await applied('calico-config'))?.['mode'] === 'v2',
    );
  }, 90_000);

  it('applies an ApplyOnce set once: a later change of its ConfigMap is not applied again', async () => {
    await configMaps.create({
      metadata: { name: 'once-addon', namespace: ns() },
      data: { 'a.json': JSON.stringify([addonConfigMap('once-config', { version: '1' })]) },
    });
    await createSet('once', { resources: [{ kind: 'ConfigMap', name: 'once-addon' }] });
    await eventually('applied once', () => applied('once-config').catch(() => undefined));
    await configMaps.mergePatch(
      { namespace: ns(), name: 'once-addon' },
      { data: { 'a.json': JSON.stringify([addonConfigMap('once-config', { version: '2' })]) } },
    );
    // Woken by a label on the set: it reconciles, and still applies nothing.
    await sets.mergePatch({ namespace: ns(), name: 'once' }, { metadata: { labels: { poked: 'yes' } } });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await applied('once-config')).toEqual({ version: '1' });
  }, 60_000);

  it('refuses a Secret of another type and names what it cannot find, applying nothing of them', async () => {
    await env.client.resource<V1Secret>(SECRETS).create({
      metadata: { name: 'opaque-addon', namespace: ns() },
      type: 'Opaque',
      stringData: { 'x.yaml': manifest([addonConfigMap('never', { secret: 'value-never-shown' })]) },
    });
    await createSet('wrong', {
      resources: [
        { kind: 'Secret', name: 'opaque-addon' },
        { kind: 'ConfigMap', name: 'not-there' },
      ],
    });
    const refused = await eventually('refused', async () => {
      const c = await condition('wrong');
      return c?.status === 'False' && c;
    });
    expect(refused.reason).toBe('WrongSecretType');
    expect(refused.message).toBe(
      `Secret opaque-addon has type Opaque, not ${RESOURCE_SET_SECRET_TYPE}; ConfigMap not-there not found`,
    );
    await expect(configMaps.get({ namespace: target, name: 'never' })).rejects.toMatchObject({ code: 404 });
  }, 60_000);

  it('takes the set out of the binding of a Cluster it no longer selects, leaving what it applied', async () => {
    await createReadyCluster(env, 'relabelled');
    const clusters = env.client.resource<Cluster>(RESOURCES.Cluster);
    await clusters.mergePatch(
      { namespace: ns(), name: 'relabelled' },
      { metadata: { labels: { cni: 'calico' } } },
    );
    await createKubeconfigSecret(env, 'relabelled');
    const listedSets = async () =>
      (
        await bindings.get({ namespace: ns(), name: 'relabelled' }).catch(() => undefined)
      )?.spec.bindings?.map((b) => b.clusterResourceSetName);
    await eventually('the once set bound', async () => (await listedSets())?.includes('once'));
    await clusters.mergePatch(
      { namespace: ns(), name: 'relabelled' },
      { metadata: { labels: { cni: 'cilium' } } },
    );
    await eventually('the sets out of its binding', async () => (await listedSets()) === undefined);
    expect(await applied('once-config')).toEqual({ version: '1' });
  }, 60_000);

  it("deletes a Cluster's binding with the Cluster", async () => {
    await createReadyCluster(env, 'short-lived');
    await env.client
      .resource<Cluster>(RESOURCES.Cluster)
      .mergePatch({ namespace: ns(), name: 'short-lived' }, { metadata: { labels: { cni: 'calico' } } });
    await createKubeconfigSecret(env, 'short-lived');
    await eventually('the binding made', () =>
      bindings.get({ namespace: ns(), name: 'short-lived' }).catch(() => undefined),
    );
    await env.client.resource<Cluster>(RESOURCES.Cluster).delete({ namespace: ns(), name: 'short-lived' });
    await eventually('the binding deleted with its Cluster', () =>
      bindings.get({ namespace: ns(), name: 'short-lived' }).then(
        () => false,
        (error: unknown) => isNotFound(error),
      ),
    );
  }, 60_000);

  it('takes a deleted set out of the binding, and deletes the binding with the last set', async () => {
    for (const name of ['calico', 'wrong']) await sets.delete({ namespace: ns(), name });
    const left = await eventually('calico and wrong out of the binding', async () => {
      const b = await bindings.get({ namespace: ns(), name: 'matched' });
      const names = (b.spec.bindings ?? []).map((s) => s.clusterResourceSetName);
      return names.length === 1 && names;
    });
    expect(left).toEqual(['once']);
    // What it applied stays in the workload cluster, as upstream leaves it.
    expect(await applied('calico-config')).toEqual({ mode: 'v2' });
    await sets.delete({ namespace: ns(), name: 'once' });
    await eventually('the binding deleted', () =>
      bindings.get({ namespace: ns(), name: 'matched' }).then(
        () => false,
        (error: unknown) => isNotFound(error),
      ),
    );
  }, 60_000);
});
