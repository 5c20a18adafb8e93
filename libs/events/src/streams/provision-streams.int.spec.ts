import { StorageType } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { testNatsUrl } from '@capstan/testing';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { consumerInfo, provisionDurableConsumer } from '../consumer/durable-consumer-config.js';
import { StreamConfigConflictError } from '../errors.js';
import { provisionEventStreams, streamInfo } from './provision-streams.js';
import { uniqueEventTopology } from './unique-topology.js';
import { type EventTopology } from './event-topology.js';

describe('stream provisioning', () => {
  let connection: EventBusConnection;
  const topologies: EventTopology[] = [];
  const topology = (label: string) => {
    const t = uniqueEventTopology(label);
    topologies.push(t);
    return t;
  };

  beforeAll(async () => {
    connection = await EventBusConnection.connect({ servers: testNatsUrl(), name: 'events-provisioning' });
  });

  afterAll(async () => {
    const jsm = await connection.jsm();
    for (const t of topologies) {
      for (const name of [t.stream, t.deadLetterStream])
        await jsm.streams.delete(name).catch(() => undefined);
    }
    await connection.close();
  });

  it('creates both streams once, then leaves them alone', async () => {
    const jsm = await connection.jsm();
    const t = topology('create');
    expect(await provisionEventStreams(jsm, { topology: t })).toEqual({
      events: { name: t.stream, outcome: 'created' },
      deadLetters: { name: t.deadLetterStream, outcome: 'created' },
    });
    expect(await provisionEventStreams(jsm, { topology: t })).toEqual({
      events: { name: t.stream, outcome: 'unchanged' },
      deadLetters: { name: t.deadLetterStream, outcome: 'unchanged' },
    });
    const events = await jsm.streams.info(t.stream);
    expect(events.config).toMatchObject({
      subjects: [`${t.root}.handoff.>`, `${t.root}.lifecycle.>`],
      storage: StorageType.File,
      num_replicas: 1,
      max_age: nanos(7 * 24 * 3600 * 1000),
      duplicate_window: nanos(10 * 60 * 1000),
    });
    const deadLetters = await jsm.streams.info(t.deadLetterStream);
    expect(deadLetters.config.subjects).toEqual([`${t.root}.dlq.>`]);
  });

  it('updates a stream whose configuration differs', async () => {
    const jsm = await connection.jsm();
    const t = topology('update');
    await provisionEventStreams(jsm, { topology: t });
    const result = await provisionEventStreams(jsm, {
      topology: t,
      maxAgeMs: 3600_000,
      duplicateWindowMs: 60_000,
    });
    expect(result.events.outcome).toBe('updated');
    const info = await jsm.streams.info(t.stream);
    expect(info.config.max_age).toBe(nanos(3600_000));
    expect(info.config.duplicate_window).toBe(nanos(60_000));
  });

  it('narrows an old stream on <root>.> so the dead letters get their own stream', async () => {
    const jsm = await connection.jsm();
    const t = topology('narrow');
    await jsm.streams.add({ name: t.stream, subjects: [`${t.root}.>`], storage: StorageType.File });
    const result = await provisionEventStreams(jsm, { topology: t });
    expect(result).toEqual({
      events: { name: t.stream, outcome: 'updated' },
      deadLetters: { name: t.deadLetterStream, outcome: 'created' },
    });
  });

  it('refuses to change what cannot change in place', async () => {
    const jsm = await connection.jsm();
    const t = topology('conflict');
    await jsm.streams.add({ name: t.stream, subjects: [`${t.root}.handoff.>`], storage: StorageType.Memory });
    await expect(provisionEventStreams(jsm, { topology: t })).rejects.toThrow(StreamConfigConflictError);
    expect(await streamInfo(jsm, t.deadLetterStream)).toBeUndefined();
  });

  it('provisions a durable consumer idempotently and updates its settings', async () => {
    const jsm = await connection.jsm();
    const t = topology('consumer');
    await provisionEventStreams(jsm, { topology: t });
    const options = { durable: 'svc', filterSubject: `${t.root}.handoff.>`, maxDeliveries: 3 };
    expect(await provisionDurableConsumer(jsm, t.stream, options)).toBe('created');
    expect(await provisionDurableConsumer(jsm, t.stream, options)).toBe('unchanged');
    expect(
      await provisionDurableConsumer(jsm, t.stream, { ...options, maxDeliveries: 7, ackWaitMs: 5000 }),
    ).toBe('updated');
    const info = await consumerInfo(jsm, t.stream, 'svc');
    expect(info?.config).toMatchObject({
      max_deliver: 8,
      ack_wait: nanos(5000),
      filter_subject: `${t.root}.handoff.>`,
      ack_policy: 'explicit',
    });
    expect(
      await provisionDurableConsumer(jsm, t.stream, { durable: 'svc', maxDeliveries: 7, ackWaitMs: 5000 }),
    ).toBe('updated');
    expect((await consumerInfo(jsm, t.stream, 'svc'))?.config.filter_subject ?? '').toBe('');
  });
});
