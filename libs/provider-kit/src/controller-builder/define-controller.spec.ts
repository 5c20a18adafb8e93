import { RESOURCES, type Cluster, type Condition, type SimCluster } from '@capstan/api';
import { type KubeClient, type Wake } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { eventually } from '@capstan/testing';
import { inMemoryControllerHost, type InMemoryControllerHost } from '../testing/in-memory-controller-host.js';
import { RECONCILE_SUCCEEDED_CONDITION } from './condition-policy.js';
import { defineController, type ControllerDefinition, type ReconcilerParts } from './define-controller.js';
import { watch } from './watch.js';

const NS = 'builder';
const FINALIZER = 'builder.capstan.dev/test';

const conditionOf = (obj: SimCluster | undefined, type: string): Condition | undefined =>
  obj?.status?.conditions?.find((c) => c.type === type);

const readyTrue: Condition = {
  type: 'Ready',
  status: 'True',
  reason: 'Provisioned',
  message: '',
  lastTransitionTime: new Date().toISOString(),
};

/** Everything the controllers under test do is seen through the registry: which keys finished, and how. */
function finishedKeys(host: InMemoryControllerHost, controller: string): string[] {
  const keys: string[] = [];
  host.controllers.onReconciled((finished) => {
    if (finished.controller === controller) keys.push(finished.key);
  });
  return keys;
}

// On the in-memory API server: the builder's wiring (watches, predicates, own writes, batching, sources) needs a
// manager, informers and watch events, which the seam holds to the real API server's contract.
describe('defineController', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let other: KubeClient;
  let host: InMemoryControllerHost;

  beforeEach(() => {
    server = new InMemoryApiServer([RESOURCES.SimCluster, RESOURCES.Cluster]);
    client = server.client({ fieldManager: 'capstan-test-service' });
    other = server.client({ fieldManager: 'someone-else' });
    host = inMemoryControllerHost(client, { serviceOptions: { syncPeriodSeconds: 3600 } });
  });
  afterEach(async () => {
    await host.stop();
    await other.close();
    await client.close();
  });

  const simClusters = () => other.resource<SimCluster>(RESOURCES.SimCluster);
  const get = (name: string) => simClusters().get({ namespace: NS, name });
  const create = (name: string, labels: Record<string, string> = {}) =>
    simClusters().create({
      apiVersion: `${RESOURCES.SimCluster.group}/${RESOURCES.SimCluster.version}`,
      kind: 'SimCluster',
      metadata: { namespace: NS, name, labels },
      spec: {},
    } as SimCluster);

  /** A controller that marks its SimClusters Ready, with the given declaration's other parts. */
  function readyController(
    overrides: Partial<ControllerDefinition<SimCluster>> = {},
    parts: Partial<ReconcilerParts<SimCluster>> = {},
    wiring: Omit<ReturnType<ControllerDefinition<SimCluster>['wire']>, 'reconciler'> = {},
  ) {
    return defineController<SimCluster>({
      name: 'ready',
      for: RESOURCES.SimCluster,
      conditions: { owned: ['Ready'] },
      finalizer: FINALIZER,
      wire: () => ({
        reconciler: {
          reconcileNormal: (scope) => {
            const others = (scope.obj.status?.conditions ?? []).filter((c) => c.type !== 'Ready');
            scope.obj.status = { ...scope.obj.status, conditions: [...others, readyTrue] };
            return Promise.resolve();
          },
          ...parts,
        },
        ...wiring,
      }),
      ...overrides,
    });
  }

  it('reconciles through the kit: finalizer and owned condition written, its own write not reconciled again', async () => {
    const finished = finishedKeys(host, 'ready');
    readyController().register(host);
    await host.manager.start();
    await create('a');
    const written = await eventually(async () => {
      const obj = await get('a');
      return conditionOf(obj, 'Ready')?.status === 'True' ? obj : undefined;
    });
    expect(written.metadata?.finalizers).toEqual([FINALIZER]);
    // The create, and nothing for the write the controller made itself.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(finished).toEqual([`${NS}/a`]);
  });

  it('wakes on what others change beyond its own conditions, not on their writes of its conditions alone', async () => {
    const finished = finishedKeys(host, 'ready');
    readyController().register(host);
    await host.manager.start();
    await create('b');
    await eventually(async () => conditionOf(await get('b'), 'Ready')?.status === 'True');
    const settled = finished.length;

    // Someone else rewrites only the controller's own condition: nothing to reconcile.
    const current = await get('b');
    await simClusters().replaceStatus({
      ...current,
      status: { ...current.status, conditions: [{ ...readyTrue, message: 'rewritten' }] },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(finished.length).toBe(settled);

    // A label is more than that: reconciled.
    await simClusters().mergePatch(
      { namespace: NS, name: 'b' },
      { metadata: { labels: { touched: 'yes' } } },
    );
    await eventually(() => finished.length > settled);
  });

  it('reconciles an own write when reconcileOwnWrite asks for it', async () => {
    const finished = finishedKeys(host, 'ready');
    readyController({
      reconcileOwnWrite: (event) => event.object.metadata?.finalizers?.length === 1,
    }).register(host);
    await host.manager.start();
    await create('c');
    await eventually(() => finished.length >= 2);
  });

  it('maps typed watches to keys, skips what the fingerprint says is unchanged and batches a burst', async () => {
    const finished = finishedKeys(host, 'ready');
    const clusters = () => other.resource<Cluster>(RESOURCES.Cluster);
    readyController(
      {},
      {},
      {
        watches: [
          watch<Cluster>(RESOURCES.Cluster, {
            map: (cluster) => [`${cluster.metadata?.namespace}/${cluster.metadata?.name}`],
            fingerprint: (cluster) => cluster.spec?.paused,
            batchMs: 200,
          }),
        ],
      },
    ).register(host);
    await host.manager.start();
    await create('d');
    await eventually(async () => conditionOf(await get('d'), 'Ready')?.status === 'True');
    const cluster = await clusters().create({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { namespace: NS, name: 'd' },
      spec: {},
    } as Cluster);
    await eventually(() => finished.filter((k) => k === `${NS}/d`).length === 2);

    // Not a field the fingerprint reads: no reconcile.
    await clusters().mergePatch({ namespace: NS, name: 'd' }, { metadata: { labels: { team: 'a' } } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(finished.filter((k) => k === `${NS}/d`)).toHaveLength(2);

    // Three changes it reads within the batch: one reconcile.
    for (const paused of [true, false, true]) {
      await clusters().mergePatch({ namespace: NS, name: cluster.metadata!.name! }, { spec: { paused } });
    }
    await eventually(() => finished.filter((k) => k === `${NS}/d`).length === 3);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(finished.filter((k) => k === `${NS}/d`)).toHaveLength(3);
  });

  it('wakes from a declared source, and stops listening when the controller is disposed', async () => {
    const finished = finishedKeys(host, 'ready');
    let wake: Wake | undefined;
    const controller = readyController(
      {},
      {},
      {
        sources: [
          (w) => {
            wake = w;
            return () => (wake = undefined);
          },
        ],
      },
    ).register(host);
    await host.manager.start();
    await create('e');
    await eventually(() => finished.length === 1);
    wake!(`${NS}/e`);
    await eventually(() => finished.length === 2);
    controller.dispose();
    expect(wake).toBeUndefined();
  });

  it('lets a second controller on the kind keep to its own condition, and report its failures there', async () => {
    const failing = defineController<SimCluster>({
      name: 'topology',
      for: RESOURCES.SimCluster,
      conditions: { owned: ['TopologyReconciled'], secondary: { failureCondition: 'TopologyReconciled' } },
      wire: () => ({
        reconciler: { reconcileNormal: () => Promise.reject(new Error('the class names no such template')) },
      }),
    });
    readyController().register(host);
    failing.register(host);
    await host.manager.start();
    await create('f');
    const obj = await eventually(async () => {
      const current = await get('f');
      return conditionOf(current, 'TopologyReconciled') && conditionOf(current, 'Ready')
        ? current
        : undefined;
    });
    expect(conditionOf(obj, 'TopologyReconciled')).toMatchObject({
      status: 'False',
      reason: 'ReconcileError',
      message: expect.stringContaining('no such template'),
    });
    // The failure is not the kind's: ReconcileSucceeded stays unset, and the first controller's Ready stands.
    expect(conditionOf(obj, RECONCILE_SUCCEEDED_CONDITION)).toBeUndefined();
    expect(conditionOf(obj, 'Ready')?.status).toBe('True');
  });

  it('keeps the False a second controller writes on its failure condition itself (the kit undoes only its own)', async () => {
    let calls = 0;
    const refusing = defineController<SimCluster>({
      name: 'topology',
      for: RESOURCES.SimCluster,
      conditions: { owned: ['TopologyReconciled'], secondary: { failureCondition: 'TopologyReconciled' } },
      wire: () => ({
        reconciler: {
          reconcileNormal: async (scope) => {
            calls++;
            // The first reconcile fails as the kit reports it; the next ones refuse the input in a condition of their own.
            if (calls === 1) throw new Error('the API server answered 500');
            scope.obj.status = {
              ...scope.obj.status,
              conditions: [
                {
                  type: 'TopologyReconciled',
                  status: 'False',
                  reason: 'ClusterClassNotReconciled',
                  message: 'ClusterClass default/k3s is not reconciled yet',
                  lastTransitionTime: new Date().toISOString(),
                },
              ],
            };
            return { requeueAfter: 60_000 };
          },
        },
      }),
    });
    refusing.register(host);
    await host.manager.start();
    await create('g');
    const obj = await eventually(async () => {
      const current = await get('g');
      return conditionOf(current, 'TopologyReconciled')?.reason === 'ClusterClassNotReconciled'
        ? current
        : undefined;
    });
    expect(conditionOf(obj, 'TopologyReconciled')).toMatchObject({
      status: 'False',
      message: expect.stringContaining('not reconciled yet'),
    });
  });
});
