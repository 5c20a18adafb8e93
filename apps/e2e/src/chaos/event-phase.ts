// The malformed-event phase: publishes every malformed event on the real stream, waits until every service
// replica's durable consumer has taken all of them, then reads the whole dead-letter stream and matches it.
import { jetstream, jetstreamManager, type ConsumerInfo } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import {
  analyseDeadLetters,
  readAllDeadLetters,
  type DeadLetterAnalysis,
  type Published,
} from './dead-letters.js';
import { malformedEvents, type EventTarget } from './malformed-events.js';
import type { Random } from './random.js';

export interface EventPhaseOptions {
  natsUrl: string;
  stream: string;
  deadLetterStream: string;
  root: string;
  namespace: string;
  perSubject: number;
  fakeSecretPem: string;
  random: Random;
  log: (line: string) => void;
  drainTimeoutMs?: number;
}

export interface EventPhaseResult {
  analysis: DeadLetterAnalysis;
  subjects: number;
  publishSeconds: number;
  drainSeconds: number;
  drained: boolean;
  consumers: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The dead letters already stored (before any malformed input): every one is a failure. */
export async function deadLettersSoFar(
  natsUrl: string,
  stream: string,
  deadLetterStream: string,
): Promise<DeadLetterAnalysis['notFromMalformedInput']> {
  const nc = await connect({ servers: natsUrl, timeout: 5_000 });
  try {
    const letters = await readAllDeadLetters(jetstream(nc), await jetstreamManager(nc), deadLetterStream);
    return analyseDeadLetters([], letters, stream).notFromMalformedInput;
  } finally {
    await nc.close();
  }
}

export async function runMalformedEvents(options: EventPhaseOptions): Promise<EventPhaseResult> {
  const nc = await connect({ servers: options.natsUrl, timeout: 5_000 });
  try {
    const js = jetstream(nc, { timeout: 10_000 });
    const jsm = await jetstreamManager(nc);
    const streamInfo = await jsm.streams.info(options.stream);
    const consumers: ConsumerInfo[] = [];
    for await (const info of jsm.consumers.list(options.stream)) consumers.push(info);
    const filters = consumers.flatMap(
      (c) => c.config.filter_subjects ?? (c.config.filter_subject ? [c.config.filter_subject] : []),
    );
    options.log(
      `malformed events: ${consumers.length} durable consumers on ${options.stream} (${[...new Set(filters)].join(', ')})`,
    );
    const target: EventTarget = {
      root: options.root,
      namespace: options.namespace,
      consumerFilters: filters,
      streamSubjects: streamInfo.config.subjects ?? [],
      fakeSecretPem: options.fakeSecretPem,
    };

    const published: Published[] = [];
    const started = performance.now();
    const inFlight = new Set<Promise<void>>();
    const subjects = new Set<string>();
    for (const event of malformedEvents(target, options.perSubject, options.random)) {
      subjects.add(event.event);
      const record: Published = {
        category: event.category,
        detail: event.detail,
        subject: event.subject,
        bytes: event.payload.byteLength,
        expect: event.expect,
      };
      published.push(record);
      const publishing = js
        .publish(event.subject, event.payload)
        .then(
          (ack) => void (record.seq = ack.seq),
          (error: unknown) => void (record.publishError = (error as Error).message || String(error)),
        )
        .finally(() => inFlight.delete(publishing));
      inFlight.add(publishing);
      if (inFlight.size >= 64) await Promise.race(inFlight);
      if (published.length % 5000 === 0) options.log(`malformed events: ${published.length} published`);
    }
    await Promise.all(inFlight);
    const publishSeconds = (performance.now() - started) / 1000;
    options.log(
      `malformed events: ${published.length} published in ${publishSeconds.toFixed(1)} s (${published.filter((p) => p.seq === undefined).length} refused by the server)`,
    );

    // Every replica has its own durable (sharded): all must have taken (acked, retried to the end, or dead-lettered) all.
    const drainStarted = performance.now();
    const deadline = drainStarted + (options.drainTimeoutMs ?? 10 * 60_000);
    let drained = false;
    let quiet = 0;
    while (performance.now() < deadline) {
      const infos = await Promise.all(
        consumers.map((c) => jsm.consumers.info(options.stream, c.name).catch(() => undefined)),
      );
      const outstanding = infos.reduce((sum, i) => sum + (i ? i.num_pending + i.num_ack_pending : 0), 0);
      if (outstanding === 0) {
        if (++quiet >= 2) {
          drained = true;
          break;
        }
      } else quiet = 0;
      await sleep(2_000);
    }
    const drainSeconds = (performance.now() - drainStarted) / 1000;
    options.log(
      `malformed events: consumers ${drained ? 'drained' : 'NOT drained'} after ${drainSeconds.toFixed(1)} s`,
    );
    // Dead letters are written before the original is terminated: once drained, all are stored.
    const letters = await readAllDeadLetters(js, jsm, options.deadLetterStream);
    return {
      analysis: analyseDeadLetters(published, letters, options.stream),
      subjects: subjects.size,
      publishSeconds,
      drainSeconds,
      drained,
      consumers: consumers.map(
        (c) => `${c.name} (${c.config.filter_subject ?? (c.config.filter_subjects ?? []).join(',')})`,
      ),
    };
  } finally {
    await nc.close();
  }
}
