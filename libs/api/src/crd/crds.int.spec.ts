import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  loadYaml,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { createTestNamespace, type TestNamespace } from '@capstan/testing';
import { RESOURCES, findResource, parseApiVersion } from '../index.js';
import {
  type ExampleObject,
  cluster,
  clusterResourceSet,
  clusterResourceSetBinding,
  extensionConfig,
  ipAddress,
  ipAddressClaim,
  k3sConfig,
  k3sControlPlane,
  machine,
  machineDeployment,
  machineDrainRule,
  machineHealthCheck,
  machinePool,
  machineSet,
  simCluster,
  simMachine,
  simMachineTemplate,
  validExamples,
} from '../../test/examples.js';
import { generateCrds } from './generate.js';

// Applies the generated CRDs to the real API server of the test environment and checks that the server
// enforces what the classes declare: structural schemas, defaults, enums, required fields, CEL rules, scale.

let ns: TestNamespace;
let objects: CustomObjectsApi;
let counter = 0;
/** Kinds upstream gives no short names. */
const KINDS_WITHOUT_SHORT_NAMES = [
  'MachineDrainRule',
  'ClusterResourceSet',
  'ClusterResourceSetBinding',
  'IPAddressClaim',
  'IPAddress',
];
/** Cluster-scoped objects the tests created: the namespace's deletion does not remove them. */
const clusterScoped: ExampleObject[] = [];

/** Creates or replaces a CRD (other test files may have installed the same one), then waits until Established. */
async function installCrd(kc: KubeConfig, crd: V1CustomResourceDefinition): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const name = crd.metadata!.name!;
  try {
    await api.createCustomResourceDefinition({ body: crd });
  } catch (error) {
    if (!(error instanceof ApiException) || error.code !== 409) throw error;
    const current = await api.readCustomResourceDefinition({ name });
    await api.replaceCustomResourceDefinition({
      name,
      body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata!.resourceVersion } },
    });
  }
  for (let attempt = 0; ; attempt++) {
    const current = await api.readCustomResourceDefinition({ name });
    if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (attempt > 600)
      throw new Error(`CRD ${name} was not established: ${JSON.stringify(current.status?.conditions)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function resourceOf(obj: ExampleObject) {
  const { group, version } = parseApiVersion(obj.apiVersion);
  const resource = findResource(group, obj.kind);
  if (!resource) throw new Error(`no resource for ${obj.kind}`);
  return { group, version, resource };
}

function coordinates(obj: ExampleObject) {
  const { group, version, resource } = resourceOf(obj);
  return { group, version, plural: resource.plural, namespace: ns.name };
}

/**
 * Each test gets fresh names, so tests never collide on an object another one created. Cluster-scoped names
 * carry the namespace's, so they stay unique across test files sharing the API server.
 */
function fresh(obj: ExampleObject): ExampleObject {
  counter++;
  if (!resourceOf(obj).resource.namespaced)
    return { ...obj, metadata: { ...obj.metadata, name: `${obj.metadata.name}-${ns.name}-${counter}` } };
  return {
    ...obj,
    metadata: { ...obj.metadata, name: `${obj.metadata.name}-${counter}`, namespace: ns.name },
  };
}

async function create(obj: ExampleObject): Promise<ExampleObject> {
  const { group, version, resource } = resourceOf(obj);
  if (!resource.namespaced) {
    const created = (await objects.createClusterCustomObject({
      group,
      version,
      plural: resource.plural,
      body: obj,
    })) as ExampleObject;
    clusterScoped.push(created);
    return created;
  }
  return (await objects.createNamespacedCustomObject({ ...coordinates(obj), body: obj })) as ExampleObject;
}

async function mergePatch(obj: ExampleObject, patch: object): Promise<ExampleObject> {
  return (await objects.patchNamespacedCustomObject(
    { ...coordinates(obj), name: obj.metadata.name, body: patch },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )) as ExampleObject;
}

/** The API server's message for a refused request (the Status body), or a failure if the request succeeded. */
async function refusal(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (error) {
    if (error instanceof ApiException && (error.code === 422 || error.code === 400)) {
      const body =
        typeof error.body === 'string'
          ? (JSON.parse(error.body) as { message?: string })
          : (error.body as { message?: string });
      return body.message ?? String(error.body);
    }
    throw error;
  }
  throw new Error('the API server accepted an invalid object');
}

function withSpec(obj: ExampleObject, change: (spec: Record<string, unknown>) => void): ExampleObject {
  const copy = structuredClone(obj);
  change(copy.spec!);
  return copy;
}

beforeAll(async () => {
  ns = await createTestNamespace('api-crds');
  objects = ns.kc.makeApiClient(CustomObjectsApi);
  const files = generateCrds();
  for (const [name, content] of Object.entries(files)) {
    if (name === 'kustomization.yaml') continue;
    await installCrd(ns.kc, loadYaml<V1CustomResourceDefinition>(content));
  }
});

afterAll(async () => {
  for (const obj of clusterScoped) {
    const { group, version, resource } = resourceOf(obj);
    await objects.deleteClusterCustomObject({
      group,
      version,
      plural: resource.plural,
      name: obj.metadata.name,
    });
  }
  await ns.delete();
});

describe('generated CRDs on a real API server', () => {
  it('serves every kind under its group, version, plural and short names', async () => {
    const api = ns.kc.makeApiClient(ApiextensionsV1Api);
    for (const resource of Object.values(RESOURCES)) {
      const crd = await api.readCustomResourceDefinition({ name: `${resource.plural}.${resource.group}` });
      // Kinds with conversions also serve upstream's deprecated version; the stored one is always ours.
      expect(crd.spec.versions.filter((v) => v.storage).map((v) => v.name)).toEqual([resource.version]);
      expect(crd.spec.names.categories).toContain('cluster-api');
      expect(crd.spec.scope).toBe(resource.namespaced ? 'Namespaced' : 'Cluster');
      if (!KINDS_WITHOUT_SHORT_NAMES.includes(resource.kind))
        expect(crd.status?.acceptedNames?.shortNames?.length).toBeGreaterThan(0);
    }
  });

  it('accepts an upstream-style example of every kind', async () => {
    for (const example of validExamples()) {
      const created = await create(fresh(example));
      expect(created.kind).toBe(example.kind);
    }
  });

  it('applies the structural defaults upstream applies in webhooks', async () => {
    const md = await create(fresh(machineDeployment()));
    expect(md.spec?.['rollout']).toEqual({
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    });
    const mhc = await create(fresh(machineHealthCheck()));
    expect((mhc.spec?.['checks'] as Record<string, unknown>)['nodeStartupTimeoutSeconds']).toBe(600);
    const sim = await create(fresh(simCluster()));
    expect(sim.spec?.['mode']).toBe('dedicated');
    const kcp = await create(fresh(withSpec(k3sControlPlane(), (s) => delete s['replicas'])));
    expect(kcp.spec?.['replicas']).toBe(1);
    expect(kcp.spec?.['rollout']).toEqual({
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
    });
  });

  it('refuses objects missing required fields, naming the field', async () => {
    const noClusterName = withSpec(machine(), (s) => delete s['clusterName']);
    expect(await refusal(create(fresh(noClusterName)))).toMatch(/spec\.clusterName: Required value/);
    const noVersion = withSpec(k3sControlPlane(), (s) => delete s['version']);
    expect(await refusal(create(fresh(noVersion)))).toMatch(/spec\.version: Required value/);
  });

  it('refuses values outside an enum, naming the field', async () => {
    const badStrategy = withSpec(
      machineDeployment(),
      (s) => (s['rollout'] = { strategy: { type: 'Recreate' } }),
    );
    expect(await refusal(create(fresh(badStrategy)))).toMatch(
      /spec\.rollout\.strategy\.type: Unsupported value: "Recreate"/,
    );
    const badMode = withSpec(simCluster(), (s) => (s['mode'] = 'huge'));
    expect(await refusal(create(fresh(badMode)))).toMatch(/spec\.mode: Unsupported value: "huge"/);
  });

  it('refuses a Cluster whose name cannot be a label value (over 63 characters), naming the rule', async () => {
    const long = { ...cluster(), metadata: { ...cluster().metadata, name: `c${'x'.repeat(63)}`, namespace: ns.name } };
    expect(await refusal(create(long))).toMatch(/metadata\.name must be at most 63 characters/);
    await create({ ...long, metadata: { ...long.metadata, name: `c${'x'.repeat(62)}` } });
  });

  it('refuses an even number of control plane replicas, naming the etcd rule', async () => {
    const even = withSpec(k3sControlPlane(), (s) => (s['replicas'] = 2));
    expect(await refusal(create(fresh(even)))).toMatch(/spec\.replicas: Invalid value: "integer": replicas must be odd/);
    await create(fresh(withSpec(k3sControlPlane(), (s) => (s['replicas'] = 3))));
  });

  it('refuses a control plane version that is not a release, naming the field', async () => {
    const latest = withSpec(k3sControlPlane(), (s) => (s['version'] = 'latest'));
    expect(await refusal(create(fresh(latest)))).toMatch(/spec\.version: Invalid value: "latest": spec\.version in body should match/);
    await create(fresh(withSpec(k3sControlPlane(), (s) => (s['version'] = 'v1.34.4+k3s1'))));
  });

  it('refuses network ranges that are not CIDR blocks, naming the field', async () => {
    const pods = withSpec(cluster(), (s) => (s['clusterNetwork'] = { pods: { cidrBlocks: ['10.42.0.0/16', 'not-a-cidr'] } }));
    expect(await refusal(create(fresh(pods)))).toMatch(/spec\.clusterNetwork\.pods\.cidrBlocks: Invalid value: .*cidrBlocks must be CIDR blocks/);
    const k3s = withSpec(k3sConfig(), (s) => (s['serverConfig'] = { clusterCIDR: '10.42.0.0/16,10.300.0.0/16' }));
    expect(await refusal(create(fresh(k3s)))).toMatch(/spec\.serverConfig\.clusterCIDR: Invalid value: .*clusterCIDR must be CIDR blocks/);
    await create(fresh(withSpec(k3sConfig(), (s) => (s['serverConfig'] = { clusterCIDR: '10.42.0.0/16,fd00:42::/56' }))));
    await create(fresh(withSpec(cluster(), (s) => (s['clusterNetwork'] = { pods: { cidrBlocks: ['192.168.0.0/16'] } }))));
  });

  it('refuses a Machine whose bootstrap has neither configRef nor dataSecretName', async () => {
    const bare = withSpec(machine(), (s) => (s['bootstrap'] = {}));
    expect(await refusal(create(fresh(bare)))).toMatch(
      /spec\.bootstrap: Invalid value: "object": bootstrap needs configRef or dataSecretName/,
    );
    const withSecret = withSpec(machine(), (s) => (s['bootstrap'] = { dataSecretName: 'prebaked' }));
    await create(fresh(withSecret));
  });

  it('refuses a rolling update with maxSurge and maxUnavailable both 0', async () => {
    const stuck = withSpec(
      machineDeployment(),
      (s) => (s['rollout'] = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } }),
    );
    expect(await refusal(create(fresh(stuck)))).toMatch(
      /spec\.rollout\.strategy\.rollingUpdate: Invalid value: "object": maxSurge and maxUnavailable cannot both be 0/,
    );
    const percent = withSpec(
      machineDeployment(),
      (s) => (s['rollout'] = { strategy: { rollingUpdate: { maxSurge: '0%', maxUnavailable: '25%' } } }),
    );
    await create(fresh(percent));
    const garbage = withSpec(
      machineDeployment(),
      (s) => (s['rollout'] = { strategy: { rollingUpdate: { maxSurge: 'lots' } } }),
    );
    expect(await refusal(create(fresh(garbage)))).toMatch(
      /spec\.rollout\.strategy\.rollingUpdate\.maxSurge: Invalid value: .*maxSurge must be a non-negative integer or a percentage/,
    );
  });

  it('refuses MachineHealthCheck triggerIf with both limits, and too short timeouts', async () => {
    const both = withSpec(
      machineHealthCheck(),
      (s) => (s['remediation'] = { triggerIf: { unhealthyLessThanOrEqualTo: 2, unhealthyInRange: '[1-3]' } }),
    );
    expect(await refusal(create(fresh(both)))).toMatch(
      /spec\.remediation\.triggerIf: Invalid value: "object": triggerIf\.unhealthyLessThanOrEqualTo and triggerIf\.unhealthyInRange are mutually exclusive/,
    );
    const short = withSpec(
      machineHealthCheck(),
      (s) => ((s['checks'] as Record<string, unknown>)['nodeStartupTimeoutSeconds'] = 10),
    );
    expect(await refusal(create(fresh(short)))).toMatch(
      /spec\.checks\.nodeStartupTimeoutSeconds: Invalid value: .*nodeStartupTimeoutSeconds must be 0 or at least 30 seconds/,
    );
    const range = withSpec(
      machineHealthCheck(),
      (s) => (s['remediation'] = { triggerIf: { unhealthyInRange: '3-5' } }),
    );
    expect(await refusal(create(fresh(range)))).toMatch(
      /spec\.remediation\.triggerIf\.unhealthyInRange: Invalid value: "3-5"/,
    );
  });

  it('refuses changes to immutable fields, naming the field', async () => {
    const m = await create(fresh(machine()));
    expect(await refusal(mergePatch(m, { spec: { clusterName: 'other' } }))).toMatch(
      /spec\.clusterName: Invalid value: .*spec\.clusterName is immutable/,
    );
    await mergePatch(m, { spec: { providerID: 'sim://ns/one' } });
    expect(await refusal(mergePatch(m, { spec: { providerID: 'sim://ns/two' } }))).toMatch(
      /spec\.providerID: .*spec\.providerID cannot be changed or removed once set/,
    );
    expect(await refusal(mergePatch(m, { spec: { providerID: null } }))).toMatch(
      /spec\.providerID cannot be changed or removed once set/,
    );

    const c = await create(fresh(cluster()));
    const swapped = {
      spec: {
        infrastructureRef: { apiGroup: 'infrastructure.example.com', kind: 'OtherCluster', name: 'demo' },
      },
    };
    expect(await refusal(mergePatch(c, swapped))).toMatch(
      /spec\.infrastructureRef: .*spec\.infrastructureRef apiGroup and kind cannot be changed or removed once set/,
    );
    await mergePatch(c, { spec: { infrastructureRef: { name: 'renamed' } } });

    const sim = await create(fresh(simCluster()));
    expect(await refusal(mergePatch(sim, { spec: { mode: 'shared' } }))).toMatch(
      /spec\.mode: Invalid value: .*spec\.mode is immutable/,
    );

    const template = await create(fresh(simMachineTemplate()));
    expect(
      await refusal(mergePatch(template, { spec: { template: { spec: { provisioningDelaySeconds: 9 } } } })),
    ).toMatch(/spec\.template\.spec: .*spec\.template\.spec is immutable/);

    const simMa = await create(fresh(simMachine()));
    await mergePatch(simMa, { spec: { providerID: 'sim://a/b' } });
    expect(await refusal(mergePatch(simMa, { spec: { providerID: 'sim://a/c' } }))).toMatch(
      /spec\.providerID cannot be changed or removed once set/,
    );
  });

  it('refuses MachineSets whose selector does not match the template labels or cluster', async () => {
    const mismatch = withSpec(machineSet(), (s) => (s['selector'] = { matchLabels: { pool: 'other' } }));
    expect(await refusal(create(fresh(mismatch)))).toMatch(
      /spec\.selector: .*spec\.selector\.matchLabels must match spec\.template\.metadata\.labels/,
    );
    const otherCluster = withSpec(
      machineDeployment(),
      (s) => ((s['template'] as { spec: Record<string, unknown> }).spec['clusterName'] = 'other'),
    );
    expect(await refusal(create(fresh(otherCluster)))).toMatch(
      /spec\.template\.spec\.clusterName: .*must equal spec\.clusterName/,
    );
  });

  it('refuses malformed K3s configuration, naming the field', async () => {
    const both = withSpec(
      k3sConfig(),
      (s) => (s['files'] = [{ path: '/x', content: 'a', contentFrom: { secret: { name: 's', key: 'k' } } }]),
    );
    expect(await refusal(create(fresh(both)))).toMatch(
      /spec\.files\[0\]: Invalid value: "object": a file takes content or contentFrom, not both/,
    );
    const label = withSpec(k3sConfig(), (s) => (s['agentConfig'] = { nodeLabels: ['no-equals-sign'] }));
    expect(await refusal(create(fresh(label)))).toMatch(
      /spec\.agentConfig\.nodeLabels\[0\]: Invalid value: "no-equals-sign"/,
    );
    const surge = withSpec(
      k3sControlPlane(),
      (s) => (s['rollout'] = { strategy: { rollingUpdate: { maxSurge: 2 } } }),
    );
    expect(await refusal(create(fresh(surge)))).toMatch(
      /spec\.rollout\.strategy\.rollingUpdate\.maxSurge: Invalid value: .*maxSurge must be 0 or 1/,
    );
  });

  it('refuses a MachinePool whose template belongs to another cluster, and keeps its cluster fixed', async () => {
    const otherCluster = withSpec(
      machinePool(),
      (s) => ((s['template'] as { spec: Record<string, unknown> }).spec['clusterName'] = 'other'),
    );
    expect(await refusal(create(fresh(otherCluster)))).toMatch(
      /spec\.template\.spec\.clusterName: .*spec\.template\.spec\.clusterName must equal spec\.clusterName/,
    );
    const mp = await create(fresh(withSpec(machinePool(), (s) => delete s['replicas'])));
    expect(mp.spec?.['replicas']).toBe(1);
    expect(await refusal(mergePatch(mp, { spec: { clusterName: 'other' } }))).toMatch(
      /spec\.clusterName: Invalid value: .*spec\.clusterName is immutable/,
    );
    const noBootstrap = withSpec(
      machinePool(),
      (s) => ((s['template'] as { spec: Record<string, unknown> }).spec['bootstrap'] = {}),
    );
    expect(await refusal(create(fresh(noBootstrap)))).toMatch(
      /spec\.template\.spec\.bootstrap: Invalid value: "object": bootstrap needs configRef or dataSecretName/,
    );
  });

  it('serves the scale subresource of MachinePool (no selector in its status, as upstream)', async () => {
    const obj = await create(fresh(machinePool()));
    const where = { ...coordinates(obj), name: obj.metadata.name };
    await objects.patchNamespacedCustomObjectStatus(
      { ...where, body: { status: { replicas: 2 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const scale = (await objects.getNamespacedCustomObjectScale(where)) as {
      spec: { replicas: number };
      status: { replicas: number; selector?: string };
    };
    expect(scale.spec.replicas).toBe(2);
    expect(scale.status.replicas).toBe(2);
    await objects.patchNamespacedCustomObjectScale(
      { ...where, body: { spec: { replicas: 4 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after = (await objects.getNamespacedCustomObject(where)) as ExampleObject;
    expect(after.spec?.['replicas']).toBe(4);
  });

  it('refuses MachineDrainRules with an order for Pods that are not evicted, or repeated selectors', async () => {
    const skip = withSpec(machineDrainRule(), (s) => (s['drain'] = { behavior: 'Skip', order: 5 }));
    expect(await refusal(create(fresh(skip)))).toMatch(
      /spec\.drain\.order: Invalid value: .*drain\.order can only be set when drain\.behavior is Drain/,
    );
    const unknown = withSpec(machineDrainRule(), (s) => (s['drain'] = { behavior: 'Evict' }));
    expect(await refusal(create(fresh(unknown)))).toMatch(
      /spec\.drain\.behavior: Unsupported value: "Evict"/,
    );
    const twice = withSpec(machineDrainRule(), (s) => {
      const pods = s['pods'] as unknown[];
      s['pods'] = [pods[0], structuredClone(pods[0])];
    });
    expect(await refusal(create(fresh(twice)))).toMatch(
      /spec\.pods: Invalid value: "array": pods must not list the same selector twice/,
    );
    await create(fresh(withSpec(machineDrainRule(), (s) => (s['drain'] = { behavior: 'WaitCompleted' }))));
  });

  it('refuses ClusterResourceSets selecting nothing, and keeps their selector and strategy fixed', async () => {
    const empty = withSpec(clusterResourceSet(), (s) => (s['clusterSelector'] = {}));
    expect(await refusal(create(fresh(empty)))).toMatch(
      /spec\.clusterSelector: Invalid value: "object": spec\.clusterSelector must not be empty/,
    );
    const deployment = withSpec(
      clusterResourceSet(),
      (s) => (s['resources'] = [{ name: 'x', kind: 'Deployment' }]),
    );
    expect(await refusal(create(fresh(deployment)))).toMatch(
      /spec\.resources\[0\]\.kind: Unsupported value: "Deployment"/,
    );
    const crs = await create(fresh(withSpec(clusterResourceSet(), (s) => delete s['strategy'])));
    expect(crs.spec?.['strategy']).toBe('ApplyOnce');
    expect(await refusal(mergePatch(crs, { spec: { strategy: 'Reconcile' } }))).toMatch(
      /spec\.strategy: Invalid value: .*spec\.strategy is immutable/,
    );
    expect(
      await refusal(mergePatch(crs, { spec: { clusterSelector: { matchLabels: { cni: 'cilium' } } } })),
    ).toMatch(/spec\.clusterSelector: Invalid value: .*spec\.clusterSelector is immutable/);
  });

  it('refuses a ClusterResourceSetBinding moving to another cluster or missing applied', async () => {
    const binding = await create(fresh(clusterResourceSetBinding()));
    expect(await refusal(mergePatch(binding, { spec: { clusterName: 'other' } }))).toMatch(
      /spec\.clusterName: Invalid value: .*spec\.clusterName is immutable/,
    );
    const notApplied = withSpec(
      clusterResourceSetBinding(),
      (s) =>
        (s['bindings'] = [{ clusterResourceSetName: 'cni', resources: [{ name: 'x', kind: 'Secret' }] }]),
    );
    expect(await refusal(create(fresh(notApplied)))).toMatch(
      /spec\.bindings\[0\]\.resources\[0\]\.applied: Required value/,
    );
  });

  it('refuses IP addresses that are not addresses, and changes to IPAM specs', async () => {
    const notAnIp = withSpec(ipAddress(), (s) => (s['address'] = '10.0.0.300'));
    expect(await refusal(create(fresh(notAnIp)))).toMatch(
      /spec\.address: Invalid value: .*address must be an IP address/,
    );
    const longV4 = withSpec(ipAddress(), (s) => (s['prefix'] = 33));
    expect(await refusal(create(fresh(longV4)))).toMatch(
      /spec\.prefix: Invalid value: .*prefix must be at most 32 for an IPv4 address/,
    );
    const v6 = (prefix: number) =>
      withSpec(ipAddress(), (s) => Object.assign(s, { address: 'fd00::5', gateway: 'fd00::1', prefix }));
    expect(await refusal(create(fresh(v6(129))))).toMatch(
      /spec\.prefix: Invalid value: 129: .*less than or equal to 128/,
    );
    await create(fresh(v6(64)));

    const address = await create(fresh(ipAddress()));
    expect(await refusal(mergePatch(address, { spec: { gateway: '10.0.0.254' } }))).toMatch(
      /spec: Invalid value: "object": spec is immutable/,
    );
    const claim = await create(fresh(ipAddressClaim()));
    expect(await refusal(mergePatch(claim, { spec: { poolRef: { name: 'other-pool' } } }))).toMatch(
      /spec: Invalid value: "object": spec is immutable/,
    );
    const noPool = withSpec(ipAddressClaim(), (s) => delete s['poolRef']);
    expect(await refusal(create(fresh(noPool)))).toMatch(/spec\.poolRef: Required value/);
  });

  it('serves ExtensionConfig cluster-scoped, defaulting as upstream and refusing an ambiguous clientConfig', async () => {
    const ext = await create(fresh(extensionConfig()));
    expect(ext.metadata.namespace).toBeUndefined();
    expect((ext.spec?.['clientConfig'] as { service: { port: number } }).service.port).toBe(8443);
    const bare = withSpec(extensionConfig(), (s) => {
      s['clientConfig'] = { service: { namespace: 'x', name: 'y' } };
      delete s['namespaceSelector'];
    });
    const defaulted = await create(fresh(bare));
    expect(defaulted.spec?.['namespaceSelector']).toEqual({});
    expect((defaulted.spec?.['clientConfig'] as { service: { port: number } }).service.port).toBe(443);
    const both = withSpec(
      extensionConfig(),
      (s) => ((s['clientConfig'] as Record<string, unknown>)['url'] = 'https://ext.example.com'),
    );
    expect(await refusal(create(fresh(both)))).toMatch(
      /spec\.clientConfig: Invalid value: "object": clientConfig needs exactly one of url or service/,
    );
    const neither = withSpec(extensionConfig(), (s) => (s['clientConfig'] = { caBundle: 'Zm9v' }));
    expect(await refusal(create(fresh(neither)))).toMatch(/clientConfig needs exactly one of url or service/);
  });

  it.each([
    ['MachineSet', machineSet],
    ['MachineDeployment', machineDeployment],
    ['K3sControlPlane', k3sControlPlane],
  ])('serves the scale subresource of %s', async (_kind, example) => {
    const obj = await create(fresh(example()));
    const where = { ...coordinates(obj), name: obj.metadata.name };
    await objects.patchNamespacedCustomObjectStatus(
      { ...where, body: { status: { replicas: 2, selector: 'cluster.x-k8s.io/cluster-name=demo' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const scale = (await objects.getNamespacedCustomObjectScale(where)) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    expect(scale.status).toEqual({ replicas: 2, selector: 'cluster.x-k8s.io/cluster-name=demo' });
    await objects.patchNamespacedCustomObjectScale(
      { ...where, body: { spec: { replicas: 5 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after = (await objects.getNamespacedCustomObject(where)) as ExampleObject;
    expect(after.spec?.['replicas']).toBe(5);
  });
});
