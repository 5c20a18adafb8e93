import { randomUUID } from 'node:crypto';
import {
  EventBusConnection,
  EventPublisher,
  provisionEventStreams,
  uniqueEventTopology,
  type CapstanEvent,
} from '@capstan/events';
import { testNatsUrl } from '@capstan/testing';
import { formatEvent, tailEvents } from './tail-events.js';

describe('capstan events', () => {
  const topology = uniqueEventTopology('cli');
  let connection: EventBusConnection;
  let publisher: EventPublisher;

  const machineEvent = (cluster: string, name: string) => ({
    object: { apiGroup: 'cluster.x-k8s.io', kind: 'Machine', namespace: 'fleet', name, uid: randomUUID() },
    generation: 1,
    resourceVersion: '7',
    clusterName: cluster,
    phase: 'Provisioned' as const,
    controlPlane: false,
    providerID: `sim://fleet/${name}`,
  });

  beforeAll(async () => {
    connection = await EventBusConnection.connect({ servers: testNatsUrl() });
    await provisionEventStreams(await connection.jsm(), { topology });
    publisher = new EventPublisher(connection, { source: '/capstan/test', topology });
  });
  afterAll(() => connection.close());

  it('replays recent lifecycle events of one cluster and follows new ones, skipping other clusters', async () => {
    await publisher.publish('machine.provisioned', machineEvent('demo', 'demo-md-0-a'));
    await publisher.publish('machine.provisioned', machineEvent('other', 'other-md-0-a'));
    const seen: CapstanEvent[] = [];
    const abort = new AbortController();
    const done = tailEvents({
      connection,
      topology,
      filter: { source: 'lifecycle', cluster: 'demo' },
      since: new Date(Date.now() - 60_000),
      onEvent: (event) => {
        seen.push(event);
        if (seen.length === 2) abort.abort();
      },
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await publisher.publish('machine.provisioned', machineEvent('demo', 'demo-md-0-b'));
    await done;
    expect(seen.map((e) => e.data.object.name)).toEqual(['demo-md-0-a', 'demo-md-0-b']);
    const line = formatEvent(seen[0]!);
    expect(line).toContain('lifecycle.machine.provisioned');
    expect(line).toContain('Machine/fleet/demo-md-0-a');
    expect(line).toContain('cluster=demo');
    expect(line).toContain('providerID=sim://fleet/demo-md-0-a');
  });
});
