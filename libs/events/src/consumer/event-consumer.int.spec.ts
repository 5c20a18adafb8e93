import { headers as natsHeaders } from '@nats-io/transport-node';
import { testNatsUrl } from '@capstan/testing';
import { Registry } from 'prom-client';
import { dataSecretCreated, distinctDataSecretCreated, eventually } from '../../test/fixtures.js';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { type CapstanEvent } from '../envelope/cloud-event.js';
import { encodeEvent } from '../envelope/event-codec.js';
import { DeferredEventError, UnprocessableEventError } from '../errors.js';
import { EventBusMetrics } from '../metrics/event-bus-metrics.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { provisionEventStreams } from '../streams/provision-streams.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { type EventTopology } from '../streams/event-topology.js';
import { deadLetterPayload } from './dead-letter.js';
import { readDeadLetters } from './dead-letter-reader.js';
import { EventConsumer, type EventConsumerOptions, type EventHandler } from './event-consumer.js';

describe('durable event consumer', () => {
  const connections: EventBusConnection[] = [];
  const consumers: EventConsumer[] = [];
  const topologies: EventTopology[] = [];
  let connection: EventBusConnection;

  const connect = async (name: string) => {
    const c = await EventBusConnection.connect({ servers: testNatsUrl(), name });
    connections.push(c);
    return c;
  };

  /** A fresh topology per test: no test sees another's messages or durables. */
  const setup = async (label: string) => {
    const topology = uniqueEventTopology(label);
    topologies.push(topology);
    await provisionEventStreams(await connection.jsm(), { topology });
    const publisher = new EventPublisher(connection, { source: '/capstan/test', topology });
    return { topology, publisher };
  };

  const startConsumer = async (
    on: EventBusConnection,
    options: EventConsumerOptions,
    handler: EventHandler,
  ): Promise<EventConsumer> => {
    const consumer = new EventConsumer(
      on,
      { redeliveryBackoff: { initialMs: 50, maxMs: 200 }, ...options },
      handler,
    );
    consumers.push(consumer);
    await consumer.start();
    return consumer;
  };

  /** Waits until the topology's dead-letter stream holds `count` dead letters, and returns them. */
  const deadLetters = (topology: EventTopology, count: number) =>
    eventually(async () => {
      const letters = await readDeadLetters(await connection.jsm(), topology.deadLetterStream);
      return letters.length === count && letters;
    }, `${count} dead letters`);

  beforeAll(async () => {
    connection = await connect('events-consumer-tests');
  });

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    const jsm = await connection.jsm();
    for (const t of topologies) {
      for (const name of [t.stream, t.deadLetterStream])
        await jsm.streams.delete(name).catch(() => undefined);
    }
    await Promise.all(connections.map((c) => c.close()));
  });

  it('delivers a published event to the handler, validated', async () => {
    const { topology, publisher } = await setup('thin');
    const received: CapstanEvent[] = [];
    await startConsumer(connection, { durable: 'thin', topology }, (event) => {
      received.push(event);
    });
    const result = await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    await eventually(() => received.length === 1, 'the event');
    expect(received[0]).toMatchObject({
      id: result.msgId,
      type: 'dev.capstan.handoff.bootstrap.data-secret-created',
    });
    expect(received[0]?.data.object.name).toBe('demo-md-0-x7k2p');
  });

  it('delivers again after a consumer crashed between receive and ack', async () => {
    const { topology, publisher } = await setup('crash');
    const doomed = await connect('events-crashing-replica');
    const options = { durable: 'svc', topology, ackWaitMs: 1000 };
    let crashed = false;
    const seenBySurvivor: { id: string; deliveryCount: number }[] = [];
    // The handler takes the message and the process dies before acking: the connection drops without a word.
    await startConsumer(doomed, options, async () => {
      crashed = true;
      await doomed.close();
    });
    const published = await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    await eventually(() => crashed, 'the first replica to take the message');

    await startConsumer(connection, options, (event, delivery) => {
      seenBySurvivor.push({ id: event.id, deliveryCount: delivery.deliveryCount });
    });
    const [redelivered] = await eventually(
      () => seenBySurvivor.length > 0 && seenBySurvivor,
      'the redelivery',
    );
    expect(redelivered?.id).toBe(published.msgId);
    expect(redelivered?.deliveryCount).toBeGreaterThanOrEqual(2);
  });

  it('never hands one message to two replicas of a durable', async () => {
    const { topology, publisher } = await setup('replicas');
    const handledBy = new Map<string, string[]>();
    const handler =
      (replica: string): EventHandler =>
      async (event) => {
        handledBy.set(event.id, [...(handledBy.get(event.id) ?? []), replica]);
        await new Promise((resolve) => setTimeout(resolve, 1));
      };
    const options = { durable: 'shared', topology, batchSize: 10 };
    await startConsumer(await connect('replica-a'), options, handler('a'));
    await startConsumer(await connect('replica-b'), options, handler('b'));
    const count = 300;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(i)),
      ),
    );
    await eventually(() => handledBy.size === count, `${count} distinct events`);
    const twice = [...handledBy.entries()].filter(([, replicas]) => replicas.length > 1);
    expect(twice).toEqual([]);
    // Both replicas took part (the server spreads pull requests), so the check above means something.
    expect(new Set([...handledBy.values()].flat())).toEqual(new Set(['a', 'b']));
  });

  it('retries a failing handler with a delay and acks once it succeeds', async () => {
    const { topology, publisher } = await setup('retry');
    const deliveries: number[] = [];
    await startConsumer(connection, { durable: 'svc', topology }, (_event, delivery) => {
      deliveries.push(delivery.deliveryCount);
      if (delivery.deliveryCount < 3) throw new Error('API server unavailable');
    });
    await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    await eventually(() => deliveries.length === 3, 'three deliveries');
    expect(deliveries).toEqual([1, 2, 3]);
    expect(await readDeadLetters(await connection.jsm(), topology.deadLetterStream)).toEqual([]);
  });

  it('dead-letters a message whose handler keeps failing, then carries on', async () => {
    const { topology, publisher } = await setup('maxdeliver');
    const registry = new Registry();
    const metrics = new EventBusMetrics(registry);
    const handled: string[] = [];
    const poisoned = distinctDataSecretCreated(1);
    await startConsumer(connection, { durable: 'svc', topology, maxDeliveries: 3, metrics }, (event) => {
      if (event.data.object.name === poisoned.object.name) throw new Error('cannot handle this one');
      handled.push(event.data.object.name);
    });
    const bad = await publisher.publish('bootstrap.data-secret-created', poisoned);
    await publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(2));

    const [letter] = await deadLetters(topology, 1);
    expect(letter?.subject).toBe(bad.subject.replace(`${topology.root}.`, `${topology.root}.dlq.`));
    expect(letter?.record).toMatchObject({
      reason: 'max-deliveries',
      consumer: 'svc',
      original: { subject: bad.subject, deliveryCount: 3, payloadEncoding: 'utf8', payloadTruncated: false },
    });
    expect(letter?.record.original.headers['Nats-Msg-Id']).toEqual([bad.msgId]);
    expect(letter?.record.detail).toContain('cannot handle this one');
    await eventually(() => handled.includes('demo-2'), 'the next event');
    expect(await registry.getSingleMetricAsString('capstan_events_dead_lettered_total')).toContain(
      'reason="max-deliveries"} 1',
    );
    expect(await registry.getSingleMetricAsString('capstan_events_redelivered_total')).toContain(
      'consumer="svc"} 2',
    );
  });

  it('hands a deferred event back until it can be acted on, and never dead-letters it', async () => {
    const { topology, publisher } = await setup('defer');
    const registry = new Registry();
    const metrics = new EventBusMetrics(registry);
    const deliveries: number[] = [];
    const deferredFor = distinctDataSecretCreated(1);
    const alwaysDeferred = distinctDataSecretCreated(2);
    const given: string[] = [];
    await startConsumer(connection, { durable: 'svc', topology, maxDeliveries: 3, metrics }, (event, delivery) => {
      const name = event.data.object.name;
      if (name === deferredFor.object.name) {
        deliveries.push(delivery.deliveryCount);
        if (delivery.deliveryCount < 3) throw new DeferredEventError('Machine ns/m-1 is not in the cache yet');
      }
      if (name === alwaysDeferred.object.name) throw new DeferredEventError('no replica runs this controller');
      given.push(name);
    });
    await publisher.publish('bootstrap.data-secret-created', deferredFor);
    await publisher.publish('bootstrap.data-secret-created', alwaysDeferred);
    await eventually(() => given.includes(deferredFor.object.name), 'the deferred event acted on at last');
    expect(deliveries).toEqual([1, 2, 3]);
    await eventually(
      async () => (await registry.getSingleMetricAsString('capstan_events_consumed_total')).includes('outcome="ignored"} 1'),
      'the event deferred on every delivery left to the resync',
    );
    expect(await registry.getSingleMetricAsString('capstan_events_consumed_total')).toContain('outcome="deferred"} 4');
    expect(await readDeadLetters(await connection.jsm(), topology.deadLetterStream)).toEqual([]);
  });

  it('dead-letters at once what the handler declares unprocessable', async () => {
    const { topology, publisher } = await setup('unprocessable');
    let calls = 0;
    await startConsumer(connection, { durable: 'svc', topology }, () => {
      calls++;
      throw new UnprocessableEventError('refers to a kind this service does not serve');
    });
    await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    const [letter] = await deadLetters(topology, 1);
    expect(letter?.record).toMatchObject({ reason: 'unprocessable', original: { deliveryCount: 1 } });
    expect(calls).toBe(1);
  });

  it('dead-letters malformed and oversized messages and keeps handling good ones', async () => {
    const { topology, publisher } = await setup('malformed');
    const handled: string[] = [];
    await startConsumer(connection, { durable: 'svc', topology, maxPayloadBytes: 4096 }, (event) => {
      handled.push(event.data.object.name);
    });
    const subject = `${topology.root}.handoff.k3sconfig.default.demo-md-0-x7k2p.data-secret-created`;
    const valid = encodeEvent('bootstrap.data-secret-created', dataSecretCreated(), {
      source: '/t',
      root: topology.root,
    });
    const envelope = JSON.parse(new TextDecoder().decode(valid.payload));
    const raw = (text: string) => new TextEncoder().encode(text);
    const headers = natsHeaders();
    headers.set('Trace-Id', 'abc');
    const poison: [string, Uint8Array, string][] = [
      ['not-json', raw('{"specversion": "1.0", '), subject],
      ['not-json', new Uint8Array([0xc3, 0x28, 0xa0, 0xa1]), subject],
      [
        'validation-failed',
        raw(JSON.stringify({ ...envelope, data: { ...envelope.data, generation: 'one' } })),
        subject,
      ],
      ['validation-failed', valid.payload, subject.replace('demo-md-0-x7k2p', 'someone-else')],
      ['unknown-type', raw(JSON.stringify({ ...envelope, type: 'com.example.other' })), subject],
      ['oversized', raw(JSON.stringify({ ...envelope, padding: 'x'.repeat(8192) })), subject],
      [
        'secret-like',
        raw(JSON.stringify({ ...envelope, data: { ...envelope.data, token: 'hunter2' } })),
        subject,
      ],
    ];
    for (const [, payload, on] of poison) await connection.js.publish(on, payload, { headers });
    await publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(7));

    const letters = await deadLetters(topology, poison.length);
    expect(letters.map((l) => l.record.reason)).toEqual(poison.map(([reason]) => reason));
    letters.forEach((letter, i) => {
      const [reason, payload, on] = poison[i]!;
      expect(letter.record.original.subject).toBe(on);
      expect(letter.record.original.headers['Trace-Id']).toEqual(['abc']);
      if (reason === 'secret-like') {
        expect(letter.record.original.payloadEncoding).toBe('omitted');
        expect(JSON.stringify(letter.record)).not.toContain('hunter2');
      } else {
        expect(deadLetterPayload(letter.record)).toEqual(payload);
      }
    });
    expect(letters[1]?.record.original.payloadEncoding).toBe('base64');
    await eventually(() => handled.includes('demo-7'), 'the good event after the bad ones');
    expect(handled).toEqual(['demo-7']);
  });

  it('survives handlers that throw anything, synchronously or not', async () => {
    const { topology, publisher } = await setup('throwers');
    const seen: number[] = [];
    await startConsumer(
      connection,
      { durable: 'svc', topology, maxDeliveries: 2, concurrency: 4 },
      (event) => {
        const index = Number(event.data.object.name.split('-')[1]);
        seen.push(index);
        if (index % 3 === 0) throw 'a string, not an Error';
        if (index % 3 === 1) return Promise.reject(new TypeError('undefined is not a function'));
        return undefined;
      },
    );
    await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(100 + i)),
      ),
    );
    const letters = await deadLetters(topology, 6);
    expect(letters.every((l) => l.record.reason === 'max-deliveries')).toBe(true);
    expect(new Set(seen).size).toBe(9);
  });

  it('restarts its consume loop and recreates a durable deleted under it', async () => {
    const { topology, publisher } = await setup('recreate');
    const handled: string[] = [];
    await startConsumer(
      connection,
      { durable: 'svc', topology, restartDelayMs: 50, idleHeartbeatMs: 1000 },
      (event) => {
        handled.push(event.data.object.name);
      },
    );
    await publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(1));
    await eventually(() => handled.length === 1, 'the first event');
    const jsm = await connection.jsm();
    await jsm.consumers.delete(topology.stream, 'svc');
    await eventually(
      async () => (await jsm.consumers.info(topology.stream, 'svc').catch(() => undefined)) !== undefined,
      'the durable to come back',
    );
    await publisher.publish('bootstrap.data-secret-created', distinctDataSecretCreated(2));
    await eventually(() => handled.includes('demo-2'), 'an event after the durable came back');
  });
});
