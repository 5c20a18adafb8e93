import { type KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATIONS, FINALIZERS, LABELS, RESOURCES } from '@capstan/api';
import { type Cluster, type Condition, type Machine } from '@capstan/api';
import { genericProviderKind } from '@capstan/testing';
import { condition, conditionLike, reportedCondition } from '../../testing/conditions.js';
import {
  createGenericProvider,
  noCrdMessage,
  type GenericProviderObject,
  type ProviderSetup,
} from '../../testing/generic-provider-objects.js';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import { eventually, resourceOf } from '../../testing/workload-env.js';

const BOOT = 'GenericBootstrapConfig';
const INFRA = 'GenericInfrastructureMachine';
const CP = 'GenericControlPlane';
/** The names the provider objects of Machine `m` of Cluster `demo` have here. */
const NAMES: Record<string, string> = { [BOOT]: 'm-boot', [INFRA]: 'm-infra', [CP]: 'demo-cp' };
const HOLD = 'test.capstan.dev/hold';
const PRE_DRAIN = 'pre-drain.delete.hook.machine.cluster.x-k8s.io/test';
const PRE_TERMINATE = 'pre-terminate.delete.hook.machine.cluster.x-k8s.io/test';
const WAIT_MS = 3_000;
const PROVIDER_ID = 'generic://m';
const ADDRESSES = [{ type: 'InternalIP', address: '10.1.1.7' }];
const BOOT_READY: ProviderSetup = {
  status: { initialization: { dataSecretCreated: true }, dataSecretName: 'm-data' },
};
const PROVISIONED = { initialization: { provisioned: true }, addresses: ADDRESSES, failureDomain: 'fd-a' };
const INFRA_READY: ProviderSetup = { spec: { providerID: PROVIDER_ID }, status: PROVISIONED };
const ref = (kind: string, name = NAMES[kind]!) => ({
  apiGroup: genericProviderKind(kind).group,
  kind,
  name,
});
const CONFIG = { configRef: ref(BOOT) };
/** A Ready condition as a provider reports it. */
const ready = (status: string, reason: string, message = '') =>
  reportedCondition('Ready', status, reason, message);

describe('Machine controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  beforeEach(async () => {
    bed = await startInMemoryWorkload({ wholeCore: true });
  });
  afterEach(() => bed.stop());

  const ns = () => bed.ns.name;
  const machines = () => bed.client.resource<Machine>(RESOURCES.Machine);
  const kind = (k: string) => bed.client.resource<GenericProviderObject>(resourceOf(k));
  const getMachine = () => machines().get({ namespace: ns(), name: 'm' });
  const getProvider = (k: string) => kind(k).get({ namespace: ns(), name: NAMES[k]! });
  const createProvider = (k: string, setup: ProviderSetup = {}) =>
    createGenericProvider(bed.client, ns(), k, NAMES[k]!, setup);
  /** Cluster `demo`, once its controller has looked at it: its later changes are the test's. */
  async function createCluster(spec: Cluster['spec'] = {}): Promise<Cluster> {
    const clusters = bed.client.resource<Cluster>(RESOURCES.Cluster);
    const metadata = { name: 'demo', namespace: ns() };
    const { apiVersion, kind } = RESOURCES.Cluster;
    await clusters.create({ apiVersion, kind, metadata, spec } as Cluster);
    return eventually(
      'the Cluster reconciled',
      async () => {
        const c = await clusters.get(metadata);
        return condition(c, 'Paused') && c;
      },
      WAIT_MS,
    );
  }
  /** Machine `m` of Cluster `demo`, with bootstrap config `m-boot` and infrastructure machine `m-infra`. */
  const createMachine = (spec: Partial<Machine['spec']> = {}, metadata: object = {}) =>
    machines().create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: RESOURCES.Machine.kind,
      metadata: { name: 'm', namespace: ns(), ...metadata },
      spec: { clusterName: 'demo', bootstrap: CONFIG, infrastructureRef: ref(INFRA), ...spec },
    } as Machine);
  /** The cluster, both provider objects as given, then the Machine. */
  async function createAll(
    boot: ProviderSetup | null,
    infra: ProviderSetup,
    spec: Partial<Machine['spec']> = {},
    metadata: object = {},
  ) {
    await createCluster();
    if (boot) await createProvider(BOOT, boot);
    await createProvider(INFRA, infra);
    return createMachine(spec, metadata);
  }
  const machineWhen = (what: string, test: (m: Machine) => unknown) =>
    eventually(
      what,
      async () => {
        const m = await getMachine();
        return test(m) ? m : undefined;
      },
      WAIT_MS,
    );
  /** present, deleting (held by a finalizer) or gone. */
  const stateOf = (get: () => Promise<KubernetesObject>) =>
    get().then(
      (o) => (o.metadata?.deletionTimestamp ? 'deleting' : 'present'),
      () => 'gone',
    );
  const providerStates = () => Promise.all([BOOT, INFRA].map((k) => stateOf(() => getProvider(k))));
  const machineGone = () =>
    eventually('the Machine gone', async () => (await stateOf(getMachine)) === 'gone', WAIT_MS);

  it.each<{
    case: string;
    boot: ProviderSetup | null;
    infra: ProviderSetup;
    spec?: Partial<Machine['spec']>;
    phase: string;
    copied: Partial<Machine['spec']>;
    initialization?: object;
    bootReady: Partial<Condition>;
    infraReady: Partial<Condition>;
  }>([
    {
      case: 'nothing reported yet',
      boot: {},
      infra: {},
      phase: 'Pending',
      copied: { bootstrap: CONFIG },
      bootReady: conditionLike(
        'False',
        'NotReady',
        `${BOOT} status.initialization.dataSecretCreated is false`,
      ),
      infraReady: conditionLike('False', 'NotReady', `${INFRA} status.initialization.provisioned is false`),
    },
    {
      case: 'bootstrap data created: its secret name copied',
      boot: BOOT_READY,
      infra: {},
      phase: 'Provisioning',
      copied: { bootstrap: { ...CONFIG, dataSecretName: 'm-data' } },
      initialization: { bootstrapDataSecretCreated: true },
      bootReady: conditionLike('True', 'Ready'),
      infraReady: conditionLike('False', 'NotReady'),
    },
    {
      case: 'a data secret name without dataSecretCreated is not taken',
      boot: { status: { dataSecretName: 'm-data' } },
      infra: {},
      phase: 'Pending',
      copied: { bootstrap: CONFIG },
      bootReady: conditionLike('False', 'NotReady'),
      infraReady: conditionLike('False', 'NotReady'),
    },
    {
      case: 'bootstrap data given directly, without a config',
      boot: null,
      infra: {},
      spec: { bootstrap: { dataSecretName: 'given' } },
      phase: 'Provisioning',
      copied: { bootstrap: { dataSecretName: 'given' } },
      initialization: { bootstrapDataSecretCreated: true },
      bootReady: conditionLike('True', 'DataSecretProvided'),
      infraReady: conditionLike('False', 'NotReady'),
    },
    {
      case: 'infrastructure provisioned: providerID and failure domain copied',
      boot: BOOT_READY,
      infra: INFRA_READY,
      phase: 'Provisioned',
      copied: {
        bootstrap: { ...CONFIG, dataSecretName: 'm-data' },
        providerID: PROVIDER_ID,
        failureDomain: 'fd-a',
      },
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      bootReady: conditionLike('True'),
      infraReady: conditionLike('True', 'Ready'),
    },
    {
      case: 'a providerID before the infrastructure is provisioned is not taken',
      boot: {},
      infra: { spec: { providerID: PROVIDER_ID } },
      phase: 'Pending',
      copied: { bootstrap: CONFIG },
      bootReady: conditionLike('False'),
      infraReady: conditionLike('False', 'NotReady'),
    },
    {
      case: 'a failure domain set on the Machine is kept',
      boot: {},
      infra: INFRA_READY,
      spec: { failureDomain: 'fd-user' },
      phase: 'Provisioned',
      copied: { bootstrap: CONFIG, providerID: PROVIDER_ID, failureDomain: 'fd-user' },
      initialization: { infrastructureProvisioned: true },
      bootReady: conditionLike('False'),
      infraReady: conditionLike('True'),
    },
    {
      case: "the providers' Ready conditions mirrored",
      boot: { status: { ...BOOT_READY.status, conditions: [ready('False', 'Rotating', 'token 1/2')] } },
      infra: { ...INFRA_READY, status: { ...PROVISIONED, conditions: [ready('Unknown', 'Probing')] } },
      phase: 'Provisioned',
      copied: {
        bootstrap: { ...CONFIG, dataSecretName: 'm-data' },
        providerID: PROVIDER_ID,
        failureDomain: 'fd-a',
      },
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
      bootReady: conditionLike('False', 'Rotating', 'token 1/2'),
      infraReady: conditionLike('Unknown', 'Probing'),
    },
  ])('$case', async (row) => {
    await createAll(row.boot, row.infra, row.spec);
    const m = await machineWhen(`phase ${row.phase}`, (m) => m.status?.phase === row.phase);
    expect(m.metadata?.finalizers).toEqual([FINALIZERS.machine]);
    const { bootstrap, providerID, failureDomain } = m.spec;
    const copied = { providerID: undefined, failureDomain: undefined, ...row.copied };
    expect({ bootstrap, providerID, failureDomain }).toEqual(copied);
    expect(m.status?.initialization).toEqual(row.initialization);
    expect(condition(m, 'BootstrapConfigReady')).toMatchObject(row.bootReady);
    expect(condition(m, 'InfrastructureReady')).toMatchObject(row.infraReady);
    const provisioned = row.initialization && 'infrastructureProvisioned' in row.initialization;
    expect(m.status?.addresses).toEqual(provisioned ? ADDRESSES : undefined);
    expect(m.status?.failureDomain).toBe(provisioned ? 'fd-a' : undefined);
    // No Node without a workload cluster: never Ready, never Available.
    expect(['False', 'Unknown']).toContain(condition(m, 'Ready')?.status);
    expect(condition(m, 'Available')).toMatchObject(conditionLike('False', 'NotReady'));
  });

  it.each<{ case: string; cluster?: Cluster['spec']; cp?: boolean; infra?: ProviderSetup; message: string }>([
    { case: 'no Cluster', message: 'Cluster demo does not exist' },
    {
      case: 'a Cluster whose infrastructure is not provisioned',
      cluster: { infrastructureRef: ref('GenericInfrastructureCluster', 'x') },
      message: 'Waiting for Cluster status.initialization.infrastructureProvisioned to be true',
    },
    {
      case: 'no providerID',
      cluster: {},
      infra: { status: PROVISIONED },
      message: `Waiting for ${INFRA} to report spec.providerID`,
    },
    {
      case: 'no initialized control plane',
      cluster: {},
      message: 'Waiting for Cluster control plane to be initialized',
    },
    { case: 'no kubeconfig', cluster: {}, cp: true, message: 'Secret demo-kubeconfig does not exist' },
  ])('NodeReady and NodeHealthy say what they wait for: $case', async ({ cluster, cp, infra, message }) => {
    if (cp) await createProvider(CP, { status: { initialization: { controlPlaneInitialized: true } } });
    if (cluster) await createCluster({ ...cluster, ...(cp ? { controlPlaneRef: ref(CP) } : {}) });
    await createProvider(BOOT, BOOT_READY);
    await createProvider(INFRA, infra ?? INFRA_READY);
    await createMachine();
    const m = await machineWhen(message, (m) => condition(m, 'NodeHealthy')?.message === message);
    for (const type of ['NodeReady', 'NodeHealthy']) {
      expect(condition(m, type)).toMatchObject(conditionLike('Unknown', 'InspectionFailed', message));
    }
    // Bootstrap and infrastructure are ready: only the Node keeps the Machine from being Ready.
    expect(condition(m, 'Ready')).toMatchObject(conditionLike('Unknown'));
    expect(condition(m, 'Available')).toMatchObject(conditionLike('False', 'NotReady'));
    expect(m.status?.nodeRef).toBeUndefined();
  });

  it.each<{ case: string; spec: Partial<Machine['spec']>; type: string; expected: Partial<Condition> }>([
    {
      case: 'a missing bootstrap config',
      spec: { bootstrap: { configRef: ref(BOOT, 'nowhere') } },
      type: 'BootstrapConfigReady',
      expected: conditionLike('False', 'ObjectDoesNotExist', `${BOOT} does not exist`),
    },
    {
      case: 'a missing infrastructure machine',
      spec: { infrastructureRef: ref(INFRA, 'nowhere') },
      type: 'InfrastructureReady',
      expected: conditionLike('False', 'ObjectDoesNotExist', `${INFRA} does not exist`),
    },
    {
      case: 'a bootstrap kind no CRD serves',
      spec: { bootstrap: { configRef: { ...ref(BOOT), kind: 'NoSuchConfig' } } },
      type: 'BootstrapConfigReady',
      expected: conditionLike('False', 'InvalidReference', noCrdMessage('NoSuchConfig', 'bootstrap')),
    },
    {
      case: 'an infrastructure kind no CRD serves',
      spec: { infrastructureRef: { ...ref(INFRA), kind: 'NoSuchMachine' } },
      type: 'InfrastructureReady',
      expected: conditionLike('False', 'InvalidReference', noCrdMessage('NoSuchMachine', 'infrastructure')),
    },
  ])('names the problem with $case', async ({ spec, type, expected }) => {
    await createAll(BOOT_READY, INFRA_READY, spec);
    const m = await machineWhen(
      `${type} ${expected.reason}`,
      (m) => condition(m, type)?.reason === expected.reason,
    );
    expect(condition(m, type)).toMatchObject(expected);
    expect(condition(m, 'Ready')).toMatchObject(conditionLike('False'));
  });

  it('converges once a missing infrastructure machine appears, and says when it is deleted later', async () => {
    await createCluster();
    await createProvider(BOOT, BOOT_READY);
    await createMachine();
    await machineWhen(
      'ObjectDoesNotExist',
      (m) => condition(m, 'InfrastructureReady')?.reason === 'ObjectDoesNotExist',
    );
    // Well before the 10 s requeue of a missing reference: the provider object's watch wakes the Machine.
    await createProvider(INFRA, INFRA_READY);
    const provisioned = await machineWhen('Provisioned', (m) => m.status?.phase === 'Provisioned');
    expect(provisioned.spec.providerID).toBe(PROVIDER_ID);

    await kind(INFRA).delete({ namespace: ns(), name: 'm-infra' });
    const deleted = await machineWhen(
      'ObjectDeleted',
      (m) => condition(m, 'InfrastructureReady')?.reason === 'ObjectDeleted',
    );
    const message = `${INFRA} has been deleted while the Machine still exists`;
    expect(condition(deleted, 'InfrastructureReady')).toMatchObject(
      conditionLike('False', 'ObjectDeleted', message),
    );
    expect(deleted.spec.providerID).toBe(PROVIDER_ID);
    expect(deleted.status?.initialization?.infrastructureProvisioned).toBe(true);
  });

  it.each<{ case: string; controlled: boolean }>([
    { case: 'a stand-alone Machine is owned by its Cluster', controlled: false },
    { case: 'a Machine controlled by its control plane keeps its owners', controlled: true },
  ])('labels and owners: $case; it controls its provider objects', async ({ controlled }) => {
    const cluster = await createCluster();
    await createProvider(CP);
    const cp = await getProvider(CP);
    const cpRef = {
      apiVersion: cp.apiVersion!,
      kind: CP,
      name: 'demo-cp',
      uid: cp.metadata!.uid!,
      controller: true,
    };
    // An "on-create" controller (the MachineSet that cloned it) is dropped; another owner stays.
    const creator = {
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: 'MachineSet',
      name: 'ms',
      uid: 'u',
      controller: true,
    };
    const keeper = { apiVersion: 'example.com/v1', kind: 'Keeper', name: 'k', uid: 'uid-k' };
    await createProvider(BOOT, { metadata: { ownerReferences: [creator, keeper] } });
    await createProvider(INFRA);
    const created = await createMachine({}, { ownerReferences: controlled ? [cpRef] : [] });
    const m = await machineWhen(
      'owners set',
      (m) => m.metadata?.ownerReferences?.length === 1 && m.metadata.finalizers,
    );
    expect(m.metadata?.labels?.[LABELS.clusterName]).toBe('demo');
    const clusterRef = { kind: 'Cluster', name: 'demo', uid: cluster.metadata?.uid };
    expect(m.metadata?.ownerReferences).toEqual([expect.objectContaining(controlled ? cpRef : clusterRef)]);
    const byMachine = expect.objectContaining({
      kind: 'Machine',
      name: 'm',
      uid: created.metadata?.uid,
      controller: true,
    });
    const owned = (k: string) =>
      eventually(
        `${k} owned`,
        async () => {
          const o = await getProvider(k);
          return o.metadata?.labels?.[LABELS.clusterName] === 'demo' && o.metadata.ownerReferences;
        },
        WAIT_MS,
      );
    expect(await owned(BOOT)).toEqual([keeper, byMachine]);
    expect(await owned(INFRA)).toEqual([byMachine]);
  });

  it.each<{ case: string; cluster: Cluster['spec']; metadata: object; message: string }>([
    {
      case: "its Cluster's spec.paused",
      cluster: { paused: true },
      metadata: {},
      message: 'Cluster spec.paused is set to true',
    },
    {
      case: 'the paused annotation',
      cluster: {},
      metadata: { annotations: { [ANNOTATIONS.paused]: '' } },
      message: `Machine has the ${ANNOTATIONS.paused} annotation`,
    },
  ])('is left alone but for the Paused condition with $case', async ({ cluster, metadata, message }) => {
    await createCluster(cluster);
    await createProvider(BOOT, BOOT_READY);
    await createProvider(INFRA, INFRA_READY);
    await createMachine({}, metadata);
    const m = await machineWhen('Paused', (m) => condition(m, 'Paused')?.status === 'True');
    expect(condition(m, 'Paused')).toMatchObject(conditionLike('True', 'Paused', message));
    expect(m.metadata?.finalizers).toBeUndefined();
    expect(m.status?.phase).toBeUndefined();
    expect(m.spec.providerID).toBeUndefined();
    for (const k of [BOOT, INFRA]) expect((await getProvider(k)).metadata?.ownerReferences).toBeUndefined();
  });

  const WAITS_INFRA: [string, string] = [
    'WaitingForInfrastructureDeletion',
    `${INFRA} m-infra is being deleted`,
  ];
  const WAITS_BOOT: [string, string] = ['WaitingForBootstrapDeletion', `${BOOT} m-boot is being deleted`];
  it.each<{ case: string; held: string[]; waits: [string, string][] }>([
    { case: 'provider objects that go at once', held: [], waits: [] },
    { case: 'an infrastructure machine held by its provider', held: [INFRA], waits: [WAITS_INFRA] },
    { case: 'a bootstrap config held by its provider', held: [BOOT], waits: [WAITS_BOOT] },
    {
      case: 'both held: the infrastructure is waited for first',
      held: [INFRA, BOOT],
      waits: [WAITS_INFRA, WAITS_BOOT],
    },
  ])('deletes its provider objects and waits for them: $case', async ({ held, waits }) => {
    const hold = (k: string) => (held.includes(k) ? { metadata: { finalizers: [HOLD] } } : {});
    await createAll({ ...BOOT_READY, ...hold(BOOT) }, { ...INFRA_READY, ...hold(INFRA) });
    await machineWhen('Provisioned', (m) => m.status?.phase === 'Provisioned');
    await machines().delete({ namespace: ns(), name: 'm' });
    let left = held;
    for (const [reason, message] of waits) {
      const m = await machineWhen(reason, (m) => condition(m, 'Deleting')?.reason === reason);
      expect(condition(m, 'Deleting')).toMatchObject(conditionLike('True', reason, message));
      expect(m.status?.phase).toBe('Deleting');
      expect(m.metadata?.finalizers).toEqual([FINALIZERS.machine]);
      // Both are asked to go at once; only those held by their provider are left.
      expect(await providerStates()).toEqual(
        [BOOT, INFRA].map((k) => (left.includes(k) ? 'deleting' : 'gone')),
      );
      const k = reason === 'WaitingForInfrastructureDeletion' ? INFRA : BOOT;
      await kind(k).mergePatch({ namespace: ns(), name: NAMES[k]! }, { metadata: { finalizers: null } });
      left = left.filter((h) => h !== k);
    }
    await machineGone();
    expect(await providerStates()).toEqual(['gone', 'gone']);
  });

  it.each<{ hook: string; reason: string; started: string }>([
    { hook: PRE_DRAIN, reason: 'WaitingForPreDrainHook', started: 'waitForPreDrainHookStartTime' },
    {
      hook: PRE_TERMINATE,
      reason: 'WaitingForPreTerminateHook',
      started: 'waitForPreTerminateHookStartTime',
    },
  ])('waits for $reason before touching its provider objects', async ({ hook, reason, started }) => {
    await createAll(BOOT_READY, INFRA_READY, {}, { annotations: { [hook]: '' } });
    await machineWhen('Provisioned', (m) => m.status?.phase === 'Provisioned');
    await machines().delete({ namespace: ns(), name: 'm' });
    const m = await machineWhen(reason, (m) => condition(m, 'Deleting')?.reason === reason);
    expect(condition(m, 'Deleting')?.message).toContain(`(hooks: ${hook})`);
    expect(m.status?.deletion).toHaveProperty(started);
    expect(m.status?.phase).toBe('Deleting');
    expect(condition(m, 'Ready')).toMatchObject(conditionLike('False'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await providerStates()).toEqual(['present', 'present']);

    await machines().mergePatch(
      { namespace: ns(), name: 'm' },
      { metadata: { annotations: { [hook]: null } } },
    );
    await machineGone();
    expect(await providerStates()).toEqual(['gone', 'gone']);
  });
});
