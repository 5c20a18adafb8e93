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
import { createTestNamespace, removeStaleCoreWebhookConfiguration, type TestNamespace } from '@capstan/testing';
import { RESOURCES, findResource, parseApiVersion } from '../index.js';
import {
  type ExampleObject,
  cluster,
  clusterClass,
  clusterResourceSet,
  clusterResourceSetBinding,
  extensionConfig,
  ipAddress,
  ipAddressClaim,
  k3sConfig,
  k3sControlPlane,
  k3sControlPlaneTemplate,
  machine,
  machineDeployment,
  machineDrainRule,
  machineHealthCheck,
  machinePool,
  machineSet,
  simCluster,
  simMachine,
  simClusterTemplate,
  simMachineTemplate,
  topologyCluster,
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
  await removeStaleCoreWebhookConfiguration(ns.kc);
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
    // The templates a ClusterClass names: changed by a new template (the topology rotates to it), never in place.
    const clusterTemplate = await create(fresh(simClusterTemplate()));
    expect(
      await refusal(mergePatch(clusterTemplate, { spec: { template: { spec: { mode: 'shared' } } } })),
    ).toMatch(/spec\.template\.spec: .*spec\.template\.spec is immutable/);
    const controlPlaneTemplate = await create(fresh(k3sControlPlaneTemplate()));
    expect(
      await refusal(
        mergePatch(controlPlaneTemplate, { spec: { template: { spec: { remediation: { maxRetry: 9 } } } } }),
      ),
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

  it('refuses malformed private registries, naming the field or the rule', async () => {
    const registries = (value: unknown) =>
      create(fresh(withSpec(k3sConfig(), (s) => (s['privateRegistriesConfig'] = value))));
    const mirrorEndpoint = (endpoint: string) => registries({ mirrors: { 'docker.io': { endpoint: [endpoint] } } });
    expect(await refusal(registries({ mirrors: { 'https://docker.io': {} } }))).toMatch(
      /privateRegistriesConfig\.mirrors: Invalid value: "object": mirrors keys must be a registry host\[:port\] or \*/,
    );
    expect(await refusal(registries({ configs: { 'registry.example.com:5000/path': {} } }))).toMatch(
      /privateRegistriesConfig\.configs: Invalid value: "object": configs keys must be a registry host\[:port\] or \*/,
    );
    expect(await refusal(mirrorEndpoint('registry.example.com'))).toMatch(
      /privateRegistriesConfig\.mirrors\.docker\.io\.endpoint\[0\]: Invalid value: "registry\.example\.com"/,
    );
    expect(await refusal(mirrorEndpoint('https://user:pw@registry.example.com'))).toMatch(
      /spec\.privateRegistriesConfig\.mirrors\.docker\.io\.endpoint\[0\]/,
    );
    const tooMany = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`r${i}.example.com`, {}]));
    expect(await refusal(registries({ configs: tooMany }))).toMatch(
      /spec\.privateRegistriesConfig\.configs: Too many: 33: must have at most 32 items/,
    );
    const caBundle = registries({ configs: { '*': { tls: { caBundle: 'not a certificate' } } } });
    expect(await refusal(caBundle)).toMatch(/spec\.privateRegistriesConfig\.configs\.\*\.tls\.caBundle: Invalid value/);
    expect(await refusal(registries({ configs: { '*': { authSecret: { name: 'Not_A_Name' } } } }))).toMatch(
      /spec\.privateRegistriesConfig\.configs\.\*\.authSecret\.name: Invalid value/,
    );
    expect(
      await refusal(registries({ mirrors: { 'docker.io': { rewrite: { [`^${'x'.repeat(600)}`]: '$1' } } } })),
    ).toMatch(/rewrite patterns must be at most 512 characters/);
    // The wildcard entry and an IPv4 registry with a port are registries K3s knows.
    await registries({
      mirrors: { '*': { endpoint: ['http://10.0.0.5:5000/v2'] } },
      configs: { '10.0.0.5:5000': {} },
    });
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

  describe('Cluster topology', () => {
    type Spec = Record<string, unknown>;
    const topologyOf = (spec: Spec | undefined) => spec!['topology'] as Spec;
    /** Every field of upstream's v1beta2 topology set once, so pruning anything shows in the read back. */
    const fullTopology = () =>
      withSpec(topologyCluster(), (s) => {
        const overrides = (name: string, value: unknown) => ({ overrides: [{ name, value }] });
        Object.assign(topologyOf(s), {
          controlPlane: {
            metadata: { labels: { tier: 'control-plane' }, annotations: { note: 'kept' } },
            replicas: 3,
            rollout: { after: '2026-03-09T09:00:00Z' },
            healthCheck: {
              enabled: true,
              checks: {
                nodeStartupTimeoutSeconds: 600,
                unhealthyNodeConditions: [{ type: 'Ready', status: 'Unknown', timeoutSeconds: 300 }],
                unhealthyMachineConditions: [{ type: 'capstan.dev/Stuck', status: 'True', timeoutSeconds: 60 }],
              },
              remediation: {
                triggerIf: { unhealthyInRange: '[1-2]' },
                templateRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'RemediationTemplate', name: 'r' },
              },
            },
            deletion: { nodeDrainTimeoutSeconds: 300, nodeVolumeDetachTimeoutSeconds: 60, nodeDeletionTimeoutSeconds: 10 },
            taints: [{ key: 'capstan.dev/cp', effect: 'NoSchedule', propagation: 'Always' }],
            readinessGates: [{ conditionType: 'capstan.dev/AgentReady', polarity: 'Positive' }],
            variables: overrides('imageRepository', 'mirror.example.com'),
          },
          workers: {
            machineDeployments: [
              {
                metadata: { labels: { pool: 'md-0' } },
                class: 'default-worker',
                name: 'md-0',
                failureDomain: 'fd1',
                replicas: 5,
                healthCheck: { enabled: false, remediation: { maxInFlight: '50%', triggerIf: { unhealthyLessThanOrEqualTo: 2 } } },
                deletion: { order: 'Oldest', nodeDrainTimeoutSeconds: 120 },
                taints: [{ key: 'capstan.dev/worker', value: 'yes', effect: 'NoExecute', propagation: 'OnInitialization' }],
                minReadySeconds: 5,
                readinessGates: [{ conditionType: 'capstan.dev/AgentReady' }],
                rollout: {
                  after: '2026-03-09T09:00:00Z',
                  strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
                },
                variables: overrides('podSecurityStandard', { enabled: false }),
              },
            ],
            machinePools: [
              {
                metadata: { annotations: { pool: 'mp-0' } },
                class: 'default-pool',
                name: 'mp-0',
                failureDomains: ['fd1', 'fd2'],
                deletion: { nodeDeletionTimeoutSeconds: 30 },
                taints: [{ key: 'capstan.dev/pool', effect: 'PreferNoSchedule', propagation: 'Always' }],
                minReadySeconds: 10,
                replicas: 2,
                variables: overrides('workerCount', 2),
              },
            ],
          },
        });
      });

    it('accepts upstream in-memory topology Clusters and reads them back unchanged, variable values included', async () => {
      for (const example of [fresh(topologyCluster()), fresh(fullTopology())]) {
        const created = await create(example);
        expect(created.spec).toEqual(example.spec);
        const read = (await objects.getNamespacedCustomObject({
          ...coordinates(created),
          name: created.metadata.name,
        })) as ExampleObject;
        expect(read.spec).toEqual(example.spec);
      }
    });

    it('refuses an invalid topology, naming the field or the rule', async () => {
      for (const version of ['1.34.4', 'v1.34', 'latest', 'v1.34.04']) {
        const invalid = withSpec(topologyCluster(), (s) => (topologyOf(s)['version'] = version));
        expect(await refusal(create(fresh(invalid)))).toMatch(
          /spec\.topology\.version: Invalid value: .*version must be a semantic version starting with v/,
        );
      }
      await create(fresh(withSpec(topologyCluster(), (s) => (topologyOf(s)['version'] = 'v1.35.0-rc.1+build.2'))));
      const noClass = withSpec(topologyCluster(), (s) => delete topologyOf(s)['classRef']);
      expect(await refusal(create(fresh(noClass)))).toMatch(/spec\.topology\.classRef: Required value/);
      const noValue = withSpec(topologyCluster(), (s) => (topologyOf(s)['variables'] = [{ name: 'imageRepository' }]));
      expect(await refusal(create(fresh(noValue)))).toMatch(/spec\.topology\.variables\[0\]\.value: Required value/);
      const twice = withSpec(topologyCluster(), (s) => {
        const mds = (topologyOf(s)['workers'] as Spec)['machineDeployments'] as Spec[];
        mds.push({ ...mds[0]!, class: 'other-worker' });
      });
      expect(await refusal(create(fresh(twice)))).toMatch(
        /spec\.topology\.workers\.machineDeployments\[1\]: Duplicate value/,
      );
      const stuck = withSpec(topologyCluster(), (s) => {
        const md = ((topologyOf(s)['workers'] as Spec)['machineDeployments'] as Spec[])[0]!;
        md['rollout'] = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } };
      });
      expect(await refusal(create(fresh(stuck)))).toMatch(/maxSurge and maxUnavailable cannot both be 0/);
    });

    it('keeps the topology of an existing Cluster, as upstream does', async () => {
      const created = await create(fresh(topologyCluster()));
      const upgraded = await mergePatch(created, { spec: { topology: { version: 'v1.35.0' } } });
      expect(topologyOf(upgraded.spec)['version']).toBe('v1.35.0');
      expect(await refusal(mergePatch(created, { spec: { topology: null } }))).toMatch(
        /spec\.topology: Invalid value: .*spec\.topology cannot be removed from an existing Cluster/,
      );
    });
  });

  describe('ClusterClass', () => {
    type Spec = Record<string, unknown>;
    const at = (value: unknown, ...path: (string | number)[]): Spec =>
      path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value) as Spec;
    const machineDeploymentClass = (s: Spec) => at(s, 'workers', 'machineDeployments', 0);

    it('accepts the quick start ClusterClass and reads it back unchanged, free-form values included', async () => {
      const example = fresh(clusterClass());
      const created = await create(example);
      expect(created.spec).toEqual(example.spec);
      const read = (await objects.getNamespacedCustomObject({
        ...coordinates(created),
        name: created.metadata.name,
      })) as ExampleObject;
      expect(read.spec).toEqual(example.spec);
      // A health check without nodeStartupTimeoutSeconds stays without it: upstream's ClusterClass has no default.
      expect(at(read.spec, 'controlPlane', 'healthCheck', 'checks')['nodeStartupTimeoutSeconds']).toBeUndefined();
    });

    it('refuses template kinds not ending in Template and a control plane health check without machine infrastructure', async () => {
      const kind = withSpec(clusterClass(), (s) => (at(s, 'infrastructure', 'templateRef')['kind'] = 'DockerCluster'));
      expect(await refusal(create(fresh(kind)))).toMatch(
        /spec\.infrastructure\.templateRef\.kind: Invalid value: .*templateRef\.kind must be of the form <name>Template/,
      );
      const health = withSpec(clusterClass(), (s) => delete at(s, 'controlPlane')['machineInfrastructure']);
      expect(await refusal(create(fresh(health)))).toMatch(
        /spec\.controlPlane\.healthCheck: Invalid value: .*controlPlane\.healthCheck can only be set if controlPlane\.machineInfrastructure is set/,
      );
      const short = withSpec(clusterClass(), (s) => (at(machineDeploymentClass(s), 'healthCheck', 'checks')['nodeStartupTimeoutSeconds'] = 10));
      expect(await refusal(create(fresh(short)))).toMatch(/nodeStartupTimeoutSeconds must be 0 or at least 30 seconds/);
      const stuck = withSpec(
        clusterClass(),
        (s) => (machineDeploymentClass(s)['rollout'] = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } }),
      );
      expect(await refusal(create(fresh(stuck)))).toMatch(
        /spec\.workers\.machineDeployments\[0\]\.rollout\.strategy\.rollingUpdate: Invalid value: "object": maxSurge and maxUnavailable cannot both be 0/,
      );
      const lots = withSpec(clusterClass(), (s) => (at(machineDeploymentClass(s), 'healthCheck', 'remediation')['maxInFlight'] = 'lots'));
      expect(await refusal(create(fresh(lots)))).toMatch(
        /spec\.workers\.machineDeployments\[0\]\.healthCheck\.remediation\.maxInFlight: Invalid value: "lots": .*should match '\^\[0-9\]\+%\$'/,
      );
      const negative = withSpec(
        clusterClass(),
        (s) => (machineDeploymentClass(s)['rollout'] = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: -1 } } }),
      );
      expect(await refusal(create(fresh(negative)))).toMatch(
        /rollingUpdate\.maxSurge: Invalid value: -1: .*should be greater than or equal to 0/,
      );
      const twice = withSpec(clusterClass(), (s) => {
        const classes = at(s, 'workers')['machineDeployments'] as Spec[];
        classes.push(structuredClone(classes[0]!));
      });
      expect(await refusal(create(fresh(twice)))).toMatch(/spec\.workers\.machineDeployments\[1\]: Duplicate value/);
    });

    it('refuses reserved variable and patch names and ill-formed patches, naming the rule', async () => {
      const builtin = withSpec(clusterClass(), (s) => (at(s, 'variables', 0)['name'] = 'builtin'));
      expect(await refusal(create(fresh(builtin)))).toMatch(
        /spec\.variables\[0\]\.name: Invalid value: .*variable name 'builtin' is reserved/,
      );
      const dotted = withSpec(clusterClass(), (s) => (at(s, 'variables', 0)['name'] = 'image.repository'));
      expect(await refusal(create(fresh(dotted)))).toMatch(/variable name must not contain '\.'/);
      const inline = withSpec(clusterClass(), (s) => (at(s, 'patches', 0)['name'] = 'inline'));
      expect(await refusal(create(fresh(inline)))).toMatch(/patch name 'inline' is reserved/);
      const both = withSpec(clusterClass(), (s) => (at(s, 'patches', 0)['external'] = { generatePatchesExtension: 'generate.ext' }));
      expect(await refusal(create(fresh(both)))).toMatch(
        /spec\.patches\[0\]: Invalid value: "object": a patch needs exactly one of definitions or external/,
      );
      const noExtension = withSpec(clusterClass(), (s) => {
        delete at(s, 'patches', 0)['definitions'];
        at(s, 'patches', 0)['external'] = { discoverVariablesExtension: 'discover.ext' };
      });
      expect(await refusal(create(fresh(noExtension)))).toMatch(
        /external needs generatePatchesExtension or validateTopologyExtension/,
      );
      const nothing = withSpec(
        clusterClass(),
        (s) => (at(s, 'patches', 0, 'definitions', 0, 'selector')['matchResources'] = { controlPlane: false }),
      );
      expect(await refusal(create(fresh(nothing)))).toMatch(/matchResources must select something/);
      const badOp = withSpec(clusterClass(), (s) => (at(s, 'patches', 1, 'definitions', 0, 'jsonPatches', 0)['op'] = 'move'));
      expect(await refusal(create(fresh(badOp)))).toMatch(/jsonPatches\[0\]\.op: Unsupported value: "move"/);
      const version = withSpec(clusterClass(), (s) => (s['kubernetesVersions'] = ['v1.33.1', 'latest']));
      expect(await refusal(create(fresh(version)))).toMatch(
        /spec\.kubernetesVersions: Invalid value: .*kubernetesVersions must be semantic versions/,
      );
      await create(fresh(withSpec(clusterClass(), (s) => (s['kubernetesVersions'] = ['v1.33.1', '1.34', 'v1.35.0-rc.1']))));
    });

    it('keeps the API group and kind of infrastructure templates, as upstream keeps Clusters compatible', async () => {
      const cc = await create(fresh(clusterClass()));
      const renamed = (await mergePatch(cc, {
        spec: { infrastructure: { templateRef: { name: 'quick-start-cluster-v2' } } },
      })) as ExampleObject;
      expect(at(renamed.spec, 'infrastructure', 'templateRef')['name']).toBe('quick-start-cluster-v2');
      expect(
        await refusal(mergePatch(cc, { spec: { infrastructure: { templateRef: { kind: 'OtherClusterTemplate' } } } })),
      ).toMatch(/spec\.infrastructure\.templateRef: Invalid value: .*templateRef apiGroup and kind cannot be changed/);
      expect(
        await refusal(
          mergePatch(cc, {
            spec: { controlPlane: { templateRef: { apiVersion: 'controlplane.example.com/v1beta2' } } },
          }),
        ),
      ).toMatch(/spec\.controlPlane\.templateRef: Invalid value: .*templateRef apiGroup and kind cannot be changed/);
      expect(await refusal(mergePatch(cc, { spec: { controlPlane: { machineInfrastructure: null, healthCheck: null } } }))).toMatch(
        /spec\.controlPlane\.machineInfrastructure: Invalid value: .*controlPlane\.machineInfrastructure cannot be added or removed/,
      );
      const workers = structuredClone(at(cc.spec, 'workers'));
      at(machineDeploymentClass({ workers }), 'infrastructure', 'templateRef')['kind'] = 'OtherMachineTemplate';
      expect(await refusal(mergePatch(cc, { spec: { workers } }))).toMatch(
        /spec\.workers\.machineDeployments\[0\]\.infrastructure\.templateRef: Invalid value: .*templateRef apiGroup and kind cannot be changed/,
      );
      // The bootstrap template may change kind: upstream checks only infrastructure templates.
      const bootstrapWorkers = structuredClone(at(cc.spec, 'workers'));
      at(machineDeploymentClass({ workers: bootstrapWorkers }), 'bootstrap', 'templateRef')['kind'] = 'K3sConfigTemplate';
      await mergePatch(cc, { spec: { workers: bootstrapWorkers } });
    });
  });
});
