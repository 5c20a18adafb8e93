import {
  Controller,
  Injectable,
  Module,
  type INestApplication,
  type INestMicroservice,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { testNatsUrl } from '@capstan/testing';
import { Registry } from 'prom-client';
import { lastValueFrom } from 'rxjs';
import { dataSecretCreated, distinctDataSecretCreated, eventually } from '../../test/fixtures.js';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { readDeadLetters } from '../consumer/dead-letter-reader.js';
import { isEventOf, type CapstanEvent } from '../envelope/cloud-event.js';
import { PublishError } from '../errors.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { type EventTopology } from '../streams/event-topology.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { CloudEventValidationPipe } from './cloud-event-validation.pipe.js';
import { EventBusHealthIndicator } from './event-bus.health.js';
import { EventsModule, jetStreamStrategyFor } from './events.module.js';
import { JetStreamClientProxy } from './jetstream.client.js';
import { JetStreamContext } from './jetstream.context.js';
import { JetStreamEventPattern, JetStreamTransportStrategy } from './jetstream.strategy.js';
import { UnprocessableEventException } from './unprocessable-event.exception.js';

// Patterns are fixed when the controller class is declared, so the topology is chosen first.
const topology = uniqueEventTopology('nest');
const clusterCreatedType = 'dev.capstan.lifecycle.cluster.created';

async function deleteStreams(of: EventTopology): Promise<void> {
  const connection = await EventBusConnection.connect({ servers: testNatsUrl() });
  const jsm = await connection.jsm();
  for (const name of [of.stream, of.deadLetterStream]) await jsm.streams.delete(name).catch(() => undefined);
  await connection.close();
}

interface Received {
  handler: string;
  event: CapstanEvent;
  subject: string;
  deliveryCount: number;
}

@Injectable()
class Inbox {
  readonly received: Received[] = [];
}

@Controller()
class HandoffController {
  constructor(private readonly inbox: Inbox) {}

  @JetStreamEventPattern(`${topology.root}.handoff.>`)
  onHandoff(
    @Payload(new CloudEventValidationPipe(['bootstrap.data-secret-created']))
    event: CapstanEvent<'bootstrap.data-secret-created'>,
    @Ctx() context: JetStreamContext,
  ): void {
    if (event.data.object.name === 'refuse-me')
      throw new UnprocessableEventException('this object is not ours');
    this.inbox.received.push({
      handler: 'handoff',
      event,
      subject: context.getSubject(),
      deliveryCount: context.getDeliveryCount(),
    });
  }

  @EventPattern<string>(clusterCreatedType)
  async onClusterCreated(
    @Payload() event: CapstanEvent<'cluster.created'>,
    @Ctx() context: JetStreamContext,
  ): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1));
    this.inbox.received.push({
      handler: 'cluster',
      event,
      subject: context.getSubject(),
      deliveryCount: context.getDeliveryCount(),
    });
  }
}

@Module({ controllers: [HandoffController], providers: [Inbox] })
class HandoffModule {}

const clusterCreated = () => ({
  object: { apiGroup: 'cluster.x-k8s.io', kind: 'Cluster', namespace: 'default', name: 'demo', uid: 'c-1' },
  generation: 1,
  resourceVersion: '10',
  clusterName: 'demo',
  phase: 'Pending' as const,
  infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name: 'demo' },
});

describe('NestJS JetStream transport', () => {
  let microservice: INestMicroservice;
  let client: JetStreamClientProxy;
  let inbox: Inbox;

  beforeAll(async () => {
    microservice = await NestFactory.createMicroservice(HandoffModule, {
      strategy: new JetStreamTransportStrategy({
        connection: { servers: testNatsUrl(), name: 'nest-microservice' },
        topology,
        consumer: { durable: 'nest-test', redeliveryBackoff: { initialMs: 50, maxMs: 100 } },
      }),
      logger: false,
    });
    await microservice.listen();
    inbox = microservice.get(Inbox);
    client = new JetStreamClientProxy({
      connection: { servers: testNatsUrl(), name: 'nest-client' },
      source: '/capstan/test',
      topology,
    });
  });

  afterAll(async () => {
    await client.close();
    await microservice.close();
    await deleteStreams(topology);
  });

  it('delivers an emitted event to the @EventPattern handler whose wildcard matches', async () => {
    const result = await lastValueFrom(client.emit('bootstrap.data-secret-created', dataSecretCreated()));
    const received = await eventually(
      () => inbox.received.find((r) => r.event.id === result.msgId),
      'the hand-off event',
    );
    expect(received).toMatchObject({ handler: 'handoff', subject: result.subject, deliveryCount: 1 });
    expect(
      isEventOf(received.event, 'bootstrap.data-secret-created') && received.event.data.dataSecretName,
    ).toBe('demo-md-0-x7k2p');
  });

  it('routes by CloudEvents type too', async () => {
    const result = await client.publishEvent('cluster.created', clusterCreated());
    const received = await eventually(
      () => inbox.received.find((r) => r.event.id === result.msgId),
      'the lifecycle event',
    );
    expect(received.handler).toBe('cluster');
    expect(isEventOf(received.event, 'cluster.created') && received.event.data.infrastructureRef?.kind).toBe(
      'SimCluster',
    );
  });

  it('dead-letters what the pipe or the handler refuses, and keeps serving', async () => {
    const connection = client.unwrap<EventBusConnection>();
    const refused = await client.publishEvent(
      'bootstrap.data-secret-created',
      dataSecretCreated({ object: { ...dataSecretCreated().object, name: 'refuse-me', uid: 'r-1' } }),
    );
    const wrongType = await client.publishEvent('infrastructure-cluster.deleted', {
      object: {
        apiGroup: 'infrastructure.capstan.dev',
        kind: 'SimCluster',
        namespace: 'default',
        name: 'demo',
        uid: 's-1',
      },
      generation: 2,
      resourceVersion: '11',
      clusterName: 'demo',
    });
    const letters = await eventually(async () => {
      const all = await readDeadLetters(await connection.jsm(), topology.deadLetterStream);
      return all.length === 2 && all;
    }, 'two dead letters');
    expect(letters.map((l) => [l.record.reason, l.record.original.subject])).toEqual([
      ['unprocessable', refused.subject],
      ['unprocessable', wrongType.subject],
    ]);
    expect(letters[1]?.record.detail).toContain('not accepted here');
    const after = await client.publishEvent('bootstrap.data-secret-created', distinctDataSecretCreated(5));
    await eventually(
      () => inbox.received.some((r) => r.event.id === after.msgId),
      'an event after the refused ones',
    );
  });

  it('emit errors with PublishError when the stream does not store the event', async () => {
    const nowhere = new JetStreamClientProxy({
      connection: client.unwrap<EventBusConnection>(),
      source: '/capstan/test',
      topology: uniqueEventTopology('nowhere'),
      timeoutMs: 1000,
    });
    await expect(
      lastValueFrom(nowhere.emit('bootstrap.data-secret-created', dataSecretCreated())),
    ).rejects.toBeInstanceOf(PublishError);
    await expect(lastValueFrom(nowhere.send('bootstrap.data-secret-created', {}))).rejects.toThrow(
      /not supported/,
    );
  });
});

describe('EventsModule in a hybrid application', () => {
  const hybridTopology = uniqueEventTopology('hybrid');
  const registry = new Registry();
  let app: INestApplication;

  @Controller()
  class CountingController {
    static handled = 0;

    @JetStreamEventPattern(`${hybridTopology.root}.>`)
    onAnything(): void {
      CountingController.handled++;
    }
  }

  @Module({
    imports: [
      EventsModule.forRoot({
        connection: { servers: testNatsUrl() },
        source: '/capstan/test',
        topology: hybridTopology,
        registry,
      }),
    ],
    controllers: [CountingController],
  })
  class HybridModule {}

  beforeAll(async () => {
    app = await NestFactory.create(HybridModule, { logger: false });
    app.connectMicroservice(
      { strategy: jetStreamStrategyFor(app, { durable: 'hybrid' }) },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
    await app.init();
  });

  afterAll(async () => {
    await app.close();
    await deleteStreams(hybridTopology);
  });

  it('publishes through the injected EventPublisher, consumes, reports health and metrics', async () => {
    const publisher = app.get(EventPublisher);
    await publisher.publish('bootstrap.data-secret-created', dataSecretCreated());
    await eventually(() => CountingController.handled === 1, 'the event');
    await expect(app.get(EventBusHealthIndicator).isHealthy('nats')).resolves.toMatchObject({
      nats: { status: 'up', stream: hybridTopology.stream, state: 'connected', messages: 1 },
    });
    const metrics = await registry.metrics();
    expect(metrics).toContain(
      'capstan_events_published_total{type="dev.capstan.handoff.bootstrap.data-secret-created",outcome="published"} 1',
    );
    expect(metrics).toContain(
      'capstan_events_consumed_total{consumer="hybrid",type="dev.capstan.handoff.bootstrap.data-secret-created",outcome="acked"} 1',
    );
    expect(metrics).toMatch(
      /capstan_event_handler_duration_seconds_count\{consumer="hybrid",type="[^"]+"\} 1/,
    );
  });
});
