import {
  FINALIZERS,
  INFRASTRUCTURE_GROUP,
  LABELS,
  RESOURCES,
  type Cluster,
  type SimCluster,
  type SimMachine,
} from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { defaultServiceOptions, startService, type RunningService } from '@capstan/provider-kit';
import { lastPublishedEvent } from '@capstan/sim';
import {
  createTestNamespace,
  installCapstanDefinitions,
  testKubeConfig,
  testNatsUrl,
  type TestNamespace,
  eventually,
} from '@capstan/testing';
import { CLUSTER_PROVIDER, createClusterProviderService } from './service.js';

describe('cluster-provider: SimCluster', () => {
  let ns: TestNamespace;
  let service: RunningService;
  let client: KubeClient;
  const topology = uniqueEventTopology('simcl');
  const portRange = { min: 31000, max: 31999 };

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
    ns = await createTestNamespace('simcl');
    client = createKubeClient(testKubeConfig());
    service = await startService(createClusterProviderService({ endpointHost: '127.0.0.1', portRange }), {
      ...defaultServiceOptions(CLUSTER_PROVIDER, {}),
      kubeconfig: process.env['CAPSTAN_TEST_KUBECONFIG'],
      natsUrl: testNatsUrl(),
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace: ns.name,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await service?.stop();
    await client?.close();
    await ns?.delete();
  });

  const simClusters = () => client.resource<SimCluster>(RESOURCES.SimCluster);

  async function createCluster(name: string, spec: SimCluster['spec'] = {}): Promise<void> {
    await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name, namespace: ns.name },
      spec: { infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name } },
    });
    await simClusters().create({
      apiVersion: RESOURCES.SimCluster.apiVersion,
      kind: 'SimCluster',
      metadata: { name, namespace: ns.name, labels: { [LABELS.clusterName]: name } },
      spec,
    });
  }

  it('allocates a stable endpoint, reports the contract fields and publishes the hand-off', async () => {
    await createCluster('alpha', {
      failureDomains: [
        { name: 'fd-a', controlPlane: true },
        { name: 'fd-b', controlPlane: false, attributes: { rack: 'b' } },
      ],
    });
    const provisioned = await eventually(async () => {
      const sc = await simClusters().get({ namespace: ns.name, name: 'alpha' });
      return sc.status?.initialization?.provisioned ? sc : undefined;
    });
    const endpoint = provisioned.spec!.controlPlaneEndpoint!;
    expect(endpoint.host).toBe('127.0.0.1');
    expect(endpoint.port).toBeGreaterThanOrEqual(portRange.min);
    expect(endpoint.port).toBeLessThanOrEqual(portRange.max);
    expect(provisioned.metadata?.finalizers).toContain(FINALIZERS.simCluster);
    expect(provisioned.status?.failureDomains).toEqual([
      { name: 'fd-a', controlPlane: true },
      { name: 'fd-b', controlPlane: false, attributes: { rack: 'b' } },
    ]);
    expect(provisioned.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Provisioned',
    });
    expect(provisioned.status?.conditions?.find((c) => c.type === 'Paused')).toMatchObject({
      status: 'False',
    });

    const event = await eventually(() =>
      lastPublishedEvent(service.context.bus, topology, {
        kind: 'SimCluster',
        namespace: ns.name,
        name: 'alpha',
        event: 'provisioned',
      }),
    );
    expect(event.type).toBe('dev.capstan.handoff.infrastructure-cluster.provisioned');
    expect(event.data).toMatchObject({ clusterName: 'alpha', controlPlaneEndpoint: endpoint });

    // Converged: a resync writes nothing, and the endpoint stays.
    const version = provisioned.metadata?.resourceVersion;
    service.context.controllers.enqueue('simcluster', `${ns.name}/alpha`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const again = await simClusters().get({ namespace: ns.name, name: 'alpha' });
    expect(again.metadata?.resourceVersion).toBe(version);

    // Another cluster never gets the same port.
    await createCluster('beta');
    const beta = await eventually(
      async () => (await simClusters().get({ namespace: ns.name, name: 'beta' })).spec?.controlPlaneEndpoint,
    );
    expect(beta.port).not.toBe(endpoint.port);
  });

  it('waits for the SimClusters of a cluster without a Cluster and stays put while paused', async () => {
    await simClusters().create({
      apiVersion: RESOURCES.SimCluster.apiVersion,
      kind: 'SimCluster',
      metadata: { name: 'orphan', namespace: ns.name },
      spec: {},
    });
    const waiting = await eventually(async () => {
      const sc = await simClusters().get({ namespace: ns.name, name: 'orphan' });
      return sc.status?.conditions?.find((c) => c.type === 'Ready');
    });
    expect(waiting).toMatchObject({ status: 'False', reason: 'WaitingForCluster' });

    await client.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: 'paused', namespace: ns.name },
      spec: {
        paused: true,
        infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name: 'paused' },
      },
    });
    await simClusters().create({
      apiVersion: RESOURCES.SimCluster.apiVersion,
      kind: 'SimCluster',
      metadata: { name: 'paused', namespace: ns.name, labels: { [LABELS.clusterName]: 'paused' } },
      spec: {},
    });
    const paused = await eventually(async () => {
      const sc = await simClusters().get({ namespace: ns.name, name: 'paused' });
      return sc.status?.conditions?.find((c) => c.type === 'Paused' && c.status === 'True') ? sc : undefined;
    });
    expect(paused.spec?.controlPlaneEndpoint).toBeUndefined();
    await client
      .resource<Cluster>(RESOURCES.Cluster)
      .mergePatch({ namespace: ns.name, name: 'paused' }, { spec: { paused: false } });
    await eventually(
      async () =>
        (await simClusters().get({ namespace: ns.name, name: 'paused' })).status?.initialization?.provisioned,
    );
  });

  it("keeps its finalizer until the cluster's SimMachines are gone, then publishes the deletion", async () => {
    await createCluster('gamma');
    await eventually(
      async () =>
        (await simClusters().get({ namespace: ns.name, name: 'gamma' })).status?.initialization?.provisioned,
    );
    const machines = client.resource<SimMachine>(RESOURCES.SimMachine);
    await machines.create({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: { name: 'gamma-m', namespace: ns.name, labels: { [LABELS.clusterName]: 'gamma' } },
      spec: {},
    });
    await simClusters().delete({ namespace: ns.name, name: 'gamma' });
    const blocked = await eventually(async () => {
      const sc = await simClusters().get({ namespace: ns.name, name: 'gamma' });
      return sc.status?.conditions?.find(
        (c) => c.type === 'Ready' && c.reason === 'WaitingForMachinesDeletion',
      );
    });
    expect(blocked.status).toBe('False');

    await machines.delete({ namespace: ns.name, name: 'gamma-m' });
    await eventually(async () =>
      simClusters()
        .get({ namespace: ns.name, name: 'gamma' })
        .then(
          () => false,
          () => true,
        ),
    );
    const deleted = await eventually(() =>
      lastPublishedEvent(service.context.bus, topology, {
        kind: 'SimCluster',
        namespace: ns.name,
        name: 'gamma',
        event: 'deleted',
      }),
    );
    expect(deleted.data).toMatchObject({
      clusterName: 'gamma',
      object: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name: 'gamma' },
    });
  });
});
