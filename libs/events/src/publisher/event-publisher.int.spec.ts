import { testNatsUrl } from '@capstan/testing';
import { Registry } from 'prom-client';
import { dataSecretCreated } from '../../test/fixtures.js';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { PublishError, SecretLikePayloadError } from '../errors.js';
import { EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { provisionEventStreams } from '../streams/provision-streams.js';
import { eventTopology } from '../streams/event-topology.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { EventPublisher } from './event-publisher.js';

describe('event publisher', () => {
  const topology = uniqueEventTopology('pub');
  const registry = new Registry();
  const metrics = new EventBusMetrics(registry);
  let connection: EventBusConnection;
  let publisher: EventPublisher;

  beforeAll(async () => {
    connection = await EventBusConnection.connect({ servers: testNatsUrl(), name: 'events-publisher' });
    await provisionEventStreams(await connection.jsm(), { topology });
    publisher = new EventPublisher(connection, { source: '/capstan/test', topology, metrics });
  });

  afterAll(async () => {
    const jsm = await connection.jsm();
    await jsm.streams.delete(topology.stream);
    await jsm.streams.delete(topology.deadLetterStream);
    await connection.close();
  });

  const storedMessages = async () =>
    (await (await connection.jsm()).streams.info(topology.stream)).state.messages;

  it('stores a repeated publish of the same object, version and event once', async () => {
    const before = await storedMessages();
    const first = await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    const again = await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ ...first, duplicate: true });
    expect(await storedMessages()).toBe(before + 1);

    const newer = await publisher.publish(
      'bootstrap.data-secret-created',
      dataSecretCreated({ resourceVersion: '4712' }),
    );
    expect(newer.duplicate).toBe(false);
    expect(newer.msgId).toBe('6f1c1b7e-3b0e-4a53-9d2e-1a2b3c4d5e6f:4712:data-secret-created');
    expect(await storedMessages()).toBe(before + 2);

    const published = await registry.getSingleMetricAsString('capstan_events_published_total');
    expect(published).toContain('outcome="duplicate"} 1');
  });

  it('publishes nothing that looks like a secret', async () => {
    const before = await storedMessages();
    const leaking = { ...dataSecretCreated({ resourceVersion: '9' }), value: 'c2VjcmV0' };
    await expect(publisher.publish('bootstrap.data-secret-created', leaking)).rejects.toThrow(
      SecretLikePayloadError,
    );
    expect(await storedMessages()).toBe(before);
  });

  it('fails with a retryable PublishError when no stream takes the subject', async () => {
    const nowhere = new EventPublisher(connection, {
      source: '/capstan/test',
      topology: uniqueEventTopology('nowhere'),
      timeoutMs: 1000,
    });
    const failure = await nowhere
      .publish('bootstrap.data-secret-created', dataSecretCreated())
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PublishError);
    expect(failure).toMatchObject({
      retryable: true,
      context: expect.objectContaining({ msgId: expect.any(String) }),
    });
  });

  it('fails without retry when another stream holds the subjects', async () => {
    const wrong = new EventPublisher(connection, {
      source: '/capstan/test',
      topology: eventTopology({ ...topology, stream: 'SOMEONE_ELSE' }),
    });
    await expect(wrong.publish('bootstrap.data-secret-created', dataSecretCreated())).rejects.toMatchObject({
      retryable: false,
      code: 'publish-failed',
    });
  });
});
