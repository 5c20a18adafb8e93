import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { FINALIZERS, LABELS, RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { testNatsUrl } from '@capstan/testing';
import {
  collectLifecycleEvents,
  condition,
  eventually,
  startCoreHarness,
  v1beta1Condition,
  type CoreHarness,
  type Unstructured,
} from '../../testing/core-test-harness.js';

const INFRA = 'GenericInfrastructureCluster';
const CP = 'GenericControlPlane';
const HOLD = 'test.capstan.dev/hold';

/** A v1beta1-contract provider kind (status.ready, map-shaped failure domains), as providers of Cluster API <= 1.10 ship. */
const LEGACY = {
  group: 'infrastructure.legacy.capstan.dev',
  version: 'v1beta1',
  kind: 'LegacyCluster',
  plural: 'legacyclusters',
};

async function installLegacyCrd(h: CoreHarness): Promise<void> {
  const api = h.ns.kc.makeApiClient(ApiextensionsV1Api);
  const open = { type: 'object', x_kubernetes_preserve_unknown_fields: true };
  await api
    .createCustomResourceDefinition({
      body: {
        metadata: {
          name: `${LEGACY.plural}.${LEGACY.group}`,
          labels: { 'cluster.x-k8s.io/v1beta1': LEGACY.version },
        },
        spec: {
          group: LEGACY.group,
          scope: 'Namespaced',
          names: {
            kind: LEGACY.kind,
            plural: LEGACY.plural,
            singular: LEGACY.kind.toLowerCase(),
            listKind: `${LEGACY.kind}List`,
          },
          versions: [
            {
              name: LEGACY.version,
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
              subresources: { status: {} },
            },
          ],
        },
      },
    })
    .catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  await eventually('the legacy CRD to be served', async () => {
    const crd = await api.readCustomResourceDefinition({ name: `${LEGACY.plural}.${LEGACY.group}` });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}

describe('Cluster controller', () => {
  let h: CoreHarness;
  let lifecycle: Awaited<ReturnType<typeof collectLifecycleEvents>>;

  beforeAll(async () => {
    h = await startCoreHarness({ prefix: 'core-cl' });
    lifecycle = await collectLifecycleEvents(testNatsUrl(), h.topology);
  });
  afterAll(async () => {
    await lifecycle?.close();
    await h?.stop();
  });

  const getCluster = (name: string) => h.clusters.get({ namespace: h.namespace, name });
  const createCluster = (name: string, spec: Cluster['spec'], metadata: Record<string, unknown> = {}) =>
    h.clusters.create({ metadata: { name, namespace: h.namespace, ...metadata }, spec } as Cluster);
  const ownedByCluster = (obj: Unstructured, cluster: Cluster) =>
    (obj.metadata?.ownerReferences ?? []).some(
      (r) => r.kind === 'Cluster' && r.uid === cluster.metadata?.uid && r.controller !== true,
    ) && obj.metadata?.labels?.[LABELS.clusterName] === cluster.metadata?.name;

  it('stays Pending without references or endpoint, and takes the Cluster in', async () => {
    await createCluster('bare', {});
    const cluster = await eventually('phase Pending with the finalizer', async () => {
      const c = await getCluster('bare');
      return c.status?.phase === 'Pending' && c.metadata?.finalizers?.includes(FINALIZERS.cluster) && c;
    });
    expect(cluster.status?.initialization?.infrastructureProvisioned).toBe(true);
    expect(condition(cluster, 'Deleting')).toMatchObject({ status: 'False', reason: 'NotDeleting' });
    expect(condition(cluster, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
  });

  it('provisions with generic v1beta2 providers: ownership, endpoint, failure domains, counters, conditions, events', async () => {
    await h.create(INFRA, 'thin-infra');
    await h.create(CP, 'thin-cp', { replicas: 3 });
    await createCluster('thin', {
      infrastructureRef: h.ref(INFRA, 'thin-infra'),
      controlPlaneRef: h.ref(CP, 'thin-cp'),
    });

    const provisioning = await eventually('phase Provisioning', async () => {
      const c = await getCluster('thin');
      return c.status?.phase === 'Provisioning' && c;
    });
    expect(provisioning.metadata?.finalizers).toContain(FINALIZERS.cluster);
    expect(condition(provisioning, 'InfrastructureReady')).toMatchObject({
      status: 'False',
      reason: 'NotReady',
    });
    // The v1beta1 status upstream's core still writes, kept by the CRD for clients reading v1beta1.
    expect(v1beta1Condition(provisioning, 'InfrastructureReady')).toMatchObject({
      status: 'False',
      severity: 'Info',
      reason: 'WaitingForInfrastructure',
    });
    expect(
      ownedByCluster(await h.kind(INFRA).get({ namespace: h.namespace, name: 'thin-infra' }), provisioning),
    ).toBe(true);
    expect(
      ownedByCluster(await h.kind(CP).get({ namespace: h.namespace, name: 'thin-cp' }), provisioning),
    ).toBe(true);

    // The infrastructure provider's part: endpoint, failure domains, provisioned, Ready; then its hand-off event.
    await h
      .kind(INFRA)
      .mergePatch(
        { namespace: h.namespace, name: 'thin-infra' },
        { spec: { controlPlaneEndpoint: { host: '10.0.0.1', port: 6443 } } },
      );
    await h.setStatus(INFRA, 'thin-infra', {
      initialization: { provisioned: true },
      failureDomains: [
        { name: 'fd-a', controlPlane: true },
        { name: 'fd-b', attributes: { zone: 'b' } },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Provisioned',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    await h.handoff('infrastructure-cluster.provisioned', INFRA, 'thin-infra', { clusterName: 'thin' });
    const provisioned = await eventually('phase Provisioned', async () => {
      const c = await getCluster('thin');
      return c.status?.phase === 'Provisioned' && c;
    });
    expect(provisioned.spec.controlPlaneEndpoint).toEqual({ host: '10.0.0.1', port: 6443 });
    expect(provisioned.status?.initialization?.infrastructureProvisioned).toBe(true);
    expect(provisioned.status?.failureDomains).toEqual([
      { name: 'fd-a', controlPlane: true },
      { name: 'fd-b', attributes: { zone: 'b' } },
    ]);
    expect(condition(provisioned, 'InfrastructureReady')).toMatchObject({
      status: 'True',
      reason: 'Provisioned',
    });
    expect(condition(provisioned, 'ControlPlaneInitialized')).toMatchObject({
      status: 'False',
      reason: 'NotInitialized',
    });
    expect(provisioned.status?.controlPlane).toEqual({ desiredReplicas: 3 });

    // The control plane provider's part.
    await h.setStatus(CP, 'thin-cp', {
      initialization: { controlPlaneInitialized: true },
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 3,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'Available',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    await h.handoff('control-plane.initialized', CP, 'thin-cp', { clusterName: 'thin' });
    const initialized = await eventually('control plane initialized', async () => {
      const c = await getCluster('thin');
      return c.status?.initialization?.controlPlaneInitialized === true && c;
    });
    expect(initialized.status?.controlPlane).toEqual({
      desiredReplicas: 3,
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      upToDateReplicas: 3,
    });
    expect(condition(initialized, 'ControlPlaneInitialized')).toMatchObject({
      status: 'True',
      reason: 'Initialized',
    });
    expect(condition(initialized, 'ControlPlaneAvailable')).toMatchObject({
      status: 'True',
      reason: 'Available',
    });
    expect(condition(initialized, 'WorkersAvailable')).toMatchObject({ status: 'True', reason: 'NoWorkers' });
    expect(initialized.status?.deprecated?.v1beta1?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=True',
      'ControlPlaneInitialized=True',
      'ControlPlaneReady=True',
      'InfrastructureReady=True',
    ]);
    // Mirrored from the infrastructure cluster's Ready (read as v1beta1 as far as it goes).
    expect(v1beta1Condition(initialized, 'InfrastructureReady')).toMatchObject({ reason: 'Provisioned' });
    // No kubeconfig yet: the workload cluster cannot be probed, so the Cluster is not Available.
    expect(condition(initialized, 'RemoteConnectionProbe')).toMatchObject({
      status: 'False',
      reason: 'ProbeFailed',
    });
    expect(condition(initialized, 'Available')).toMatchObject({ status: 'False', reason: 'NotAvailable' });

    await h.createKubeconfigSecret('thin');
    const available = await eventually('Available', async () => {
      const c = await getCluster('thin');
      return condition(c, 'Available')?.status === 'True' && c;
    });
    expect(condition(available, 'RemoteConnectionProbe')).toMatchObject({
      status: 'True',
      reason: 'ProbeSucceeded',
    });

    await eventually('created, provisioned and available events', () =>
      ['cluster.created', 'cluster.provisioned', 'cluster.available'].every(
        (e) => lifecycle.named(e, 'thin') === 1,
      ),
    );
  });

  it('takes the control plane endpoint from the control plane when it provides one', async () => {
    await h.create(INFRA, 'cpep-infra', { controlPlaneEndpoint: { host: 'infra.example', port: 6443 } });
    await h.create(CP, 'cpep-cp', { controlPlaneEndpoint: { host: 'cp.example', port: 443 } });
    await h.setStatus(INFRA, 'cpep-infra', { initialization: { provisioned: true } });
    await createCluster('cpep', {
      infrastructureRef: h.ref(INFRA, 'cpep-infra'),
      controlPlaneRef: h.ref(CP, 'cpep-cp'),
    });
    const cluster = await eventually('Provisioned', async () => {
      const c = await getCluster('cpep');
      return c.status?.phase === 'Provisioned' && c;
    });
    expect(cluster.spec.controlPlaneEndpoint).toEqual({ host: 'cp.example', port: 443 });
  });

  it('reads a v1beta1-contract infrastructure cluster: status.ready and map-shaped failure domains', async () => {
    await installLegacyCrd(h);
    const legacy = h.client.resource<Unstructured>({ ...LEGACY, namespaced: true });
    await legacy.create({
      metadata: { name: 'old-infra', namespace: h.namespace },
      spec: { controlPlaneEndpoint: { host: '10.0.0.9', port: 6443 } },
    } as Unstructured);
    // A v1beta2 field on a v1beta1-contract object is not what the contract says: the core must go by status.ready.
    await legacy.patchStatus(
      { namespace: h.namespace, name: 'old-infra' },
      { initialization: { provisioned: true } },
    );
    await createCluster('old', {
      infrastructureRef: { apiGroup: LEGACY.group, kind: LEGACY.kind, name: 'old-infra' },
    });
    const waiting = await eventually('Provisioning', async () => {
      const c = await getCluster('old');
      return c.status?.phase === 'Provisioning' && c;
    });
    expect(waiting.status?.initialization?.infrastructureProvisioned).toBeUndefined();

    const ready = await legacy.patchStatus(
      { namespace: h.namespace, name: 'old-infra' },
      { ready: true, failureDomains: { 'fd-z': { controlPlane: true }, 'fd-y': {} } },
    );
    // A provider without hand-off events: the core sees the write at its next look (a resync, here a poke) in
    // its cache of the kind, so the poke waits until the cache holds it.
    const cache = h.service.context.manager.informer<Unstructured>({ ...LEGACY, namespaced: true });
    await eventually('the write in the core\'s cache', async () =>
      cache.getByName(h.namespace, 'old-infra')?.metadata?.resourceVersion === ready.metadata?.resourceVersion,
    );
    h.service.context.controllers.enqueue('cluster', `${h.namespace}/old`);
    const cluster = await eventually('Provisioned from status.ready', async () => {
      const c = await getCluster('old');
      return c.status?.phase === 'Provisioned' && c;
    });
    expect(cluster.spec.controlPlaneEndpoint).toEqual({ host: '10.0.0.9', port: 6443 });
    expect(cluster.status?.failureDomains).toEqual([{ name: 'fd-y' }, { name: 'fd-z', controlPlane: true }]);
    expect(condition(cluster, 'InfrastructureReady')).toMatchObject({ status: 'True', reason: 'Ready' });
  });

  it('says what is wrong with missing and unusable references, then converges once they are fixed', async () => {
    await createCluster('missing', { infrastructureRef: h.ref(INFRA, 'missing-infra') });
    const missing = await eventually('ObjectDoesNotExist', async () => {
      const c = await getCluster('missing');
      return condition(c, 'InfrastructureReady')?.reason === 'ObjectDoesNotExist' && c;
    });
    expect(condition(missing, 'InfrastructureReady')).toMatchObject({
      status: 'Unknown',
      message: `${INFRA} does not exist`,
    });

    await createCluster('unusable', {
      infrastructureRef: { apiGroup: 'infrastructure.generic.capstan.dev', kind: 'NoSuchCluster', name: 'x' },
    });
    const unusable = await eventually('InvalidReference', async () => {
      const c = await getCluster('unusable');
      return condition(c, 'InfrastructureReady')?.reason === 'InvalidReference' && c;
    });
    expect(condition(unusable, 'InfrastructureReady')?.message).toBe(
      'no CustomResourceDefinition serves kind NoSuchCluster in API group infrastructure.generic.capstan.dev',
    );

    await h.create(INFRA, 'missing-infra', { controlPlaneEndpoint: { host: '10.0.0.2', port: 6443 } });
    await h.setStatus(INFRA, 'missing-infra', { initialization: { provisioned: true } });
    await h.handoff('infrastructure-cluster.provisioned', INFRA, 'missing-infra', { clusterName: 'missing' });
    await eventually(
      'Provisioned once the object exists',
      async () => (await getCluster('missing')).status?.phase === 'Provisioned',
    );
  });

  it('leaves a paused Cluster alone except for the Paused condition, and resumes when unpaused', async () => {
    await h.create(INFRA, 'paused-infra');
    await createCluster('paused', { paused: true, infrastructureRef: h.ref(INFRA, 'paused-infra') });
    const paused = await eventually('Paused', async () => {
      const c = await getCluster('paused');
      return condition(c, 'Paused')?.status === 'True' && c;
    });
    expect(condition(paused, 'Paused')).toMatchObject({
      reason: 'Paused',
      message: 'Cluster spec.paused is set to true',
    });
    expect(paused.metadata?.finalizers ?? []).not.toContain(FINALIZERS.cluster);
    expect(paused.status?.phase).toBeUndefined();
    expect(
      (await h.kind(INFRA).get({ namespace: h.namespace, name: 'paused-infra' })).metadata?.ownerReferences,
    ).toBeUndefined();

    await h.clusters.mergePatch({ namespace: h.namespace, name: 'paused' }, { spec: { paused: false } });
    const resumed = await eventually('resumed', async () => {
      const c = await getCluster('paused');
      return c.status?.phase === 'Provisioning' && c;
    });
    expect(condition(resumed, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
    expect(resumed.metadata?.finalizers).toContain(FINALIZERS.cluster);
  });

  it('puts the finalizer, owner references and labels back after someone removed them', async () => {
    const before = await getCluster('thin');
    await h
      .kind(INFRA)
      .mergePatch(
        { namespace: h.namespace, name: 'thin-infra' },
        { metadata: { ownerReferences: null, labels: { [LABELS.clusterName]: null } } },
      );
    await h.clusters.mergePatch({ namespace: h.namespace, name: 'thin' }, { metadata: { finalizers: null } });
    await eventually('finalizer and ownership back', async () => {
      const c = await getCluster('thin');
      const infra = await h.kind(INFRA).get({ namespace: h.namespace, name: 'thin-infra' });
      return c.metadata?.finalizers?.includes(FINALIZERS.cluster) && ownedByCluster(infra, before);
    });
  });

  it('deletes MachineDeployments, MachineSets, worker Machines, then the control plane, then the infrastructure', async () => {
    const name = 'del';
    const ns = h.namespace;
    await h.create(
      INFRA,
      'del-infra',
      { controlPlaneEndpoint: { host: '10.0.0.3', port: 6443 } },
      { finalizers: [HOLD] },
    );
    await h.setStatus(INFRA, 'del-infra', { initialization: { provisioned: true } });
    await h.create(CP, 'del-cp', {}, { finalizers: [HOLD] });
    await createCluster(name, {
      infrastructureRef: h.ref(INFRA, 'del-infra'),
      controlPlaneRef: h.ref(CP, 'del-cp'),
    });
    await h.create('GenericInfrastructureMachineTemplate', 'del-tpl', { template: { spec: {} } });
    await h.create('GenericBootstrapConfigTemplate', 'del-boot-tpl', { template: { spec: {} } });
    // Without replicas, MachineDeployment and MachineSet hold no Machines: the order of the kinds is what is tested.
    const workerTemplate = (pool: string) => ({
      clusterName: name,
      replicas: 0,
      selector: { matchLabels: { pool } },
      template: {
        metadata: { labels: { pool } },
        spec: {
          clusterName: name,
          bootstrap: { configRef: h.ref('GenericBootstrapConfigTemplate', 'del-boot-tpl') },
          infrastructureRef: h.ref('GenericInfrastructureMachineTemplate', 'del-tpl'),
        },
      },
    });
    const deployments = h.client.resource<Unstructured>(RESOURCES.MachineDeployment);
    const sets = h.client.resource<Unstructured>(RESOURCES.MachineSet);
    await deployments.create({
      metadata: { name: 'del-md', namespace: ns, finalizers: [HOLD] },
      spec: workerTemplate('md'),
    } as Unstructured);
    await sets.create({
      metadata: { name: 'del-ms', namespace: ns, finalizers: [HOLD] },
      spec: workerTemplate('ms'),
    } as Unstructured);
    await h.create('GenericInfrastructureMachine', 'del-worker-infra');
    await h.machines.create({
      metadata: { name: 'del-worker', namespace: ns, finalizers: [HOLD] },
      spec: {
        clusterName: name,
        bootstrap: { dataSecretName: 'del-worker-data' },
        infrastructureRef: h.ref('GenericInfrastructureMachine', 'del-worker-infra'),
      },
    } as Machine);
    await eventually('Provisioned', async () => (await getCluster(name)).status?.phase === 'Provisioned');

    await h.clusters.delete({ namespace: ns, name });
    const step = async (reason: string, fragment: string) =>
      eventually(`Deleting ${reason} (${fragment})`, async () => {
        const c = await getCluster(name);
        const deleting = condition(c, 'Deleting');
        return (
          deleting?.status === 'True' &&
          deleting.reason === reason &&
          deleting.message.includes(fragment) &&
          c
        );
      });
    const state = async (get: () => Promise<Unstructured>) =>
      get().then(
        (o) => (o.metadata?.deletionTimestamp ? 'deleting' : 'present'),
        () => 'gone',
      );
    const release = (client: { mergePatch: typeof deployments.mergePatch }, object: string) =>
      client.mergePatch({ namespace: ns, name: object }, { metadata: { finalizers: null } });
    const md = () => deployments.get({ namespace: ns, name: 'del-md' });
    const ms = () => sets.get({ namespace: ns, name: 'del-ms' });
    const worker = () =>
      h.machines.get({ namespace: ns, name: 'del-worker' }) as unknown as Promise<Unstructured>;
    const cp = () => h.kind(CP).get({ namespace: ns, name: 'del-cp' });
    const infra = () => h.kind(INFRA).get({ namespace: ns, name: 'del-infra' });
    const states = async () => Promise.all([md, ms, worker, cp, infra].map(state));

    const first = await step('WaitingForWorkersDeletion', 'MachineDeployments del-md');
    expect(first.status?.phase).toBe('Deleting');
    expect(await states()).toEqual(['deleting', 'present', 'present', 'present', 'present']);

    await release(deployments, 'del-md');
    await step('WaitingForWorkersDeletion', 'MachineSets del-ms');
    expect(await states()).toEqual(['gone', 'deleting', 'present', 'present', 'present']);

    await release(sets, 'del-ms');
    await step('WaitingForWorkersDeletion', 'Worker Machines del-worker');
    expect(await states()).toEqual(['gone', 'gone', 'deleting', 'present', 'present']);

    await release(h.machines as unknown as typeof deployments, 'del-worker');
    await step('WaitingForControlPlaneDeletion', 'del-cp');
    expect(await states()).toEqual(['gone', 'gone', 'gone', 'deleting', 'present']);

    await release(h.kind(CP), 'del-cp');
    await step('WaitingForInfrastructureDeletion', 'del-infra');
    expect(await states()).toEqual(['gone', 'gone', 'gone', 'gone', 'deleting']);

    await release(h.kind(INFRA), 'del-infra');
    await eventually('the Cluster gone', async () =>
      getCluster(name).then(
        () => false,
        () => true,
      ),
    );
    await eventually(
      'deleting and deleted events',
      () => lifecycle.named('cluster.deleting', name) === 1 && lifecycle.named('cluster.deleted', name) === 1,
    );
  });
});
