import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { FINALIZERS, LABELS, type Cluster } from '@capstan/api';
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

});
