import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { genericProviderKind, installGenericProviderCrds } from './generic-providers.js';
import { createTestNamespace, type TestNamespace } from './namespace.js';

describe('generic provider CRDs', () => {
  let ns: TestNamespace;
  beforeAll(async () => {
    ns = await createTestNamespace('generic');
    await installGenericProviderCrds(ns.kc);
  });
  afterAll(() => ns.delete());

  it('accept any spec and let a test set status through the status subresource', async () => {
    const api = ns.kc.makeApiClient(CustomObjectsApi);
    const k = genericProviderKind('GenericInfrastructureMachine');
    const base = { group: k.group, version: k.version, namespace: ns.name, plural: k.plural };
    await api.createNamespacedCustomObject({
      ...base,
      body: { apiVersion: `${k.group}/${k.version}`, kind: k.kind, metadata: { name: 'm1' }, spec: { anything: { deep: 1 } } },
    });
    await api.patchNamespacedCustomObjectStatus(
      { ...base, name: 'm1', body: { status: { initialization: { provisioned: true }, addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const stored = (await api.getNamespacedCustomObject({ ...base, name: 'm1' })) as {
      spec: unknown;
      status: { initialization: { provisioned: boolean } };
    };
    expect(stored.spec).toEqual({ anything: { deep: 1 } });
    expect(stored.status.initialization.provisioned).toBe(true);
  });
});
