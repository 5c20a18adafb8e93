import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { uniqueEventTopology } from '@capstan/events';
import { CONFIG_MAPS, rendezvousOwner } from '@capstan/kube';
import {
  adminApiRequest,
  clusterAdminToken,
  createTestNamespace,
  eventually,
  type TestNamespace,
} from '@capstan/testing';
import { ADMIN_API_AUDIENCE } from '@capstan/observability';
import { eventHandlerModule } from '../reconciler-kit/event-handlers.js';
import { type ServiceDefinition } from '../service-definition.js';
import { testServiceOptions } from '../testing/test-service-options.js';
import { startService, type RunningService } from '../start-service.js';

// Sharded replicas, each on a durable of its own: a hint is acted on by the replica that owns its cluster, and no
// hint is lost when replicas join or leave: the object it names is reconciled after it by the cluster's owner,
// through the hint (handed back until the owner can take it) or the resync a new owner runs at once.

/** Which replicas acted on each hint (by object name). */
const handledBy = new Map<string, string[]>();
/** Reconciles of each ConfigMap (by name): which replica, when. */
const reconciles = new Map<string, { by: string; at: number }[]>();

const HintModule = eventHandlerModule('ShardedHintListener', {
  'bootstrap.data-secret-created': (event, context) => {
    const name = event.data.object.name;
    handledBy.set(name, [...(handledBy.get(name) ?? []), context.options.identity]);
    return [{ controller: 'configmap', key: `${event.data.object.namespace}/${name}` }];
  },
});

describe('hand-off hints with sharded replicas', () => {
  let ns: TestNamespace;
  const topology = uniqueEventTopology('shard');
  const replicas = new Map<string, RunningService>();

  const replica = async (identity: string): Promise<RunningService> => {
    const definition: ServiceDefinition = {
      name: 'shard-test',
      consumes: 'handoff.>',
      modules: [HintModule],
      setup(context) {
        context.controllers.add({
          name: 'configmap',
          for: CONFIG_MAPS,
          reconcile: (key) => {
            const name = key.split('/')[1]!;
            reconciles.set(name, [
              ...(reconciles.get(name) ?? []),
              { by: context.options.identity, at: Date.now() },
            ]);
          },
        });
      },
    };
    const service = await startService(
      definition,
      testServiceOptions(
        'shard-test',
        { namespace: ns.name, topology },
        { sharding: true, leaderElectionNamespace: ns.name, identity },
      ),
      { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 250 },
    );
    replicas.set(identity, service);
    return service;
  };

  const publish = (from: RunningService, name: string, cluster: string) =>
    from.context.publisher.publish('bootstrap.data-secret-created', {
      object: {
        apiGroup: 'bootstrap.capstan.dev',
        kind: 'K3sConfig',
        namespace: ns.name,
        name,
        uid: randomUUID(),
      },
      generation: 1,
      resourceVersion: '1',
      clusterName: cluster,
      dataSecretName: `${name}-bootstrap`,
    });

  const publishedAt = new Map<string, number>();
  /** Creates a ConfigMap of each of `clusters` clusters and publishes a hint naming it; returns name -> cluster. */
  const publishRound = async (round: string, clusters: number): Promise<Map<string, string>> => {
    const sent = new Map<string, string>();
    const from = [...replicas.values()][0]!;
    for (let c = 0; c < clusters; c++) {
      const name = `${round}-${c}`;
      sent.set(name, `c${c}`);
      await from.context.client
        .resource(CONFIG_MAPS)
        .create({
          metadata: { namespace: ns.name, name, labels: { 'cluster.x-k8s.io/cluster-name': `c${c}` } },
        });
    }
    for (const [name, cluster] of sent) {
      publishedAt.set(name, Date.now());
      await publish(from, name, cluster);
    }
    return sent;
  };
  /** The hint's object was reconciled after the hint by the replica owning its cluster among `members`. */
  const reconciledAfterHint = (sent: Map<string, string>, members: string[]) =>
    [...sent].every(([name, cluster]) =>
      (reconciles.get(name) ?? []).some(
        (r) => r.at >= publishedAt.get(name)! && r.by === ownerAmong(members, cluster),
      ),
    );

  const ownerAmong = (members: string[], cluster: string) =>
    rendezvousOwner([...members].sort(), `${ns.name}/${cluster}`);

  beforeAll(async () => {
    ns = await createTestNamespace('shard');
  });
  afterAll(async () => {
    for (const r of replicas.values()) await r.stop().catch(() => undefined);
    await ns.delete();
  });

  it('has each hint acted on by its cluster’s owner alone, and none lost while a replica joins or leaves', async () => {
    await replica('s-a');
    await replica('s-b');
    await eventually(
      () => [...replicas.values()].every((r) => r.context.manager.shards!.snapshot().view.length === 2),
      {
        message: 'two members',
        timeoutMs: 10_000,
      },
    );
    const first = await publishRound('first', 12);
    await eventually(() => [...first.keys()].every((n) => handledBy.has(n)), {
      message: 'every hint acted on',
      timeoutMs: 20_000,
    });
    for (const [name, cluster] of first)
      expect(handledBy.get(name)).toEqual([ownerAmong(['s-a', 's-b'], cluster)]);

    // Hints published while s-c joins: each is acted on by its owner at the time, or handed back until the new
    // owner has taken the cluster over. None is acknowledged by a replica that leaves it and then lost.
    const joining = replica('s-c');
    const during = await publishRound('during', 12);
    await joining;
    // Each hint sent during the join is run by a handler: its cluster's owner had claimed it (the joiner's durable
    // exists before it claims anything), so no replica acknowledged it for an owner that never saw it.
    await eventually(() => [...during.keys()].every((n) => handledBy.has(n)), {
      message: 'every hint sent during the join handled',
      timeoutMs: 30_000,
    });
    await eventually(() => reconciledAfterHint(during, ['s-a', 's-b', 's-c']), {
      message: 'every object hinted during the join reconciled after its hint by its new owner',
      timeoutMs: 30_000,
    });
    await eventually(
      () => [...replicas.values()].every((r) => r.context.manager.shards!.snapshot().published.length === 3),
      {
        message: 'all three published the three-member view',
        timeoutMs: 10_000,
      },
    );
    const after = await publishRound('after', 12);
    await eventually(() => [...after.keys()].every((n) => handledBy.has(n)), {
      message: 'every hint sent after the join acted on',
      timeoutMs: 20_000,
    });
    for (const [name, cluster] of after)
      expect(handledBy.get(name)).toEqual([ownerAmong(['s-a', 's-b', 's-c'], cluster)]);
    // Every replica that owns one of the clusters acted (the owners come from the namespace's hash: with 12 clusters
    // one of three replicas owns none about once in a hundred runs, so the set is compared, not counted).
    expect(new Set([...after.keys()].map((n) => handledBy.get(n)![0]))).toEqual(
      new Set([...after.values()].map((cluster) => ownerAmong(['s-a', 's-b', 's-c'], cluster))),
    );

    // s-b leaves: its clusters' hints go to their new owners.
    await replicas.get('s-b')!.stop();
    replicas.delete('s-b');
    const leaving = await publishRound('left', 12);
    await eventually(() => reconciledAfterHint(leaving, ['s-a', 's-c']), {
      message: 'every object hinted after the leave reconciled after its hint by its new owner',
      timeoutMs: 30_000,
    });
    expect([...leaving.keys()].flatMap((n) => (reconciles.get(n) ?? []).map((r) => r.by))).not.toContain(
      's-b',
    );

    // The admin API shows the membership and where each cluster it knows of lands (to an authorised token only).
    const replicaA = replicas.get('s-a')!;
    expect((await adminApiRequest(replicaA, '/admin/shards')).status).toBe(401);
    const token = await clusterAdminToken(ns.kc, ADMIN_API_AUDIENCE);
    await eventually(
      async () => {
        const body = (await adminApiRequest(replicaA, '/admin/shards', { token })).json<{
          sharded: boolean;
          view: string[];
          members: { identity: string; live: boolean }[];
        }>();
        return (
          body.sharded &&
          body.view.join() === 's-a,s-c' &&
          body.members.some((m) => m.identity === 's-c' && m.live)
        );
      },
      { message: 'the admin API shows s-a and s-c', timeoutMs: 10_000 },
    );
  });
});
