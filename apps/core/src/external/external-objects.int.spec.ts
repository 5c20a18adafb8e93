import pino from 'pino';
import { KubeClient, Manager, type ResourceType } from '@capstan/kube';
import {
  createTestNamespace,
  eventually,
  genericProviderKind,
  installGenericProviderCrds,
  type TestNamespace,
} from '@capstan/testing';
import { CountingClient } from '../testing/counting-client.js';
import { ExternalObjects, type ProviderObject } from './external-objects.js';
import { ProviderHints } from './provider-hints.js';

const KIND = genericProviderKind('GenericInfrastructureMachine');
const RESOURCE: ResourceType = { group: KIND.group, version: KIND.version, plural: KIND.plural, kind: KIND.kind, namespaced: true };

describe('ExternalObjects: provider objects read through the cache', () => {
  let ns: TestNamespace;
  let client: CountingClient;
  let writer: KubeClient;
  let manager: Manager;
  let external: ExternalObjects;
  let hints: ProviderHints;

  beforeAll(async () => {
    ns = await createTestNamespace('core-external');
    await installGenericProviderCrds(ns.kc);
    client = new CountingClient(ns.kc);
    writer = new KubeClient(ns.kc);
    manager = new Manager({ client, namespace: ns.name, logger: pino({ level: 'silent' }) });
    await manager.start();
    hints = new ProviderHints();
    external = new ExternalObjects({ client, manager, logger: pino({ level: 'silent' }), watch: false, hints });
  });
  afterAll(async () => {
    await manager?.stop();
    await client?.close();
    await writer?.close();
    await ns?.delete();
  });

  const ref = (name: string) => ({ apiGroup: KIND.group, kind: KIND.kind, name });
  const create = (name: string) =>
    writer.resource<ProviderObject>(RESOURCE).create({ metadata: { name, namespace: ns.name }, spec: {} } as ProviderObject);
  const read = async (name: string) => {
    const found = await external.read(ns.name, ref(name));
    if (found.state !== 'found') throw new Error(`${name}: ${found.state}`);
    return found.object;
  };

  it('serves repeated reads from its informer once synced, not with a GET each', async () => {
    await create('cached');
    await read('cached'); // a GET: it starts the kind's informer, not synced yet
    const informer = manager.informer<ProviderObject>(RESOURCE);
    await eventually(() => informer.hasSynced() && informer.getByName(ns.name, 'cached'));
    const before = client.getsOf(`/${KIND.plural}/cached`);
    for (let i = 0; i < 10; i++) await read('cached');
    expect(client.getsOf(`/${KIND.plural}/cached`)).toBe(before);
  });

  it('reads an object the cache does not hold yet from the API server', async () => {
    await read('cached'); // the informer is running
    const created = await create('fresh');
    const found = await read('fresh');
    expect(found.metadata?.uid).toBe(created.metadata?.uid);
  });

  it('never serves an older version than a hand-off event named, though the informer is behind', async () => {
    await create('hinted');
    await eventually(() => manager.informer<ProviderObject>(RESOURCE).getByName(ns.name, 'hinted'));
    for (let i = 0; i < 5; i++) {
      const written = await writer
        .resource<ProviderObject>(RESOURCE)
        .mergePatch({ namespace: ns.name, name: 'hinted' }, { spec: { round: i } });
      // The provider's event arrives at once, before the informer may have the write.
      hints.record({ apiGroup: KIND.group, kind: KIND.kind, namespace: ns.name, name: 'hinted' }, written.metadata?.resourceVersion);
      const found = await read('hinted');
      expect((found.spec as { round?: number }).round).toBe(i);
    }
    await eventually(() => hints.size === 0 || undefined, { message: 'every version settled' });
  });

  it('reads its own ownership write back, not the cached object from before it', async () => {
    await create('owned');
    await eventually(() => manager.informer<ProviderObject>(RESOURCE).getByName(ns.name, 'owned'));
    const found = await external.read(ns.name, ref('owned'));
    if (found.state !== 'found') throw new Error(found.state);
    const owner = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', metadata: { name: 'm', uid: 'uid-m' } };
    await external.ensureOwnership(found, { owner, controller: true, clusterName: 'c' });
    const after = await read('owned');
    expect(after.metadata?.ownerReferences?.map((o) => o.uid)).toEqual(['uid-m']);
    expect(after.metadata?.labels?.['cluster.x-k8s.io/cluster-name']).toBe('c');
  });
});
