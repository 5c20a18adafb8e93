import { jest } from '@jest/globals';
import pino from 'pino';
import { RESOURCES, type SimCluster } from '@capstan/api';
import {
  type KubeClient,
  OwnWrites,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { EventOutbox, OWED_EVENTS_ANNOTATION, type OwedEvent } from './event-outbox.js';
import {
  objectReconciler,
  RECONCILE_SUCCEEDED_CONDITION,
  type ObjectReconcilerDefinition,
} from './object-reconciler.js';

const FINALIZER = 'kit.capstan.dev/test';
const log = pino({ level: 'silent' });

function context(key: string): ReconcileContext {
  const [namespace, name] = key.split('/') as [string, string];
  return { key, namespace, name, reconcileId: 'test', log, signal: new AbortController().signal };
}

const conditionOf = (obj: SimCluster | undefined, type: string) =>
  obj?.status?.conditions?.find((c) => c.type === type);

const provisionedEvent = (obj: SimCluster): OwedEvent => ({
  name: 'infrastructure-cluster.provisioned',
  data: {
    object: {
      apiGroup: RESOURCES.SimCluster.group,
      kind: 'SimCluster',
      namespace: obj.metadata!.namespace!,
      name: obj.metadata!.name!,
      uid: obj.metadata!.uid!,
    },
    generation: obj.metadata?.generation ?? 0,
    resourceVersion: obj.metadata!.resourceVersion!,
    clusterName: 'c1',
    controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
  },
});

// On the in-memory API server: the envelope's orchestration needs resourceVersions, conflicts, the status
// subresource, finalizers and patches, which the seam holds to the real API server's contract (kube-api-contract.ts).
describe('objectReconciler', () => {
  const ns = { name: 'kit-rec' };
  let client: KubeClient;
  const resources = () => client.resource<SimCluster>(RESOURCES.SimCluster);
  const get = (name: string) =>
    resources()
      .get({ namespace: ns.name, name })
      .catch(() => undefined);

  beforeAll(() => {
    client = new InMemoryApiServer([RESOURCES.SimCluster]).client({ fieldManager: 'kit-test' });
  });
  afterAll(() => client.close());

  /** Runs the reconciler once on the object as the API server has it now (what a synced cache would hold). */
  async function reconcileOnce(
    name: string,
    definition: Omit<ObjectReconcilerDefinition<SimCluster>, 'cache' | 'resources' | 'conditions'> & {
      conditions?: ObjectReconcilerDefinition<SimCluster>['conditions'];
    },
  ): Promise<ReconcileResult | undefined | void> {
    const current = await get(name);
    const reconciler: Reconciler = objectReconciler<SimCluster>({
      conditions: { owned: ['Ready'] },
      ...definition,
      cache: { get: () => current },
      resources: resources(),
    });
    return reconciler(`${ns.name}/${name}`, context(`${ns.name}/${name}`));
  }

  const create = (name: string) =>
    resources().create({ metadata: { name, namespace: ns.name }, spec: {} } as SimCluster);

  it('adds the finalizer and Paused=False, writes what the reconcile computed, and publishes what it announced', async () => {
    await create('normal');
    const published: string[] = [];
    const outbox = new EventOutbox({
      publisher: { publish: (name) => Promise.resolve(published.push(name)) as never },
      logger: log,
    });
    await reconcileOnce('normal', {
      finalizer: FINALIZER,
      outbox,
      reconcileNormal: (scope) => {
        scope.obj.status = { ...scope.obj.status, initialization: { provisioned: true } };
        scope.announce(provisionedEvent(scope.obj));
        return Promise.resolve();
      },
    });
    const written = await get('normal');
    expect(written?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(written?.status?.initialization?.provisioned).toBe(true);
    expect(conditionOf(written, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
    expect(conditionOf(written, RECONCILE_SUCCEEDED_CONDITION)).toBeUndefined();
    expect(published).toEqual(['infrastructure-cluster.provisioned']);

    // A converged object is not written again.
    const requests = jest.spyOn(client, 'request');
    await reconcileOnce('normal', { finalizer: FINALIZER, outbox, reconcileNormal: () => Promise.resolve() });
    expect(requests.mock.calls.filter(([req]) => req.method !== 'GET')).toEqual([]);
    requests.mockRestore();
  });

  it('writes nothing only to say Paused=False: the report goes with the first other change', async () => {
    const created = await create('waiting');
    // A reconcile that waits (for its owner, its Cluster): nothing to say yet, no write.
    const requests = jest.spyOn(client, 'request');
    await reconcileOnce('waiting', { reconcileNormal: () => Promise.resolve() });
    expect(requests.mock.calls.filter(([req]) => req.method !== 'GET')).toEqual([]);
    requests.mockRestore();
    expect((await get('waiting'))?.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);

    await reconcileOnce('waiting', {
      reconcileNormal: (scope) => {
        scope.obj.status = { ...scope.obj.status, initialization: { provisioned: true } };
        return Promise.resolve();
      },
    });
    const written = await get('waiting');
    expect(written?.status?.initialization?.provisioned).toBe(true);
    expect(conditionOf(written, 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
  });

  it('leaves a paused object alone but for Paused=True', async () => {
    const created = await create('paused');
    await resources().mergePatch(
      { namespace: ns.name, name: 'paused' },
      { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } },
    );
    const reconcileNormal = jest.fn(() => Promise.resolve());
    await reconcileOnce('paused', { finalizer: FINALIZER, reconcileNormal });
    const written = await get('paused');
    expect(reconcileNormal).not.toHaveBeenCalled();
    expect(written?.metadata?.finalizers).toBeUndefined();
    expect(conditionOf(written, 'Paused')).toMatchObject({ status: 'True', reason: 'Paused' });
    expect(created.metadata?.name).toBe('paused');
  });

  it('still writes what a failing reconcile computed, with ReconcileSucceeded=False naming the failure and no secret', async () => {
    await create('failing');
    const secret = 'c2VjcmV0LWJvb3RzdHJhcC1kYXRhLXRoYXQtbXVzdC1uZXZlci1sZWFrLW91dA==';
    const failing = reconcileOnce('failing', {
      reconcileNormal: (scope) => {
        scope.obj.status = { ...scope.obj.status, failureDomains: [{ name: 'zone-a', controlPlane: true }] };
        return Promise.reject(new Error(`rendering the bootstrap data ${secret} failed`));
      },
    });
    await expect(failing).rejects.toThrow(/rendering/);
    const written = await get('failing');
    expect(written?.status?.failureDomains).toEqual([{ name: 'zone-a', controlPlane: true }]);
    const failed = conditionOf(written, RECONCILE_SUCCEEDED_CONDITION);
    expect(failed).toMatchObject({ status: 'False', reason: 'ReconcileError' });
    expect(failed?.message).toContain('rendering the bootstrap data');
    expect(failed?.message).not.toContain(secret);

    await reconcileOnce('failing', { reconcileNormal: () => Promise.resolve() });
    expect(conditionOf(await get('failing'), RECONCILE_SUCCEEDED_CONDITION)).toMatchObject({
      status: 'True',
    });
  });

  it('starts over shortly when the object changed meanwhile, and waits while the cache is behind its own write', async () => {
    const created = await create('raced');
    const ownWrites = new OwnWrites();
    const reconciler = objectReconciler<SimCluster>({
      cache: { get: () => created },
      resources: resources(),
      conditions: { owned: ['Ready'] },
      finalizer: FINALIZER,
      ownWrites,
      reconcileNormal: async () => {
        // Someone else writes the object between the cache read and this reconcile's write.
        await resources().mergePatch(
          { namespace: ns.name, name: 'raced' },
          { metadata: { labels: { a: 'b' } } },
        );
      },
    });
    const key = `${ns.name}/raced`;
    expect(await reconciler(key, context(key))).toEqual({ requeueAfter: expect.any(Number) });
    expect((await get('raced'))?.metadata?.finalizers).toBeUndefined();

    const fresh = (await get('raced'))!;
    const second = objectReconciler<SimCluster>({
      cache: { get: () => fresh },
      resources: resources(),
      conditions: { owned: ['Ready'] },
      finalizer: FINALIZER,
      ownWrites,
      reconcileNormal: () => Promise.resolve(),
    });
    expect(await second(key, context(key))).toBeUndefined();
    // The cache still shows the version read before that write: the next reconcile waits for it.
    expect(await second(key, context(key))).toEqual({ requeueAfter: expect.any(Number) });
  });

  it('records events it cannot publish on the object, and a new outbox (a restart) publishes them', async () => {
    await create('owed');
    let busUp = false;
    const published: string[] = [];
    const publisher = {
      publish: (name: string) =>
        busUp ? Promise.resolve(published.push(name)) : Promise.reject(new Error('no responders')),
    };
    await reconcileOnce('owed', {
      outbox: new EventOutbox({ publisher: publisher as never, logger: log }),
      reconcileNormal: (scope) => {
        scope.announce(provisionedEvent(scope.obj));
        return Promise.resolve();
      },
    });
    const recorded = await get('owed');
    expect(JSON.parse(recorded!.metadata!.annotations![OWED_EVENTS_ANNOTATION]!)).toHaveLength(1);
    expect(published).toEqual([]);

    busUp = true;
    await reconcileOnce('owed', {
      outbox: new EventOutbox({ publisher: publisher as never, logger: log }),
      reconcileNormal: () => Promise.resolve(),
    });
    expect(published).toEqual(['infrastructure-cluster.provisioned']);
    expect((await get('owed'))?.metadata?.annotations?.[OWED_EVENTS_ANNOTATION]).toBeUndefined();
  });

  it('comes back with backoff while events recorded by an earlier reconcile are still owed', async () => {
    await create('still-owed');
    const publisher = { publish: () => Promise.reject(new Error('no responders')) };
    const outbox = new EventOutbox({ publisher: publisher as never, logger: log });
    await reconcileOnce('still-owed', {
      outbox,
      reconcileNormal: (scope) => {
        scope.announce(provisionedEvent(scope.obj));
        return Promise.resolve();
      },
    });
    // Nothing new is announced, but the event recorded on the object still is not published.
    expect(await reconcileOnce('still-owed', { outbox, reconcileNormal: () => Promise.resolve() })).toEqual({
      requeue: true,
    });
  });

  it('runs the deletion branch and removes the finalizer once it is done', async () => {
    await create('deleted');
    await reconcileOnce('deleted', { finalizer: FINALIZER, reconcileNormal: () => Promise.resolve() });
    await resources().delete({ namespace: ns.name, name: 'deleted' });
    let steps = 0;
    const reconcileDelete = () => Promise.resolve(++steps < 2 ? { requeueAfter: 10 } : { done: true });
    expect(
      await reconcileOnce('deleted', {
        finalizer: FINALIZER,
        reconcileNormal: () => Promise.resolve(),
        reconcileDelete,
      }),
    ).toEqual({ requeueAfter: 10 });
    expect(await get('deleted')).toBeDefined();
    await reconcileOnce('deleted', {
      finalizer: FINALIZER,
      reconcileNormal: () => Promise.resolve(),
      reconcileDelete,
    });
    expect(await get('deleted')).toBeUndefined();
  });
});
