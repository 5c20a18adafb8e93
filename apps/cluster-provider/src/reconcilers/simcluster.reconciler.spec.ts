import { FINALIZERS, LABELS, RESOURCES, type Cluster, type SimCluster, type SimMachine } from '@capstan/api';
import {
  OwnWrites,
  StaleObjectError,
  type Informer,
  type ReconcileContext,
  type ResourceClient,
} from '@capstan/kube';
import {
  EventOutbox,
  OWED_EVENTS_ANNOTATION,
  type OwedEvent,
  type ServiceContext,
} from '@capstan/provider-kit';
import type { KubernetesObject } from '@kubernetes/client-node';
import { pino } from 'pino';
import { SimClusterReconciler } from './simcluster.reconciler.js';

// The SimCluster reconciler against an in-memory API (merge patches, resourceVersion guards) whose cache is
// always current: what it writes, when, and which hand-off events it announces, across a provider restart too.

type Json = Record<string, unknown>;

function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/** Objects by `<kind>:<namespace>/<name>`. */
class FakeApi {
  readonly objects = new Map<string, KubernetesObject>();
  writes = 0;
  private version = 100;

  put(obj: KubernetesObject): void {
    const o = structuredClone(obj);
    o.metadata = { ...o.metadata, uid: `uid-${o.metadata!.name}`, resourceVersion: String(++this.version) };
    this.objects.set(`${o.kind}:${o.metadata.namespace}/${o.metadata.name}`, o);
  }

  get<T extends KubernetesObject>(key: string): T | undefined {
    const obj = this.objects.get(key);
    return obj && (structuredClone(obj) as T);
  }

  resource(): ResourceClient<SimCluster> {
    const client: Pick<ResourceClient<SimCluster>, 'type' | 'get' | 'mergePatch'> = {
      type: RESOURCES.SimCluster,
      get: async (ref) => this.get<SimCluster>(`SimCluster:${ref.namespace}/${ref.name}`)!,
      mergePatch: async (ref, body, options = {}) => {
        const key = `SimCluster:${ref.namespace}/${ref.name}`;
        const current = this.objects.get(key)!;
        const { status, ...main } = body as Json;
        const guard = (main['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion;
        if (guard !== undefined && guard !== current.metadata?.resourceVersion)
          throw new StaleObjectError(key);
        const patch = options.subresource === 'status' ? { status } : main;
        const next = applyMergePatch(current, patch) as SimCluster;
        next.metadata = { ...next.metadata, resourceVersion: String(++this.version) };
        const gone = next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0;
        if (gone) this.objects.delete(key);
        else this.objects.set(key, next);
        this.writes++;
        return structuredClone(next);
      },
    };
    // The reconciler kit only reads and merge-patches its kind.
    return client as ResourceClient<SimCluster>;
  }
}

/** A cache over the fake API: always current, as after the informer caught up. */
function cacheOf<T extends KubernetesObject>(api: FakeApi, kind: string): Informer<T> {
  const all = () =>
    [...api.objects.values()].filter((o) => o.kind === kind).map((o) => structuredClone(o) as T);
  const get = (key: string) => api.get<T>(`${kind}:${key}`);
  const cache: Pick<Informer<T>, 'get' | 'getByName' | 'list' | 'byIndex'> = {
    get,
    getByName: (namespace, name) => get(`${namespace}/${name}`),
    list: all,
    // The one index the reconciler reads: by cluster name.
    byIndex: (_index, value) =>
      all().filter((o) => `${o.metadata?.namespace}/${o.metadata?.labels?.[LABELS.clusterName]}` === value),
  };
  return cache as Informer<T>;
}

const logger = pino({ level: 'silent' });

function provider(api: FakeApi, publish: (event: OwedEvent) => void = () => undefined) {
  const published: OwedEvent[] = [];
  const context = {
    client: { resource: () => api.resource() },
    recorder: () => ({ event: async () => undefined }),
  } as unknown as ServiceContext;
  const reconciler = new SimClusterReconciler({
    context,
    options: { endpointHost: '127.0.0.1', portRange: { min: 31000, max: 31999 } } as never,
    simClusters: cacheOf<SimCluster>(api, 'SimCluster'),
    clusters: cacheOf<Cluster>(api, 'Cluster'),
    simMachines: cacheOf<SimMachine>(api, 'SimMachine'),
    outbox: new EventOutbox({
      publisher: {
        publish: async (name, data) => {
          publish({ name, data } as OwedEvent);
          published.push({ name, data } as OwedEvent);
          return { subject: name, msgId: name, stream: 'test', seq: published.length, duplicate: false };
        },
      },
      logger,
    }),
    ownWrites: new OwnWrites(),
  });
  const reconcile = (name: string) =>
    reconciler.reconcile(`ns/${name}`, {
      key: `ns/${name}`,
      namespace: 'ns',
      name,
      reconcileId: 'test',
      log: logger,
      signal: new AbortController().signal,
    } as ReconcileContext);
  return { reconcile, published };
}

function cluster(name: string, spec: Cluster['spec'] = {}): Cluster {
  return {
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name, namespace: 'ns' },
    spec,
  };
}

function simCluster(name: string, spec: SimCluster['spec'] = {}, generation = 1): SimCluster {
  return {
    apiVersion: RESOURCES.SimCluster.apiVersion,
    kind: 'SimCluster',
    metadata: { name, namespace: 'ns', generation, labels: { [LABELS.clusterName]: name } },
    spec,
  };
}

const endpoint = { host: '127.0.0.1', port: 31555 };
const condition = (obj: SimCluster | undefined, type: string) =>
  obj?.status?.conditions?.find((c) => c.type === type);

describe('SimCluster reconciler', () => {
  it('provisions in one reconcile, announces it once, and writes nothing once converged', async () => {
    const api = new FakeApi();
    api.put(cluster('alpha'));
    api.put(simCluster('alpha', { controlPlaneEndpoint: endpoint }));
    const { reconcile, published } = provider(api);

    await reconcile('alpha');
    const provisioned = api.get<SimCluster>('SimCluster:ns/alpha')!;
    expect(provisioned.metadata?.finalizers).toEqual([FINALIZERS.simCluster]);
    expect(provisioned.status).toMatchObject({
      initialization: { provisioned: true },
      observedGeneration: 1,
    });
    expect(condition(provisioned, 'Ready')).toMatchObject({ status: 'True', reason: 'Provisioned' });
    expect(condition(provisioned, 'Paused')).toMatchObject({ status: 'False' });
    expect(published.map((e) => e.name)).toEqual(['infrastructure-cluster.provisioned']);
    expect(published[0]!.data.resourceVersion).toBe(provisioned.metadata?.resourceVersion);

    const writes = api.writes;
    await reconcile('alpha');
    expect(api.writes).toBe(writes);
    expect(published).toHaveLength(1);
  });

  it('neither repeats nor loses an announcement across a restart', async () => {
    const api = new FakeApi();
    api.put(cluster('alpha'));
    api.put(simCluster('alpha', { controlPlaneEndpoint: endpoint }));
    // The bus is down when the SimCluster is provisioned: the event is recorded on the object.
    const down = provider(api, () => {
      throw new Error('bus down');
    });
    await expect(down.reconcile('alpha')).resolves.toEqual({ requeue: true });
    expect(
      api.get<SimCluster>('SimCluster:ns/alpha')!.metadata?.annotations?.[OWED_EVENTS_ANNOTATION],
    ).toContain('infrastructure-cluster.provisioned');

    const restarted = provider(api);
    await restarted.reconcile('alpha');
    expect(restarted.published.map((e) => e.name)).toEqual(['infrastructure-cluster.provisioned']);
    expect(
      api.get<SimCluster>('SimCluster:ns/alpha')!.metadata?.annotations?.[OWED_EVENTS_ANNOTATION],
    ).toBeUndefined();

    const again = provider(api);
    await again.reconcile('alpha');
    expect(again.published).toEqual([]);
  });

  it('announces again for a new generation, with its failure domains', async () => {
    const api = new FakeApi();
    api.put(cluster('alpha'));
    api.put(simCluster('alpha', { controlPlaneEndpoint: endpoint }));
    const { reconcile, published } = provider(api);
    await reconcile('alpha');
    const current = api.get<SimCluster>('SimCluster:ns/alpha')!;
    api.objects.set('SimCluster:ns/alpha', {
      ...current,
      metadata: { ...current.metadata, generation: 2 },
      spec: { ...current.spec, failureDomains: [{ name: 'fd-a', controlPlane: true }] },
    } as SimCluster);
    await reconcile('alpha');
    expect(published.map((e) => e.name)).toEqual([
      'infrastructure-cluster.provisioned',
      'infrastructure-cluster.provisioned',
    ]);
    expect(published[1]!.data).toMatchObject({ generation: 2, failureDomains: [{ name: 'fd-a' }] });
  });

  it('allocates an endpoint and records it with the status', async () => {
    const api = new FakeApi();
    api.put(cluster('beta'));
    api.put(simCluster('beta'));
    const { reconcile, published } = provider(api);
    await reconcile('beta');
    const written = api.get<SimCluster>('SimCluster:ns/beta')!;
    expect(written.spec?.controlPlaneEndpoint?.port).toBeGreaterThanOrEqual(31000);
    expect(written.status?.initialization?.provisioned).toBe(true);
    expect(published[0]!.data).toMatchObject({ controlPlaneEndpoint: written.spec!.controlPlaneEndpoint });
  });

  it('only reports Paused while its Cluster is paused', async () => {
    const api = new FakeApi();
    api.put(cluster('paused', { paused: true }));
    api.put(simCluster('paused'));
    const { reconcile, published } = provider(api);
    await reconcile('paused');
    const paused = api.get<SimCluster>('SimCluster:ns/paused')!;
    expect(condition(paused, 'Paused')).toMatchObject({ status: 'True', reason: 'Paused' });
    expect(paused.status?.conditions).toHaveLength(1);
    expect(paused.metadata?.finalizers).toBeUndefined();
    expect(paused.spec?.controlPlaneEndpoint).toBeUndefined();
    expect(published).toEqual([]);
  });

  it('waits for a Cluster to reference it', async () => {
    const api = new FakeApi();
    api.put({ ...simCluster('orphan'), metadata: { name: 'orphan', namespace: 'ns', generation: 1 } });
    const { reconcile } = provider(api);
    await reconcile('orphan');
    expect(condition(api.get('SimCluster:ns/orphan'), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WaitingForCluster',
    });
  });

  it("keeps its finalizer until the cluster's SimMachines are gone, then announces the deletion", async () => {
    const api = new FakeApi();
    api.put(cluster('gamma'));
    api.put(simCluster('gamma', { controlPlaneEndpoint: endpoint }));
    api.put({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: { name: 'gamma-m', namespace: 'ns', labels: { [LABELS.clusterName]: 'gamma' } },
    });
    const { reconcile, published } = provider(api);
    await reconcile('gamma');
    const current = api.get<SimCluster>('SimCluster:ns/gamma')!;
    api.objects.set('SimCluster:ns/gamma', {
      ...current,
      metadata: { ...current.metadata, deletionTimestamp: new Date() },
    });

    await expect(reconcile('gamma')).resolves.toEqual({ requeueAfter: 5_000 });
    expect(condition(api.get('SimCluster:ns/gamma'), 'Ready')).toMatchObject({
      reason: 'WaitingForMachinesDeletion',
    });

    api.objects.delete('SimMachine:ns/gamma-m');
    await reconcile('gamma');
    expect(api.get('SimCluster:ns/gamma')).toBeUndefined();
    expect(published.map((e) => e.name)).toEqual([
      'infrastructure-cluster.provisioned',
      'infrastructure-cluster.deleted',
    ]);
  });
});
