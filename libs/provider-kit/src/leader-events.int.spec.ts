import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { uniqueEventTopology } from '@capstan/events';
import { CONFIG_MAPS } from '@capstan/kube';
import { createTestNamespace, eventually, type TestNamespace } from '@capstan/testing';
import { eventHandlerModule } from './reconciler-kit/event-handlers.js';
import { type ServiceDefinition } from './service-definition.js';
import { testServiceOptions } from './testing/test-service-options.js';
import { startService, type RunningService } from './start-service.js';

// Two replicas with --leader-elect on one durable consumer: only the replica whose controllers run takes hand-off
// events, so none is acknowledged by a standby and dropped; when the leader goes, the other takes over the stream.

const HandoffModule = eventHandlerModule('LeaderHandoffListener', {
  'bootstrap.data-secret-created': (event) => [
    { controller: 'configmap', key: `${event.data.object.namespace}/${event.data.object.name}` },
  ],
});

describe('hand-off events with leader election', () => {
  let ns: TestNamespace;
  const topology = uniqueEventTopology('lead');
  const reconciledBy = new Map<string, string[]>();
  const replicas: RunningService[] = [];

  const replica = (identity: string): Promise<RunningService> => {
    const seen: string[] = [];
    reconciledBy.set(identity, seen);
    const definition: ServiceDefinition = {
      name: 'leader-test',
      consumes: 'handoff.>',
      modules: [HandoffModule],
      setup(context) {
        context.controllers.add({
          name: 'configmap',
          for: CONFIG_MAPS,
          reconcile: (key) => void seen.push(key),
        });
      },
    };
    return startService(
      definition,
      testServiceOptions(
        'leader-test',
        { namespace: ns.name, topology },
        {
          leaderElect: true,
          leaderElectionNamespace: ns.name,
          leaderElectionId: `leader-test-${topology.root}`,
          identity,
        },
      ),
      { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 250 },
    );
  };

  const publish = (from: RunningService, name: string) =>
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
      clusterName: 'demo',
      dataSecretName: `${name}-bootstrap`,
    });

  beforeAll(async () => {
    ns = await createTestNamespace('lead');
    replicas.push(await replica('a'), await replica('b'));
  });
  afterAll(async () => {
    for (const r of replicas) await r.stop().catch(() => undefined);
    await ns.delete();
  });

  it('has only the leader take events, and the new leader take them once the old one is gone', async () => {
    const leader = await eventually(() => replicas.find((r) => r.context.manager.isLeader()), {
      message: 'a leader',
      timeoutMs: 20_000,
    });
    const standby = replicas.find((r) => r !== leader)!;
    const leaderId = leader === replicas[0] ? 'a' : 'b';
    const standbyId = leaderId === 'a' ? 'b' : 'a';

    const names = Array.from({ length: 20 }, (_, i) => `first-${i}`);
    for (const name of names) await publish(standby, name);
    await eventually(() => names.every((n) => reconciledBy.get(leaderId)!.includes(`${ns.name}/${n}`)), {
      message: 'every event reconciled by the leader',
      timeoutMs: 20_000,
    });
    expect(reconciledBy.get(standbyId)!.filter((k) => k.includes('/first-'))).toEqual([]);

    await leader.stop();
    const later = Array.from({ length: 5 }, (_, i) => `later-${i}`);
    for (const name of later) await publish(standby, name);
    await eventually(() => later.every((n) => reconciledBy.get(standbyId)!.includes(`${ns.name}/${n}`)), {
      message: 'the new leader took the events published while it took over',
      timeoutMs: 30_000,
    });
    expect(standby.context.manager.isLeader()).toBe(true);
  });
});
