import { type Cluster, type Machine } from '@capstan/api';
import { eventually, startCoreHarness, type CoreHarness } from '../../testing/core-test-harness.js';

// With watchExternalProviders the core watches the provider kinds its objects reference: third-party providers
// that publish no hand-off event are followed at once, not at the next resync (10 minutes here).
describe('watching external providers', () => {
  let h: CoreHarness;

  beforeAll(async () => {
    h = await startCoreHarness({
      prefix: 'core-watch',
      watchExternalProviders: true,
      syncPeriodSeconds: 600,
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('follows provider objects that change without any hand-off event', async () => {
    const providerID = `test://${h.namespace}/w-m`;
    await h.create('GenericInfrastructureCluster', 'w-infra');
    await h.create('GenericControlPlane', 'w-cp');
    await h.clusters.create({
      metadata: { name: 'w', namespace: h.namespace },
      spec: {
        infrastructureRef: h.ref('GenericInfrastructureCluster', 'w-infra'),
        controlPlaneRef: h.ref('GenericControlPlane', 'w-cp'),
      },
    } as Cluster);
    await h.create('GenericBootstrapConfig', 'w-m-boot');
    await h.create('GenericInfrastructureMachine', 'w-m-infra', { providerID });
    await h.machines.create({
      metadata: { name: 'w-m', namespace: h.namespace },
      spec: {
        clusterName: 'w',
        bootstrap: { configRef: h.ref('GenericBootstrapConfig', 'w-m-boot') },
        infrastructureRef: h.ref('GenericInfrastructureMachine', 'w-m-infra'),
      },
    } as Machine);
    // Written before the providers report, so that nothing but the watches can tell the core they did.
    await h.createKubeconfigSecret('w');
    await eventually(
      'the machine taken in',
      async () => (await h.machines.get({ namespace: h.namespace, name: 'w-m' })).status?.phase === 'Pending',
    );

    await h
      .kind('GenericInfrastructureCluster')
      .mergePatch(
        { namespace: h.namespace, name: 'w-infra' },
        { spec: { controlPlaneEndpoint: { host: '10.3.0.1', port: 6443 } } },
      );
    await h.setStatus('GenericInfrastructureCluster', 'w-infra', { initialization: { provisioned: true } });
    await h.setStatus('GenericControlPlane', 'w-cp', { initialization: { controlPlaneInitialized: true } });
    await eventually('the Cluster Provisioned and initialized', async () => {
      const c = await h.clusters.get({ namespace: h.namespace, name: 'w' });
      return c.status?.phase === 'Provisioned' && c.status.initialization?.controlPlaneInitialized === true;
    });

    await h.setStatus('GenericBootstrapConfig', 'w-m-boot', {
      initialization: { dataSecretCreated: true },
      dataSecretName: 'w-m-data',
    });
    await h.setStatus('GenericInfrastructureMachine', 'w-m-infra', { initialization: { provisioned: true } });
    await h.createNode(`${h.namespace}-w-m`, providerID);
    await eventually(
      'the Machine Running',
      async () => (await h.machines.get({ namespace: h.namespace, name: 'w-m' })).status?.phase === 'Running',
    );

    await h
      .kind('GenericInfrastructureMachine')
      .mergePatch({ namespace: h.namespace, name: 'w-m-infra' }, { metadata: { ownerReferences: null } });
    await eventually('the controller reference back', async () => {
      const infra = await h
        .kind('GenericInfrastructureMachine')
        .get({ namespace: h.namespace, name: 'w-m-infra' });
      return infra.metadata?.ownerReferences?.some((r) => r.kind === 'Machine' && r.controller === true);
    });
    expect((await h.machines.get({ namespace: h.namespace, name: 'w-m' })).status?.phase).toBe('Running');
  });
});
