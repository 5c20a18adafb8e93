import { testNatsUrl } from '@capstan/testing';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { type CapstanEvent } from '../envelope/cloud-event.js';
import { dataSecretCreated } from '../envelope/test-fixtures.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { provisionEventStreams } from '../streams/provision-streams.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { EventConsumer } from './event-consumer.js';

describe('publish -> stream -> durable consumer -> handler', () => {
  const topology = uniqueEventTopology('thin');
  let connection: EventBusConnection;

  beforeAll(async () => {
    connection = await EventBusConnection.connect({ servers: testNatsUrl(), name: 'events-thin-path' });
    await provisionEventStreams(await connection.jsm(), { topology });
  });

  afterAll(async () => {
    const jsm = await connection.jsm();
    await jsm.streams.delete(topology.stream);
    await jsm.streams.delete(topology.deadLetterStream);
    await connection.close();
  });

  it('delivers a published event to the handler, validated', async () => {
    const publisher = new EventPublisher(connection, { source: '/capstan/test', topology });
    const received: CapstanEvent[] = [];
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const consumer = new EventConsumer(connection, { durable: 'thin', topology }, (event) => {
      received.push(event);
      resolve();
    });
    await consumer.start();
    try {
      const result = await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
      expect(result).toMatchObject({ stream: topology.stream, duplicate: false });
      await done;
      expect(received).toHaveLength(1);
      expect(received[0]?.type).toBe('dev.capstan.handoff.bootstrap.data-secret-created');
      expect(received[0]?.id).toBe(result.msgId);
    } finally {
      await consumer.stop();
    }
  });
});
