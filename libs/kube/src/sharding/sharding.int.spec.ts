import { type KubeConfig } from '@kubernetes/client-node';
import { sleep } from '../backoff.js';
import { LEASES_V1, type Lease } from '../leader-election.js';
import { Manager } from '../manager.js';
import { FreezableRelay, relayedKubeConfig } from '../testing/freezable-relay.js';
import { useWidgetNamespace } from '../testing/widget-namespace.js';
import { eventually, testLogger } from '../testing/eventually.js';
import { widget, WIDGET, type Widget } from '../testing/widget-crd.js';
import { rendezvousOwner } from './rendezvous.js';
import { SHARD_GROUP_LABEL } from './shard-membership.js';

// Active-active replicas sharded by a cluster label, against the real API server: every cluster is reconciled by
// one replica, joins and leaves move clusters, and two replicas are never inside a reconcile of one cluster at the
// same moment, also when a replica is cut off from the API server mid-reconcile.

const LEASE_MS = 3000;
const RENEW_MS = 2000;
const RETRY_MS = 250;
const CLUSTER_LABEL = 'example.capstan.dev/cluster';

describe('sharded managers', () => {
  const env = useWidgetNamespace('kube-shard');
  const managers: Manager[] = [];
  const relays: FreezableRelay[] = [];
  /** Replicas inside a reconcile right now, by cluster. */
  const active = new Map<string, Set<string>>();
  /** Who reconciled each widget, in order. */
  const reconciledBy = new Map<string, string[]>();
  const overlaps: string[] = [];
  let group = 0;

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.stop()));
    await Promise.all(relays.splice(0).map((r) => r.close()));
    active.clear();
    reconciledBy.clear();
    expect(overlaps).toEqual([]);
  });

  function replica(
    identity: string,
    shardGroup: string,
    options: {
      kubeConfig?: KubeConfig;
      requeueMs?: number;
      stubbornMs?: number;
      onStubborn?: () => void;
      joinGraceMs?: number;
    } = {},
  ): Manager {
    const m = new Manager({
      kubeConfig: options.kubeConfig ?? env.ns.kc,
      namespace: env.ns.name,
      logger: testLogger(),
      shutdownTimeoutMs: 2000,
      sharding: {
        namespace: env.ns.name,
        group: shardGroup,
        identity,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
        ...(options.joinGraceMs !== undefined && { joinGraceMs: options.joinGraceMs }),
        shardKeyOf: (obj) => `${obj.metadata?.namespace}/${obj.metadata?.labels?.[CLUSTER_LABEL] ?? obj.metadata?.name}`,
      },
    });
    m.addController({
      name: 'widgets',
      for: WIDGET,
      maxConcurrentReconciles: 4,
      reconcile: async (key, ctx) => {
        const obj = m.informer<Widget>(WIDGET).get(key);
        const cluster = `${env.ns.name}/${obj?.metadata?.labels?.[CLUSTER_LABEL]}`;
        const inside = active.get(cluster) ?? new Set<string>();
        active.set(cluster, inside);
        if ([...inside].some((other) => other !== identity)) overlaps.push(`${cluster}: ${[...inside].join(',')} + ${identity}`);
        inside.add(identity);
        try {
          if (options.stubbornMs && key.includes('stubborn')) {
            // A reconcile that ignores its signal (a call that takes none): the hand-over has to wait for it.
            options.onStubborn?.();
            await sleep(options.stubbornMs);
          } else await sleep(60, ctx.signal);
          if (ctx.signal.aborted) return;
          reconciledBy.set(key, [...(reconciledBy.get(key) ?? []), identity]);
        } finally {
          inside.delete(identity);
        }
        return options.requeueMs ? { requeueAfter: options.requeueMs } : undefined;
      },
    });
    managers.push(m);
    return m;
  }

  async function createWidgets(prefix: string, clusters: number, perCluster: number): Promise<string[]> {
    const keys: string[] = [];
    const api = env.client.resource<Widget>(WIDGET);
    for (let c = 0; c < clusters; c++) {
      for (let w = 0; w < perCluster; w++) {
        const name = `${prefix}-c${c}-w${w}`;
        await api.create(widget(env.ns.name, name, {}, { [CLUSTER_LABEL]: `${prefix}-c${c}` }));
        keys.push(`${env.ns.name}/${name}`);
      }
    }
    return keys;
  }

  /** A widget prefix whose `clusters` clusters (in this run's random namespace) give every member some. */
  const prefixSpreadOver = (base: string, clusters: number, members: string[]): string => {
    for (let attempt = 0; ; attempt++) {
      const prefix = `${base}${attempt}`;
      const owners = new Set(Array.from({ length: clusters }, (_, c) => rendezvousOwner(members, `${env.ns.name}/${prefix}-c${c}`)));
      if (owners.size === members.length) return prefix;
    }
  };

  const clusterOf = (key: string) => `${env.ns.name}/${key.split('/')[1]!.replace(/-w\d+$/, '')}`;

  it('three replicas share the clusters out: every widget is reconciled by its cluster’s owner alone', async () => {
    const name = `g${group++}`;
    const members = ['r-a', 'r-b', 'r-c'];
    const ms = members.map((id) => replica(id, name));
    await Promise.all(ms.map((m) => m.start()));
    await eventually('all three see each other', () => ms.every((m) => m.shards!.snapshot().view.length === 3), 10_000);
    const keys = await createWidgets(prefixSpreadOver('share', 12, members), 12, 2);
    await eventually('every widget reconciled', () => keys.every((k) => reconciledBy.has(k)), 20_000);
    await sleep(300);
    const owners = new Set<string>();
    for (const key of keys) {
      const owner = rendezvousOwner(members, clusterOf(key))!;
      owners.add(owner);
      expect(new Set(reconciledBy.get(key))).toEqual(new Set([owner]));
    }
    expect(owners.size).toBe(3);
    const leases = await env.client.resource<Lease>(LEASES_V1).list({ namespace: env.ns.name, labelSelector: `${SHARD_GROUP_LABEL}=${name}` });
    expect(leases.items.map((l) => l.spec?.holderIdentity).sort()).toEqual(members);
  });

  it.each([
    ['with the join grace (the lease duration)', undefined, 0],
    ['without it (acting at the first renewal)', 0, 1],
  ])(
    'replicas started a second apart settle their view before acting %s',
    async (_title, joinGraceMs, expectedMoves) => {
      const name = `g${group++}`;
      const members = ['s-a', 's-b'];
      const keys = await createWidgets(prefixSpreadOver(`settle${joinGraceMs ?? 'd'}`, 8, members), 8, 1);
      const [a, b] = members.map((id) => replica(id, name, joinGraceMs === undefined ? {} : { joinGraceMs }));
      const startA = a!.start();
      await sleep(1_000);
      await Promise.all([startA, b!.start()]);
      await eventually('every widget reconciled', () => keys.every((k) => reconciledBy.has(k)), 20_000);
      await sleep(300);
      // A widget reconciled by a replica other than its owner moved at start-up.
      const moved = keys.filter((key) => {
        const owner = rendezvousOwner(members, clusterOf(key))!;
        return reconciledBy.get(key)!.some((identity) => identity !== owner);
      });
      expect(moved.length > 0 ? 1 : 0).toBe(expectedMoves);
    },
  );

  it('a replica joining an established group acts without waiting out the join grace', async () => {
    const name = `g${group++}`;
    const [a, b] = ['e-a', 'e-b'].map((id) => replica(id, name, { joinGraceMs: 0 }));
    await Promise.all([a!.start(), b!.start()]);
    // Both have been members for longer than the newcomer's grace: nobody else is joining.
    await sleep(9_000);
    const c = replica('e-c', name, { joinGraceMs: 8_000 });
    const started = Date.now();
    await c.start();
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(c.shards!.snapshot()).toMatchObject({ fenced: false, view: ['e-a', 'e-b', 'e-c'] });
  });

  it('a joining replica takes its clusters after their old owner stopped; a leaving one hands them back at once', async () => {
    const name = `g${group++}`;
    const a = replica('j-a', name, { requeueMs: 20 });
    const b = replica('j-b', name, { requeueMs: 20 });
    await Promise.all([a.start(), b.start()]);
    const keys = await createWidgets(prefixSpreadOver('join', 10, ['j-a', 'j-b', 'j-c']), 10, 1);
    await eventually('every widget reconciled', () => keys.every((k) => reconciledBy.has(k)), 20_000);

    // Reconciles run continuously (requeued every 20 ms) while the third replica joins: any overlap is recorded.
    const c = replica('j-c', name, { requeueMs: 20 });
    // start() resolves once j-c has joined (after its join grace): from then on its clusters move within a lease.
    await c.start();
    const joinedAt = Date.now();
    const gained = keys.filter((k) => rendezvousOwner(['j-a', 'j-b', 'j-c'], clusterOf(k)) === 'j-c');
    expect(gained.length).toBeGreaterThan(0);
    await eventually('j-c reconciles the clusters it won', () => gained.every((k) => reconciledBy.get(k)?.includes('j-c')), LEASE_MS);
    const moveMs = Date.now() - joinedAt;
    expect(moveMs).toBeLessThan(LEASE_MS);
    // Once moved, the old owners leave them alone.
    const counts = () => gained.map((k) => reconciledBy.get(k)!.filter((id) => id !== 'j-c').length);
    const before = counts();
    await sleep(500);
    expect(counts()).toEqual(before);

    // Graceful leave: j-c deletes its Lease; the others take its clusters at their next round, not after expiry.
    const leftAt = Date.now();
    managers.splice(managers.indexOf(c), 1);
    await c.stop();
    const leases = await env.client.resource<Lease>(LEASES_V1).list({ namespace: env.ns.name, labelSelector: `${SHARD_GROUP_LABEL}=${name}` });
    expect(leases.items.map((l) => l.spec?.holderIdentity).sort()).toEqual(['j-a', 'j-b']);
    const marks = new Map(gained.map((k) => [k, reconciledBy.get(k)!.length]));
    await eventually('j-c’s clusters are back with j-a and j-b', () => gained.every((k) => reconciledBy.get(k)!.length > marks.get(k)!), LEASE_MS);
    expect(Date.now() - leftAt).toBeLessThan(LEASE_MS);
  });

  it('a replica cut off from the API server fences itself before the others take its clusters over', async () => {
    const name = `g${group++}`;
    const server = new URL(env.ns.kc.getCurrentCluster()!.server);
    const { relay, port } = await FreezableRelay.start(server);
    relays.push(relay);
    const partitionedKc = relayedKubeConfig(env.ns.kc, port);
    const a = replica('p-a', name, { requeueMs: 20, kubeConfig: partitionedKc });
    const b = replica('p-b', name, { requeueMs: 20 });
    await Promise.all([a.start(), b.start()]);
    const keys = await createWidgets(prefixSpreadOver('part', 10, ['p-a', 'p-b']), 10, 1);
    await eventually('every widget reconciled', () => keys.every((k) => reconciledBy.has(k)), 20_000);
    const lost = keys.filter((k) => rendezvousOwner(['p-a', 'p-b'], clusterOf(k)) === 'p-a');
    expect(lost.length).toBeGreaterThan(0);

    relay.freeze();
    const frozenAt = Date.now();
    await eventually('p-a is fenced', () => a.shards!.snapshot().fenced, RENEW_MS + 1000);
    const fencedAfter = Date.now() - frozenAt;
    await eventually('p-b reconciles p-a’s clusters', () => lost.every((k) => reconciledBy.get(k)!.includes('p-b')), LEASE_MS + RENEW_MS + 2000);
    expect(fencedAfter).toBeLessThanOrEqual(RENEW_MS + 500);

    // The partition heals: p-a joins again and takes its clusters back once p-b has let go of them (the overlap
    // check in afterEach covers both hand-overs).
    relay.thaw();
    await eventually('p-a joined again', () => !a.shards!.snapshot().fenced && a.shards!.snapshot().view.length === 2, LEASE_MS * 3);
    const marks = new Map(lost.map((k) => [k, reconciledBy.get(k)!.length]));
    await eventually(
      'p-a reconciles its clusters again',
      () => lost.every((k) => reconciledBy.get(k)!.slice(marks.get(k)!).includes('p-a')),
      LEASE_MS * 3,
    );
  });

  it('waits a retry period between failed rounds: an API server refusing every request is not hammered', async () => {
    const name = `g${group++}`;
    const { relay, port } = await FreezableRelay.start(new URL(env.ns.kc.getCurrentCluster()!.server));
    relays.push(relay);
    const kc = relayedKubeConfig(env.ns.kc, port);
    const a = replica('h-a', name, { kubeConfig: kc });
    await a.start();
    await eventually('h-a joined', () => !a.shards!.snapshot().fenced, 5000);
    relay.refuse();
    await sleep(2000);
    // 2 s at one round per retry period (250 ms, jittered) is about 8 rounds of a request or two, plus the informer's
    // own reconnects with backoff; a round retried at once would be hundreds.
    expect(relay.refused).toBeLessThan(60);
    managers.splice(managers.indexOf(a), 1);
    await a.stop();
  });

  it('keeps a cluster claimed, without fencing itself, while a reconcile that ignores its signal holds it', async () => {
    const name = `g${group++}`;
    let inside = false;
    const a = replica('s-a', name, { stubbornMs: RENEW_MS * 2, onStubborn: () => (inside = true) });
    await a.start();
    // A cluster the joining replica wins.
    let cluster = 0;
    while (rendezvousOwner(['s-a', 's-b'], `${env.ns.name}/stubborn-c${cluster}`) !== 's-b') cluster++;
    await env.client.resource<Widget>(WIDGET).create(widget(env.ns.name, `stubborn-c${cluster}-w0`, {}, { [CLUSTER_LABEL]: `stubborn-c${cluster}` }));
    await eventually('s-a is inside the stubborn reconcile', () => inside, 10_000);
    let fenced = false;
    const sampler = setInterval(() => (fenced ||= a.shards!.snapshot().fenced), 20);
    const b = replica('s-b', name);
    await b.start();
    const key = `${env.ns.name}/stubborn-c${cluster}-w0`;
    await eventually('s-b reconciles the cluster once s-a let it go', () => reconciledBy.get(key)?.includes('s-b') ?? false, RENEW_MS * 4);
    clearInterval(sampler);
    // s-a renewed throughout, keeping its claim, so s-b waited: the overlap check in afterEach sees s-b enter only
    // after s-a's stubborn reconcile (aborted, but running on) had ended.
    expect(fenced).toBe(false);
  });
});
