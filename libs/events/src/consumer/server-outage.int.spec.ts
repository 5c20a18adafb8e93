import { distinctDataSecretCreated, eventually } from '../../test/fixtures.js';
import { EventBusConnection, type ConnectionState } from '../connection/event-bus-connection.js';
import { PublishError } from '../errors.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { provisionEventStreams } from '../streams/provision-streams.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { PrivateNatsServer } from '../testing/private-nats-server.js';
import { EventConsumer } from './event-consumer.js';

/** What a reconciler does: a failed publish fails the reconcile, which is retried until it goes through. */
async function publishUntilStored(publisher: EventPublisher, index: number): Promise<void> {
  for (;;) {
    try {
      await publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(index));
      return;
    } catch (error) {
      if (!(error instanceof PublishError) || !error.retryable) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('when the NATS server goes away', () => {
  let server: PrivateNatsServer;

  beforeAll(async () => {
    server = await PrivateNatsServer.start();
  });

  afterAll(async () => {
    await server.remove();
  });

  it('loses no message: the consumer continues and the publishers retry', async () => {
    const topology = uniqueEventTopology('restart');
    const fastReconnect = {
      servers: server.url,
      reconnectTimeWaitMs: 200,
      reconnectJitterMs: 100,
      jetStreamTimeoutMs: 2000,
    };
    const publishing = await EventBusConnection.connect({ ...fastReconnect, name: 'restart-publisher' });
    const consuming = await EventBusConnection.connect({ ...fastReconnect, name: 'restart-consumer' });
    const states: ConnectionState[] = [];
    const subscription = consuming.status$.subscribe((state) => states.push(state));
    const handled = new Set<string>();
    const consumer = new EventConsumer(
      consuming,
      // Messages the server sent just before it stopped were never seen by the client: they come back
      // after ack_wait, kept short here.
      {
        durable: 'svc',
        topology,
        ackWaitMs: 2000,
        idleHeartbeatMs: 1000,
        pullExpiresMs: 5000,
        restartDelayMs: 100,
      },
      (event) => {
        handled.add(event.data.object.name);
      },
    );
    try {
      await provisionEventStreams(await publishing.jsm(), { topology });
      await consumer.start();
      const publisher = new EventPublisher(publishing, { source: '/capstan/test', topology });

      await Promise.all(Array.from({ length: 100 }, (_, i) => publishUntilStored(publisher, i)));
      await server.stop();
      const duringOutage = Promise.all(
        Array.from({ length: 100 }, (_, i) => publishUntilStored(publisher, 100 + i)),
      );
      await eventually(() => states.includes('disconnected'), 'the consumer to notice the outage');
      await server.start();
      await duringOutage;

      await eventually(() => handled.size === 200, 'all 200 events to be handled', 60_000);
      expect(states.at(-1)).toBe('connected');
      const stored = await (await publishing.jsm()).streams.info(topology.stream);
      expect(stored.state.messages).toBe(200);
    } finally {
      subscription.unsubscribe();
      await consumer.stop();
      await publishing.close();
      await consuming.close();
    }
  });

  it('restarts the consume loop when heartbeats stop, and carries on', async () => {
    const topology = uniqueEventTopology('freeze');
    const connection = await EventBusConnection.connect({
      servers: server.url,
      name: 'freeze-consumer',
      jetStreamTimeoutMs: 1000,
    });
    const handled = new Set<string>();
    const consumer = new EventConsumer(
      connection,
      {
        durable: 'svc',
        topology,
        ackWaitMs: 2000,
        idleHeartbeatMs: 500,
        pullExpiresMs: 2000,
        restartDelayMs: 100,
      },
      (event) => {
        handled.add(event.data.object.name);
      },
    );
    try {
      await provisionEventStreams(await connection.jsm(), { topology });
      await consumer.start();
      const publisher = new EventPublisher(connection, { source: '/capstan/test', topology });
      await publishUntilStored(publisher, 1);
      await eventually(() => handled.size === 1, 'the first event');

      server.freeze();
      await eventually(() => consumer.restarts > 0, 'the consume loop to restart after missed heartbeats');
      server.thaw();

      await publishUntilStored(publisher, 2);
      await eventually(() => handled.has('demo-2'), 'an event after the server came back');
      expect(consumer.running).toBe(true);
    } finally {
      server.thaw();
      await consumer.stop();
      await connection.close();
    }
  });
});
