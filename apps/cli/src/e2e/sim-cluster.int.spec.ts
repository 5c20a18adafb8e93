import { CustomObjectsApi } from '@kubernetes/client-node';
import { eventually, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import { CAPI, createSimCluster, deleteClusterAndWait, readyNodes, workloadClient } from './cluster-fixture.js';

// End to end: the five services as processes, a sim cluster from the CLI's template, the workload API
// reached through the kubeconfig the control plane provider wrote.
describe('a 1 control plane + 2 worker sim cluster', () => {
  let capstan: CapstanUnderTest;

  beforeAll(async () => {
    capstan = await startCapstan('sim');
  });
  afterAll(async () => {
    await capstan?.stop();
  });

  it('becomes Available, its kubeconfig lists 3 Ready nodes, and deletion tears it down in order', async () => {
    await createSimCluster(capstan, 'one', { controlPlane: 1, workers: 2 });
    const workload = await workloadClient(capstan, 'one');
    const nodes = await eventually(async () => {
      const ready = await readyNodes(workload);
      return ready.length === 3 ? ready : undefined;
    });
    const providerIDs = nodes.map((n) => n.spec?.providerID).sort();
    const machines = (await capstan.namespace.kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      ...CAPI,
      namespace: capstan.namespace.name,
      plural: 'machines',
    })) as { items: { spec: { providerID?: string }; status?: { phase?: string; nodeRef?: { name: string } } }[] };
    expect(machines.items.map((m) => m.spec.providerID).sort()).toEqual(providerIDs);
    expect(machines.items.every((m) => m.status?.phase === 'Running' && m.status.nodeRef?.name)).toBe(true);

    await deleteClusterAndWait(capstan, 'one');
    const objects = capstan.namespace.kc.makeApiClient(CustomObjectsApi);
    for (const plural of ['machines', 'machinesets', 'machinedeployments']) {
      const left = (await objects.listNamespacedCustomObject({ ...CAPI, namespace: capstan.namespace.name, plural })) as { items: unknown[] };
      expect(left.items).toEqual([]);
    }
    // The workload API server went away with its last server machine.
    await eventually(async () => (await readyNodes(workload).then(() => false, () => true)) || undefined, {
      timeoutMs: 30_000,
      message: 'workload API server stopped',
    });
  });
});
