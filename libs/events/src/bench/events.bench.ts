// `npm run bench:events`: publisher -> stream -> durable consumer -> handler on a private nats-server
// (or CAPSTAN_BENCH_NATS_URL). Reports publish-to-handler latency and messages per second.
//   --messages N      messages in the throughput run (default 20000)
//   --in-flight N     publishes awaiting their ack at once in the throughput run (default 256)
//   --latency N       messages in the latency run, one at a time (default 2000)
//   --rate N          messages per second in the paced run (default 2000), 10000 messages
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { EventBusConnection } from '../connection/event-bus-connection.js';
import { EventConsumer } from '../consumer/event-consumer.js';
import { type EventDataOf } from '../envelope/catalogue.js';
import { EventPublisher } from '../publisher/event-publisher.js';
import { provisionEventStreams } from '../streams/provision-streams.js';
import { uniqueEventTopology } from '../streams/unique-topology.js';
import { type EventTopology } from '../streams/event-topology.js';
import { PrivateNatsServer } from '../testing/private-nats-server.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    'in-flight': { type: 'string', default: '256' },
    latency: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '2000' },
  },
});
const pacedRate = Number(values.rate);
const throughputMessages = Number(values.messages);
const inFlight = Number(values['in-flight']);
const latencyMessages = Number(values.latency);

function eventData(run: string, index: number): EventDataOf<'infrastructure-machine.provisioned'> {
  return {
    object: {
      apiGroup: 'infrastructure.capstan.dev',
      kind: 'SimMachine',
      namespace: 'bench',
      name: `${run}-machine-${index}`,
      uid: `${run}-${index.toString(16).padStart(12, '0')}`,
    },
    generation: 1,
    resourceVersion: String(index + 1),
    clusterName: 'bench',
    machineName: `${run}-machine-${index}`,
    providerID: `sim://bench/${run}-machine-${index}`,
    addresses: [{ type: 'InternalIP', address: `10.0.${Math.floor(index / 250) % 250}.${index % 250}` }],
  };
}

/** How publishing is driven: one at a time, a window of unacknowledged publishes, or a fixed rate. */
type Pace = { window: number } | { perSecond: number };

interface RunResult {
  run: string;
  pace: string;
  messages: number;
  seconds: number;
  perSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Publishes `count` events at the given pace and waits until the handler saw all of them. */
async function run(
  name: string,
  connection: EventBusConnection,
  topology: EventTopology,
  count: number,
  pace: Pace,
): Promise<RunResult> {
  const publisher = new EventPublisher(connection, { source: '/capstan/bench', topology });
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let handled = 0;
  let allHandled!: () => void;
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  let nextHandled: (() => void) | undefined;
  const consumer = new EventConsumer(
    connection,
    // Each run has its own durable, starting after the earlier runs' messages.
    { durable: `bench-${name}`, topology, batchSize: 256, deliverPolicy: 'new' },
    (event) => {
      // What a service's handler does: note the key; here, measure how long the event took to arrive.
      const started = sentAt.get(event.id);
      if (started === undefined) return;
      sentAt.delete(event.id);
      latencies.push(performance.now() - started);
      handled++;
      nextHandled?.();
      if (handled === count) allHandled();
    },
  );
  await consumer.start();
  let index = 0;
  const publishNext = async () => {
    const data = eventData(name, index++);
    sentAt.set(`${data.object.uid}:${data.resourceVersion}:provisioned`, performance.now());
    await publisher.publish('infrastructure-machine.provisioned', data);
  };
  const begin = performance.now();
  if ('window' in pace) {
    const worker = async () => {
      while (index < count) {
        const handledOne =
          pace.window === 1 ? new Promise<void>((resolve) => (nextHandled = resolve)) : undefined;
        await publishNext();
        await handledOne;
      }
    };
    await Promise.all(Array.from({ length: pace.window }, worker));
  } else {
    // Every 10 ms, publish what the rate allows since the start: a steady load below saturation.
    const pending: Promise<void>[] = [];
    while (index < count) {
      const due = Math.min(count, Math.floor(((performance.now() - begin) / 1000) * pace.perSecond));
      while (index < due) pending.push(publishNext());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(pending);
  }
  await done;
  const seconds = (performance.now() - begin) / 1000;
  await consumer.stop();
  const sorted = latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    run: name,
    pace: 'window' in pace ? `${pace.window} in flight` : `${pace.perSecond}/s`,
    messages: count,
    seconds: round(seconds),
    perSecond: Math.round(count / seconds),
    latencyMs: {
      p50: round(percentile(sorted, 50)),
      p90: round(percentile(sorted, 90)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.at(-1) ?? NaN),
    },
  };
}

async function main(): Promise<void> {
  const given = process.env['CAPSTAN_BENCH_NATS_URL'];
  const server = given ? { url: given, remove: async () => undefined } : await PrivateNatsServer.start();
  const connection = await EventBusConnection.connect({ servers: server.url, name: 'events-bench' });
  const topology = uniqueEventTopology('bench');
  try {
    await provisionEventStreams(await connection.jsm(), { topology });
    const version = connection.serverVersion;
    const results = [
      await run('sequential', connection, topology, latencyMessages, { window: 1 }),
      await run('paced', connection, topology, 10_000, { perSecond: pacedRate }),
      await run('saturated', connection, topology, throughputMessages, { window: inFlight }),
    ];
    const lines = [
      `events bench: nats-server ${version}, file storage, 1 replica; Node ${process.versions.node}; ${cpus().length} CPUs`,
      '| run | publishing | messages | seconds | messages/s | p50 ms | p90 ms | p99 ms | max ms |',
      '|---|---|---|---|---|---|---|---|---|',
      ...results.map(
        (r) =>
          `| ${r.run} | ${r.pace} | ${r.messages} | ${r.seconds} | ${r.perSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p90} | ${r.latencyMs.p99} | ${r.latencyMs.max} |`,
      ),
    ];
    process.stdout.write(
      `${lines.join('\n')}\n${JSON.stringify({ bench: 'events', nats: version, results })}\n`,
    );
  } finally {
    const jsm = await connection.jsm();
    for (const name of [topology.stream, topology.deadLetterStream])
      await jsm.streams.delete(name).catch(() => undefined);
    await connection.close();
    await server.remove();
  }
}

await main();
