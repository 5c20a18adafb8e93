import { Command, Option } from 'commander';
import { eventTopology, EVENT_SOURCES, type EventSource } from '@capstan/events';
import { durationMs } from '../duration.js';
import { formatEvent, tailEvents } from '../events/tail-events.js';
import { type Output } from '../output.js';
import { connectEventBus } from '../runtime/event-bus.js';
import { NATS_URL_DEFAULTS, resolveNatsTarget } from '../runtime/local-env.js';

export function eventsCommand(output: Output): Command {
  return new Command('events')
    .description('Follow Capstan lifecycle events from the event bus (NATS JetStream)')
    .option('--cluster <name>', 'only events of this cluster')
    .option('--kind <kind>', 'only events about this kind (e.g. Machine, Cluster)')
    .option('-n, --namespace <namespace>', 'only events of objects in this namespace')
    .addOption(new Option('--source <source>', 'lifecycle (core), handoff (providers) or all').choices([...EVENT_SOURCES, 'all']).default('lifecycle'))
    .option('--since <duration>', 'also print events of this long ago (30s, 10m, 2h)', durationMs)
    // No commander default: the URL is resolved when the command runs, so its origin is known for errors.
    .option('--nats-url <url>', `NATS server ${NATS_URL_DEFAULTS}`)
    .option('--stream-name <name>', 'event stream', 'CAPSTAN')
    .option('--subject-root <token>', 'first subject token', 'capstan')
    .addOption(new Option('-o, --output <format>', 'print each event as a JSON line').choices(['json']))
    .addHelpText('after', '\nExamples:\n  capstan events --cluster demo\n  capstan events --kind Machine --since 10m\n  capstan events --source all -o json')
    .action(
      async (opts: {
        cluster?: string;
        kind?: string;
        namespace?: string;
        source: EventSource | 'all';
        since?: number;
        natsUrl?: string;
        streamName: string;
        subjectRoot: string;
        output?: 'json';
      }) => {
        const connection = await connectEventBus(resolveNatsTarget(opts.natsUrl), { name: 'capstan-cli', stream: opts.streamName });
        const abort = new AbortController();
        const stop = () => abort.abort();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        try {
          await tailEvents({
            connection,
            topology: eventTopology({ root: opts.subjectRoot, stream: opts.streamName, deadLetterStream: `${opts.streamName}_DLQ` }),
            filter: { source: opts.source === 'all' ? undefined : opts.source, kind: opts.kind, namespace: opts.namespace, cluster: opts.cluster },
            since: opts.since ? new Date(Date.now() - opts.since) : undefined,
            onEvent: (event) => output.line(opts.output === 'json' ? JSON.stringify(event) : formatEvent(event)),
            onInvalid: (subject, reason) => output.error(`skipped an invalid message on ${subject}: ${reason}`),
            signal: abort.signal,
          });
        } finally {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          await connection.close();
        }
      },
    );
}
