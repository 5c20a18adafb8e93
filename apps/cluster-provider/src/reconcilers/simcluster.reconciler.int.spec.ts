import { FINALIZERS, LABELS, RESOURCES, type Cluster, type SimCluster, type SimMachine } from '@capstan/api';
import { OWED_EVENTS_ANNOTATION } from '@capstan/provider-kit';
import { installCapstanDefinitions, testKubeConfig } from '@capstan/testing';
import { SimClusterTestServer } from '../testing/simcluster-harness.js';

// The SimCluster reconciler against the real API server and JetStream, its caches caught up before each
// reconcile: what it writes, when, and which hand-off events it announces, across a provider restart too.
// Each test has a namespace and an event stream of its own.

const endpoint = { host: '127.0.0.1', port: 31555 };
const condition = (obj: SimCluster | undefined, type: string) =>
  obj?.status?.conditions?.find((c) => c.type === type);

describe('SimCluster reconciler', () => {
  let server: SimClusterTestServer;

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
  });
  beforeEach(async () => {
    server = await SimClusterTestServer.start();
  });
  afterEach(async () => {
    await server?.close();
  });

  const ref = (name: string) => ({ namespace: server.namespace, name });

  async function cluster(name: string, spec: Cluster['spec'] = {}): Promise<void> {
    await server.clusterResource().create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name, namespace: server.namespace },
      spec,
    });
  }

  async function simCluster(name: string, spec: SimCluster['spec'] = {}, labelled = true): Promise<void> {
    await server.simClusterResource().create({
      apiVersion: RESOURCES.SimCluster.apiVersion,
      kind: 'SimCluster',
      metadata: {
        name,
        namespace: server.namespace,
        ...(labelled && { labels: { [LABELS.clusterName]: name } }),
      },
      spec,
    });
  }

  /** Reconciles once the provider's caches show what the server has. */
  async function reconcileCaughtUp(provider: ReturnType<SimClusterTestServer['provider']>, name: string) {
    await server.caughtUp();
    return provider.reconcile(name);
  }

  it('provisions in one reconcile, announces it once, and writes nothing once converged', async () => {
    await cluster('alpha');
    await simCluster('alpha', { controlPlaneEndpoint: endpoint });
    const provider = server.provider();

    await reconcileCaughtUp(provider, 'alpha');
    const provisioned = (await server.getSimCluster('alpha'))!;
    expect(provisioned.metadata?.finalizers).toEqual([FINALIZERS.simCluster]);
    expect(provisioned.status).toMatchObject({
      initialization: { provisioned: true },
      observedGeneration: 1,
    });
    expect(condition(provisioned, 'Ready')).toMatchObject({ status: 'True', reason: 'Provisioned' });
    expect(condition(provisioned, 'Paused')).toMatchObject({ status: 'False' });
    expect(provider.published.map((e) => e.name)).toEqual(['infrastructure-cluster.provisioned']);
    expect(provider.published[0]!.data.resourceVersion).toBe(provisioned.metadata?.resourceVersion);

    const writes = server.simClusterWrites;
    await expect(reconcileCaughtUp(provider, 'alpha')).resolves.toBeUndefined();
    expect(server.simClusterWrites).toBe(writes);
    expect(provider.published).toHaveLength(1);
    expect(await server.storedEvents()).toBe(1);
  });

  it('neither repeats nor loses an announcement across a restart', async () => {
    await cluster('alpha');
    await simCluster('alpha', { controlPlaneEndpoint: endpoint });
    // The bus is down when the SimCluster is provisioned: the event is recorded on the object.
    const down = server.provider({ busDown: true });
    await expect(reconcileCaughtUp(down, 'alpha')).resolves.toEqual({ requeue: true });
    expect((await server.getSimCluster('alpha'))!.metadata?.annotations?.[OWED_EVENTS_ANNOTATION]).toContain(
      'infrastructure-cluster.provisioned',
    );
    expect(await server.storedEvents()).toBe(0);

    const restarted = server.provider();
    await reconcileCaughtUp(restarted, 'alpha');
    expect(restarted.published.map((e) => e.name)).toEqual(['infrastructure-cluster.provisioned']);
    expect(
      (await server.getSimCluster('alpha'))!.metadata?.annotations?.[OWED_EVENTS_ANNOTATION],
    ).toBeUndefined();

    const again = server.provider();
    await reconcileCaughtUp(again, 'alpha');
    expect(again.published).toEqual([]);
    expect(await server.storedEvents()).toBe(1);
  });

  it('announces again for a new generation, with its failure domains', async () => {
    await cluster('alpha');
    await simCluster('alpha', { controlPlaneEndpoint: endpoint });
    const provider = server.provider();
    await reconcileCaughtUp(provider, 'alpha');
    // A new spec: the server makes it generation 2.
    const changed = await server
      .simClusterResource()
      .mergePatch(ref('alpha'), { spec: { failureDomains: [{ name: 'fd-a', controlPlane: true }] } });
    expect(changed.metadata?.generation).toBe(2);
    await reconcileCaughtUp(provider, 'alpha');
    expect(provider.published.map((e) => e.name)).toEqual([
      'infrastructure-cluster.provisioned',
      'infrastructure-cluster.provisioned',
    ]);
    expect(provider.published[1]!.data).toMatchObject({ generation: 2, failureDomains: [{ name: 'fd-a' }] });
  });

  it('allocates an endpoint and records it with the status', async () => {
    await cluster('beta');
    await simCluster('beta');
    const provider = server.provider();
    await reconcileCaughtUp(provider, 'beta');
    const written = (await server.getSimCluster('beta'))!;
    expect(written.spec?.controlPlaneEndpoint?.port).toBeGreaterThanOrEqual(31000);
    expect(written.spec?.controlPlaneEndpoint?.port).toBeLessThanOrEqual(31999);
    expect(written.status?.initialization?.provisioned).toBe(true);
    expect(provider.published[0]!.data).toMatchObject({
      controlPlaneEndpoint: written.spec!.controlPlaneEndpoint,
    });
  });

  it('only reports Paused while its Cluster is paused', async () => {
    await cluster('paused', { paused: true });
    await simCluster('paused');
    const provider = server.provider();
    await reconcileCaughtUp(provider, 'paused');
    const paused = (await server.getSimCluster('paused'))!;
    expect(condition(paused, 'Paused')).toMatchObject({ status: 'True', reason: 'Paused' });
    expect(paused.status?.conditions).toHaveLength(1);
    expect(paused.metadata?.finalizers).toBeUndefined();
    expect(paused.spec?.controlPlaneEndpoint).toBeUndefined();
    expect(provider.published).toEqual([]);
  });

  it('waits for a Cluster to reference it', async () => {
    await simCluster('orphan', {}, false);
    await reconcileCaughtUp(server.provider(), 'orphan');
    expect(condition(await server.getSimCluster('orphan'), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WaitingForCluster',
    });
  });

  it("keeps its finalizer until the cluster's SimMachines are gone, then announces the deletion", async () => {
    await cluster('gamma');
    await simCluster('gamma', { controlPlaneEndpoint: endpoint });
    await server.simMachineResource().create({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: { name: 'gamma-m', namespace: server.namespace, labels: { [LABELS.clusterName]: 'gamma' } },
      spec: {},
    } as SimMachine);
    const provider = server.provider();
    await reconcileCaughtUp(provider, 'gamma');
    // Deleting it: the finalizer keeps it, marked.
    await server.simClusterResource().delete(ref('gamma'));
    expect((await server.getSimCluster('gamma'))?.metadata?.deletionTimestamp).toBeDefined();

    await expect(reconcileCaughtUp(provider, 'gamma')).resolves.toEqual({ requeueAfter: 5_000 });
    expect(condition(await server.getSimCluster('gamma'), 'Ready')).toMatchObject({
      reason: 'WaitingForMachinesDeletion',
    });

    await server.simMachineResource().delete(ref('gamma-m'));
    await reconcileCaughtUp(provider, 'gamma');
    expect(await server.getSimCluster('gamma')).toBeUndefined();
    expect(provider.published.map((e) => e.name)).toEqual([
      'infrastructure-cluster.provisioned',
      'infrastructure-cluster.deleted',
    ]);
  });
});
