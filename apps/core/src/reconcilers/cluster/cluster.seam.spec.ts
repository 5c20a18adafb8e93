import { type KubernetesObject } from '@kubernetes/client-node';
import { FINALIZERS, LABELS, RESOURCES, type Cluster, type Condition, type Machine } from '@capstan/api';
import { genericProviderKind } from '@capstan/testing';
import { condition, conditionLike, reportedCondition } from '../../testing/conditions.js';
import {
  createGenericProvider,
  noCrdMessage,
  type GenericProviderObject,
  type ProviderSetup,
} from '../../testing/generic-provider-objects.js';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import { createTemplates, eventually, machineTemplate, resourceOf } from '../../testing/workload-env.js';

const INFRA = 'GenericInfrastructureCluster';
const CP = 'GenericControlPlane';
const HOLD = 'test.capstan.dev/hold';
const WAIT_MS = 3_000;
const INFRA_EP = { host: '10.0.0.1', port: 6443 };
const CP_EP = { host: 'cp.example', port: 443 };
const PROVISIONED = { initialization: { provisioned: true } };
const ENDPOINT_PROVISIONED = { spec: { controlPlaneEndpoint: INFRA_EP }, status: PROVISIONED };
const DOMAINS = [{ name: 'fd-a', controlPlane: true }, { name: 'fd-b' }];
const ref = (kind: string, name: string) => ({ apiGroup: genericProviderKind(kind).group, kind, name });
const machineSpec = (infra: string) => ({
  clusterName: 'demo',
  bootstrap: { dataSecretName: 'data' },
  infrastructureRef: ref('GenericInfrastructureMachine', infra),
});
const typed = (r: { apiVersion: string; kind: string }) => ({ apiVersion: r.apiVersion, kind: r.kind });

describe('Cluster controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  beforeEach(async () => {
    bed = await startInMemoryWorkload({ wholeCore: true });
  });
  afterEach(() => bed.stop());

  const ns = () => bed.ns.name;
  const clusters = () => bed.client.resource<Cluster>(RESOURCES.Cluster);
  const machines = () => bed.client.resource<Machine>(RESOURCES.Machine);
  const kind = (k: string) => bed.client.resource<GenericProviderObject>(resourceOf(k));
  const getCluster = () => clusters().get({ namespace: ns(), name: 'demo' });
  const getProvider = (k: string, name: string) => kind(k).get({ namespace: ns(), name });
  const createCluster = (spec: Cluster['spec']) =>
    clusters().create({
      ...typed(RESOURCES.Cluster),
      metadata: { name: 'demo', namespace: ns() },
      spec,
    } as Cluster);
  const createProvider = (k: string, name: string, setup: ProviderSetup = {}) =>
    createGenericProvider(bed.client, ns(), k, name, setup);
  const clusterWhen = (what: string, test: (c: Cluster) => unknown) =>
    eventually(
      what,
      async () => {
        const c = await getCluster();
        return test(c) ? c : undefined;
      },
      WAIT_MS,
    );
  /** present, deleting (held by a finalizer) or gone. */
  const stateOf = (get: () => Promise<KubernetesObject>) =>
    get().then(
      (o) => (o.metadata?.deletionTimestamp ? 'deleting' : 'present'),
      () => 'gone',
    );
  const clusterGone = () =>
    eventually('the Cluster gone', async () => (await stateOf(getCluster)) === 'gone', WAIT_MS);
  const release = (client: { mergePatch(ref: object, patch: object): Promise<unknown> }, name: string) =>
    client.mergePatch({ namespace: ns(), name }, { metadata: { finalizers: null } });

  it('adds its finalizer and reports a missing infrastructure object', async () => {
    await bed.client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: RESOURCES.Cluster.kind,
      metadata: { name: 'demo', namespace: bed.ns.name },
      spec: {
        infrastructureRef: {
          apiGroup: 'infrastructure.generic.capstan.dev',
          kind: 'GenericInfrastructureCluster',
          name: 'demo',
        },
      },
    } as Cluster);
    const cluster = await eventually(
      'the Cluster reconciled',
      async () => {
        const c = await bed.client
          .resource<Cluster>(RESOURCES.Cluster)
          .get({ namespace: bed.ns.name, name: 'demo' });
        return c.status?.conditions?.some((x) => x.type === 'InfrastructureReady') ? c : undefined;
      },
      10_000,
    );
    expect(cluster.metadata?.finalizers).toContain('cluster.cluster.x-k8s.io');
    expect(cluster.status?.conditions?.find((c) => c.type === 'InfrastructureReady')?.status).not.toBe(
      'True',
    );
  });

  it.each<{
    case: string;
    infra?: ProviderSetup;
    cp?: ProviderSetup;
    spec?: Partial<Cluster['spec']>;
    phase: string;
    endpoint?: object;
    domains?: object[];
    provisioned?: true;
    infraReady: Partial<Condition>;
  }>([
    {
      case: 'no references: nothing to provision, no endpoint',
      phase: 'Pending',
      provisioned: true,
      infraReady: conditionLike('True', 'Ready', 'No infrastructureRef: nothing to provision'),
    },
    {
      case: 'infrastructure not provisioned: its endpoint and failure domains are not taken yet',
      infra: { spec: { controlPlaneEndpoint: INFRA_EP }, status: { failureDomains: DOMAINS } },
      phase: 'Provisioning',
      infraReady: conditionLike('False', 'NotReady', `${INFRA} status.initialization.provisioned is false`),
    },
    {
      case: 'infrastructure provisioned: its endpoint and failure domains copied',
      infra: {
        spec: { controlPlaneEndpoint: INFRA_EP },
        status: { ...PROVISIONED, failureDomains: DOMAINS },
      },
      phase: 'Provisioned',
      endpoint: INFRA_EP,
      domains: DOMAINS,
      provisioned: true,
      infraReady: conditionLike('True', 'Ready'),
    },
    {
      case: 'infrastructure provisioned without an endpoint',
      infra: { status: PROVISIONED },
      phase: 'Provisioning',
      provisioned: true,
      infraReady: conditionLike('True', 'Ready'),
    },
    {
      case: "the infrastructure's Ready condition mirrored",
      infra: {
        status: {
          ...PROVISIONED,
          conditions: [reportedCondition('Ready', 'False', 'LoadBalancerDegraded', 'lb 2/3')],
        },
      },
      phase: 'Provisioning',
      provisioned: true,
      infraReady: conditionLike('False', 'LoadBalancerDegraded', 'lb 2/3'),
    },
    {
      case: "the control plane's endpoint before the infrastructure's",
      infra: ENDPOINT_PROVISIONED,
      cp: { spec: { controlPlaneEndpoint: CP_EP } },
      phase: 'Provisioned',
      endpoint: CP_EP,
      provisioned: true,
      infraReady: conditionLike('True'),
    },
    {
      case: "the control plane's endpoint while the infrastructure is not provisioned",
      infra: {},
      cp: { spec: { controlPlaneEndpoint: CP_EP } },
      phase: 'Provisioning',
      endpoint: CP_EP,
      infraReady: conditionLike('False', 'NotReady'),
    },
    {
      case: 'an endpoint set on the Cluster is kept',
      spec: { controlPlaneEndpoint: { host: 'user.example', port: 8443 } },
      infra: ENDPOINT_PROVISIONED,
      phase: 'Provisioned',
      endpoint: { host: 'user.example', port: 8443 },
      provisioned: true,
      infraReady: conditionLike('True'),
    },
  ])('$case', async ({ infra, cp, spec, phase, endpoint, domains, provisioned, infraReady }) => {
    if (infra) await createProvider(INFRA, 'demo-infra', infra);
    if (cp) await createProvider(CP, 'demo-cp', cp);
    await createCluster({
      ...spec,
      ...(infra ? { infrastructureRef: ref(INFRA, 'demo-infra') } : {}),
      ...(cp ? { controlPlaneRef: ref(CP, 'demo-cp') } : {}),
    });
    const cluster = await clusterWhen(`phase ${phase}`, (c) => c.status?.phase === phase);
    expect(cluster.metadata?.finalizers).toEqual([FINALIZERS.cluster]);
    expect(cluster.spec.controlPlaneEndpoint).toEqual(endpoint);
    expect(cluster.status?.failureDomains).toEqual(domains);
    expect(cluster.status?.initialization?.infrastructureProvisioned).toBe(provisioned);
    expect(condition(cluster, 'InfrastructureReady')).toMatchObject(infraReady);
    expect(condition(cluster, 'Deleting')).toMatchObject(conditionLike('False', 'NotDeleting'));
    expect(condition(cluster, 'Paused')).toMatchObject(conditionLike('False', 'NotPaused'));
  });

  const INITIALIZED = { initialization: { controlPlaneInitialized: true } };
  it.each<{ case: string; status: object; initialized: Partial<Condition>; available: Partial<Condition> }>([
    {
      case: 'not initialized',
      status: {},
      initialized: conditionLike(
        'False',
        'NotInitialized',
        `Waiting for the ${CP} to report status.initialization.controlPlaneInitialized`,
      ),
      available: conditionLike('False', 'NotAvailable', `${CP} does not report an Available condition`),
    },
    {
      case: 'initialized and Available',
      status: { ...INITIALIZED, conditions: [reportedCondition('Available', 'True', 'Available')] },
      initialized: conditionLike('True', 'Initialized'),
      available: conditionLike('True', 'Available'),
    },
    {
      case: 'initialized, its Available condition mirrored',
      status: {
        ...INITIALIZED,
        conditions: [reportedCondition('Available', 'False', 'EtcdQuorumLost', 'etcd 1/3')],
      },
      initialized: conditionLike('True', 'Initialized'),
      available: conditionLike('False', 'EtcdQuorumLost', 'etcd 1/3'),
    },
  ])('control plane $case: ControlPlaneInitialized, ControlPlaneAvailable, replicas', async (row) => {
    const replicas = { replicas: 3, readyReplicas: 2, availableReplicas: 1, upToDateReplicas: 3 };
    await createProvider(CP, 'demo-cp', { spec: { replicas: 3 }, status: { ...row.status, ...replicas } });
    await createCluster({ controlPlaneRef: ref(CP, 'demo-cp') });
    const cluster = await clusterWhen('ControlPlaneInitialized', (c) =>
      condition(c, 'ControlPlaneInitialized'),
    );
    expect(condition(cluster, 'ControlPlaneInitialized')).toMatchObject(row.initialized);
    expect(condition(cluster, 'ControlPlaneAvailable')).toMatchObject(row.available);
    const initialized = row.initialized.status === 'True';
    expect(cluster.status?.initialization?.controlPlaneInitialized).toBe(initialized ? true : undefined);
    expect(cluster.status?.controlPlane).toEqual({ desiredReplicas: 3, ...replicas });
    // No kubeconfig Secret here: once initialized the probe says what is missing, and the Cluster is not Available.
    const probe = initialized
      ? 'Secret demo-kubeconfig does not exist'
      : 'Remote connection not established yet';
    expect(condition(cluster, 'RemoteConnectionProbe')).toMatchObject(
      conditionLike('False', 'ProbeFailed', probe),
    );
    expect(condition(cluster, 'Available')).toMatchObject(conditionLike('False'));
  });

  it('owns its infrastructure and control plane objects with the cluster-name label, and puts them back', async () => {
    const other = { apiVersion: 'example.com/v1', kind: 'Keeper', name: 'k', uid: 'uid-k' };
    await createProvider(INFRA, 'demo-infra', { metadata: { ownerReferences: [other] } });
    await createProvider(CP, 'demo-cp');
    const created = await createCluster({
      infrastructureRef: ref(INFRA, 'demo-infra'),
      controlPlaneRef: ref(CP, 'demo-cp'),
    });
    const owned = (k: string, name: string) =>
      eventually(
        `${k} owned`,
        async () => {
          const o = await getProvider(k, name);
          const byCluster = (o.metadata?.ownerReferences ?? []).filter((r) => r.kind === 'Cluster');
          const plain =
            byCluster.length === 1 &&
            byCluster[0]!.uid === created.metadata?.uid &&
            !byCluster[0]!.controller;
          return plain && o.metadata?.labels?.[LABELS.clusterName] === 'demo' && o;
        },
        WAIT_MS,
      );
    expect((await owned(INFRA, 'demo-infra')).metadata?.ownerReferences).toContainEqual(
      expect.objectContaining(other),
    );
    await owned(CP, 'demo-cp');

    const drop = { metadata: { ownerReferences: null, labels: { [LABELS.clusterName]: null } } };
    await kind(CP).mergePatch({ namespace: ns(), name: 'demo-cp' }, drop);
    await clusters().mergePatch({ namespace: ns(), name: 'demo' }, { metadata: { finalizers: null } });
    await owned(CP, 'demo-cp');
    await clusterWhen('finalizer back', (c) => c.metadata?.finalizers?.includes(FINALIZERS.cluster));
  });

  const NO_SUCH = (kind: string, group: string) => ({
    apiGroup: `${group}.generic.capstan.dev`,
    kind,
    name: 'x',
  });
  it.each<{ case: string; spec: Cluster['spec']; type: string; expected: Partial<Condition> }>([
    {
      case: 'a missing infrastructure object',
      spec: { infrastructureRef: ref(INFRA, 'nowhere') },
      type: 'InfrastructureReady',
      expected: conditionLike('Unknown', 'ObjectDoesNotExist', `${INFRA} does not exist`),
    },
    {
      case: 'a missing control plane object',
      spec: { controlPlaneRef: ref(CP, 'nowhere') },
      type: 'ControlPlaneAvailable',
      expected: conditionLike('Unknown', 'ObjectDoesNotExist', `${CP} does not exist`),
    },
    {
      case: 'an infrastructure kind no CRD serves',
      spec: { infrastructureRef: NO_SUCH('NoSuchCluster', 'infrastructure') },
      type: 'InfrastructureReady',
      expected: conditionLike('False', 'InvalidReference', noCrdMessage('NoSuchCluster', 'infrastructure')),
    },
    {
      case: 'a control plane kind no CRD serves',
      spec: { controlPlaneRef: NO_SUCH('NoSuchControlPlane', 'controlplane') },
      type: 'ControlPlaneAvailable',
      expected: conditionLike(
        'False',
        'InvalidReference',
        noCrdMessage('NoSuchControlPlane', 'controlplane'),
      ),
    },
  ])('names the problem with $case', async ({ spec, type, expected }) => {
    await createCluster(spec);
    const cluster = await clusterWhen(
      `${type} ${expected.reason}`,
      (c) => condition(c, type)?.reason === expected.reason,
    );
    expect(condition(cluster, type)).toMatchObject(expected);
    expect(cluster.status?.phase).toBe('Provisioning');
  });

  it('converges once a missing infrastructure object appears, and says when it is deleted later', async () => {
    await createCluster({ infrastructureRef: ref(INFRA, 'late') });
    await clusterWhen(
      'ObjectDoesNotExist',
      (c) => condition(c, 'InfrastructureReady')?.reason === 'ObjectDoesNotExist',
    );
    // Well before the 10 s requeue of a missing reference: the provider object's watch wakes the Cluster.
    await createProvider(INFRA, 'late', ENDPOINT_PROVISIONED);
    const provisioned = await clusterWhen('Provisioned', (c) => c.status?.phase === 'Provisioned');
    expect(provisioned.spec.controlPlaneEndpoint).toEqual(INFRA_EP);

    await kind(INFRA).delete({ namespace: ns(), name: 'late' });
    const deleted = await clusterWhen(
      'ObjectDeleted',
      (c) => condition(c, 'InfrastructureReady')?.reason === 'ObjectDeleted',
    );
    const message = `${INFRA} has been deleted while the cluster still exists`;
    expect(condition(deleted, 'InfrastructureReady')).toMatchObject(
      conditionLike('Unknown', 'ObjectDeleted', message),
    );
    expect(deleted.status?.initialization?.infrastructureProvisioned).toBe(true);
    expect(deleted.status?.phase).toBe('Provisioned');
  });

  it('leaves a paused Cluster alone but for the Paused condition, and resumes when unpaused', async () => {
    await createProvider(INFRA, 'demo-infra');
    await createCluster({ paused: true, infrastructureRef: ref(INFRA, 'demo-infra') });
    const paused = await clusterWhen('Paused', (c) => condition(c, 'Paused')?.status === 'True');
    expect(condition(paused, 'Paused')).toMatchObject(
      conditionLike('True', 'Paused', 'Cluster spec.paused is set to true'),
    );
    expect(paused.metadata?.finalizers).toBeUndefined();
    expect(paused.status?.phase).toBeUndefined();
    expect(condition(paused, 'InfrastructureReady')).toBeUndefined();
    expect((await getProvider(INFRA, 'demo-infra')).metadata?.ownerReferences).toBeUndefined();

    await clusters().mergePatch({ namespace: ns(), name: 'demo' }, { spec: { paused: false } });
    const resumed = await clusterWhen('resumed', (c) => c.status?.phase === 'Provisioning');
    expect(condition(resumed, 'Paused')).toMatchObject(conditionLike('False', 'NotPaused'));
    expect(resumed.metadata?.finalizers).toEqual([FINALIZERS.cluster]);
    expect((await getProvider(INFRA, 'demo-infra')).metadata?.labels?.[LABELS.clusterName]).toBe('demo');
  });

  const BOTH = { infrastructureRef: ref(INFRA, 'x'), controlPlaneRef: ref(CP, 'x') };
  it.each<{ case: string; spec: Cluster['spec']; objects: string[] }>([
    { case: 'no references', spec: {}, objects: [] },
    { case: 'references to missing objects', spec: BOTH, objects: [] },
    {
      case: 'a kind no CRD serves',
      spec: { infrastructureRef: NO_SUCH('NoSuchCluster', 'infrastructure') },
      objects: [],
    },
    { case: 'provider objects that go at once', spec: BOTH, objects: [INFRA, CP] },
  ])('goes with nothing to wait for: $case', async ({ spec, objects }) => {
    for (const k of objects) await createProvider(k, 'x');
    await createCluster(spec);
    await clusterWhen(
      'reconciled',
      (c) => c.metadata?.finalizers?.includes(FINALIZERS.cluster) && c.status?.phase,
    );
    await clusters().delete({ namespace: ns(), name: 'demo' });
    await clusterGone();
    for (const k of objects) expect(await stateOf(() => getProvider(k, 'x'))).toBe('gone');
  });

  it('deletes MachineDeployments, MachineSets, worker Machines, the control plane, then the infrastructure', async () => {
    const hold = { finalizers: [HOLD] };
    await createProvider(INFRA, 'del-infra', { ...ENDPOINT_PROVISIONED, metadata: hold });
    await createProvider(CP, 'del-cp', { metadata: hold });
    await createTemplates(bed, 'workers');
    await createCluster({ infrastructureRef: ref(INFRA, 'del-infra'), controlPlaneRef: ref(CP, 'del-cp') });
    const workers = (pool: string) => ({
      clusterName: 'demo',
      replicas: 0,
      selector: { matchLabels: { pool } },
      template: machineTemplate('demo', 'workers', { pool }),
    });
    const deployments = bed.client.resource<KubernetesObject>(RESOURCES.MachineDeployment);
    const sets = bed.client.resource<KubernetesObject>(RESOURCES.MachineSet);
    const meta = (name: string) => ({ name, namespace: ns(), ...hold });
    const md = { ...typed(RESOURCES.MachineDeployment), metadata: meta('del-md'), spec: workers('md') };
    await deployments.create(md as KubernetesObject);
    await sets.create({
      ...typed(RESOURCES.MachineSet),
      metadata: meta('del-ms'),
      spec: workers('ms'),
    } as KubernetesObject);
    await machines().create({
      ...typed(RESOURCES.Machine),
      metadata: meta('del-worker'),
      spec: machineSpec('x'),
    } as Machine);
    await clusterWhen('Provisioned', (c) => c.status?.phase === 'Provisioned');

    await clusters().delete({ namespace: ns(), name: 'demo' });
    type Client = {
      get(ref: object): Promise<KubernetesObject>;
      mergePatch(ref: object, patch: object): Promise<unknown>;
    };
    const steps: [string, string, Client, string][] = [
      ['WaitingForWorkersDeletion', 'MachineDeployments del-md', deployments, 'del-md'],
      ['WaitingForWorkersDeletion', 'del-ms', sets, 'del-ms'],
      ['WaitingForWorkersDeletion', 'Worker Machines del-worker', machines(), 'del-worker'],
      ['WaitingForControlPlaneDeletion', `${CP} del-cp is being deleted`, kind(CP), 'del-cp'],
      ['WaitingForInfrastructureDeletion', `${INFRA} del-infra is being deleted`, kind(INFRA), 'del-infra'],
    ];
    for (const [i, [reason, fragment, client, name]] of steps.entries()) {
      const c = await clusterWhen(`Deleting ${reason}: ${fragment}`, (c) => {
        const deleting = condition(c, 'Deleting');
        return (
          deleting?.status === 'True' && deleting.reason === reason && deleting.message.includes(fragment)
        );
      });
      expect(c.status?.phase).toBe('Deleting');
      expect(c.metadata?.finalizers).toContain(FINALIZERS.cluster);
      // What comes before is gone, this step's object is being deleted, what comes after is untouched.
      const states = await Promise.all(
        steps.map(([, , cl, n]) => stateOf(() => cl.get({ namespace: ns(), name: n }))),
      );
      expect(states).toEqual(steps.map((_, j) => (j < i ? 'gone' : j === i ? 'deleting' : 'present')));
      await release(client, name);
    }
    await clusterGone();
  });

  it('without a control plane object, deletes the control plane Machines after the workers', async () => {
    await createCluster({});
    for (const [name, labels] of [
      ['cp-0', { [LABELS.controlPlane]: '' }],
      ['worker-0', {}],
    ] as const) {
      const metadata = { name, namespace: ns(), labels, finalizers: [HOLD] };
      await machines().create({ ...typed(RESOURCES.Machine), metadata, spec: machineSpec(name) } as Machine);
    }
    await clusterWhen('counted its Machines', (c) => c.status?.controlPlane?.replicas === 1);
    await clusters().delete({ namespace: ns(), name: 'demo' });
    const states = () =>
      Promise.all(
        ['cp-0', 'worker-0'].map((name) => stateOf(() => machines().get({ namespace: ns(), name }))),
      );
    await clusterWhen(
      'workers first',
      (c) => condition(c, 'Deleting')?.message === 'Worker Machines worker-0 are being deleted',
    );
    expect(await states()).toEqual(['present', 'deleting']);
    await release(machines(), 'worker-0');
    const c = await clusterWhen('then the control plane', (c) =>
      condition(c, 'Deleting')?.message?.startsWith('Control'),
    );
    const message = 'Control plane Machines cp-0 are being deleted';
    expect(condition(c, 'Deleting')).toMatchObject(
      conditionLike('True', 'WaitingForControlPlaneDeletion', message),
    );
    expect(await states()).toEqual(['deleting', 'gone']);
    await release(machines(), 'cp-0');
    await clusterGone();
  });
});
