import { LEASES_V1, type Lease } from './leader-election.js';
import { Manager } from './manager.js';
import { microTime } from './micro-time.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { eventually, testLogger } from './testing/eventually.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

const LEASE_MS = 2000;
const RENEW_MS = 1500;
const RETRY_MS = 200;

describe('leader election between two managers', () => {
  const env = useWidgetNamespace('kube-le');
  /** Managers competing for each lease. */
  const groups = new Map<string, Manager[]>();
  /** Reconciles running right now, by lease and manager identity. */
  const inFlight = new Map<string, Map<string, number>>();
  const reconciledBy = new Map<string, string>();
  let overlaps = 0;
  let sampler: NodeJS.Timeout;

  beforeAll(async () => {
    // Sampled throughout: two managers running workers at the same moment is the failure this guards.
    sampler = setInterval(() => {
      for (const group of groups.values()) {
        if (group.filter((m) => m.controllers.some((c) => c.running)).length > 1) overlaps++;
      }
    }, 5);
  });

  afterAll(async () => {
    clearInterval(sampler);
  });

  afterEach(async () => {
    await Promise.all([...groups.values()].flat().map((m) => m.stop()));
    groups.clear();
    expect(overlaps).toBe(0);
  });

  function manager(
    identity: string,
    lease: string,
    options: { releaseOnStop?: boolean; onLeadershipLost?: () => void } = {},
  ): Manager {
    const m = new Manager({
      kubeConfig: env.ns.kc,
      namespace: env.ns.name,
      logger: testLogger(),
      leaderElection: {
        namespace: env.ns.name,
        name: lease,
        identity,
        leaseDurationMs: LEASE_MS,
        renewDeadlineMs: RENEW_MS,
        retryPeriodMs: RETRY_MS,
        ...options,
      },
    });
    const running = inFlight.get(lease) ?? new Map<string, number>();
    inFlight.set(lease, running);
    m.addController({
      name: 'widgets',
      for: WIDGET,
      reconcile: async (key) => {
        running.set(identity, (running.get(identity) ?? 0) + 1);
        if ([...running.entries()].some(([id, n]) => id !== identity && n > 0)) overlaps++;
        await new Promise((r) => setTimeout(r, 20));
        reconciledBy.set(key, identity);
        running.set(identity, running.get(identity)! - 1);
      },
    });
    groups.set(lease, [...(groups.get(lease) ?? []), m]);
    return m;
  }

  async function reconciledByLeader(name: string, leader: string): Promise<void> {
    await env.client.resource<Widget>(WIDGET).create(widget(env.ns.name, name));
    await eventually(
      `${name} reconciled by ${leader}`,
      () => reconciledBy.get(`${env.ns.name}/${name}`) === leader,
      10_000,
    );
  }

  it('one manager leads; on graceful stop it releases the lease and the other takes over at once', async () => {
    const a = manager('a', 'graceful');
    await a.start();
    await eventually('a leads', () => a.isLeader());
    const b = manager('b', 'graceful');
    await b.start();
    await reconciledByLeader('g-1', 'a');
    expect(b.isLeader()).toBe(false);

    await a.stop();
    // The released lease is free: b needs only a retry period (the bound leaves room for a loaded CI machine).
    await eventually('b leads', () => b.isLeader(), 5 * LEASE_MS);
    await reconciledByLeader('g-2', 'b');
    const lease = await env.client
      .resource<Lease>(LEASES_V1)
      .get({ namespace: env.ns.name, name: 'graceful' });
    expect(lease.spec?.holderIdentity).toBe('b');
    expect(lease.spec?.leaseTransitions).toBe(1);
  });

  it('when the leader dies without releasing, the other takes over once the lease expires', async () => {
    const a = manager('c', 'crash', { releaseOnStop: false });
    await a.start();
    await eventually('c leads', () => a.isLeader());
    const b = manager('d', 'crash');
    await b.start();
    await reconciledByLeader('c-1', 'c');
    await a.stop();
    expect(b.isLeader()).toBe(false);
    await eventually('d leads', () => b.isLeader(), 3 * (LEASE_MS + RENEW_MS + 2 * RETRY_MS));
    await reconciledByLeader('c-2', 'd');
  });

  it('a leader whose lease is taken stops its workers at once and says so', async () => {
    let lost = 0;
    const a = manager('e', 'stolen', { onLeadershipLost: () => lost++ });
    await a.start();
    await eventually('e leads', () => a.isLeader());
    const leases = env.client.resource<Lease>(LEASES_V1);
    const lease = await leases.get({ namespace: env.ns.name, name: 'stolen' });
    const now = microTime();
    await leases.replace({
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: 'intruder',
        leaseDurationSeconds: 2,
        acquireTime: now,
        renewTime: now,
      },
    });
    // At its next renewal, well before the lease would have expired.
    await eventually('e stopped leading', () => !a.isLeader() && lost === 1, 3 * RENEW_MS);
    expect(a.controllers.every((c) => !c.running)).toBe(true);
    // The intruder never renews: e gets the lease back after it expires.
    await eventually('e leads again', () => a.isLeader(), 3 * (2000 + RENEW_MS + 2 * RETRY_MS + 1000));
    await reconciledByLeader('s-1', 'e');
  });
});
