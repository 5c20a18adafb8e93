// Dead letters: reading the whole dead-letter stream, and matching it against what the suite published. Every
// dead letter must come from malformed input the suite published (by the original stream sequence it names); every
// malformed event the consumers receive must be dead-lettered with a reason.
import { type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { parseDeadLetter, type DeadLetterRecord } from '@capstan/events';
import type { Expectation, MalformedCategory } from './malformed-events.js';

export interface StoredLetter {
  seq: number;
  subject: string;
  record?: DeadLetterRecord;
  /** The body was not a dead-letter record (someone published straight to the dead-letter subjects). */
  unparsable?: boolean;
}

/** Reads every message of `stream` with an ordered consumer (fast for tens of thousands). */
export async function readAllDeadLetters(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
): Promise<StoredLetter[]> {
  const info = await jsm.streams.info(stream);
  if (info.state.messages === 0) return [];
  const last = info.state.last_seq;
  const consumer = await js.consumers.get(stream);
  const letters: StoredLetter[] = [];
  let seq = 0;
  while (seq < last) {
    const batch = await consumer.fetch({ max_messages: 1000, expires: 3000 });
    let got = 0;
    for await (const message of batch) {
      got++;
      seq = message.seq;
      try {
        letters.push({ seq: message.seq, subject: message.subject, record: parseDeadLetter(message.data) });
      } catch {
        letters.push({ seq: message.seq, subject: message.subject, unparsable: true });
      }
      if (seq >= last) break;
    }
    if (got === 0) break;
  }
  return letters;
}

/** What the suite did with one malformed event. */
export interface Published {
  category: MalformedCategory;
  detail: string;
  subject: string;
  bytes: number;
  expect: Expectation;
  /** Stream sequence the server acknowledged; absent when the publish failed. */
  seq?: number;
  publishError?: string;
}

export type Outcome =
  | 'dead-lettered'
  | 'dead-lettered-other-reason'
  | 'not-dead-lettered'
  | 'refused-by-server'
  | 'stored-unconsumed'
  | 'stored-not-refused'
  | 'refused-unexpectedly';

export interface OutcomeRow {
  category: MalformedCategory;
  detail: string;
  expected: string;
  outcome: Outcome;
  /** The dead letters' reasons (or the publish error), with counts. */
  got: Record<string, number>;
  count: number;
}

export interface DeadLetterAnalysis {
  published: number;
  /** Malformed events the consumers received (their subject is in a consumer's filter) and the server stored. */
  delivered: number;
  deadLettered: number;
  deadLetteredWithExpectedReason: number;
  notDeadLettered: number;
  refusedByServer: number;
  storedUnconsumed: number;
  rows: OutcomeRow[];
  /** Dead letters naming no message the suite published: a failure. */
  notFromMalformedInput: {
    seq: number;
    subject: string;
    reason?: string;
    detail?: string;
    consumer?: string;
    originalSubject?: string;
  }[];
  /** Dead letters whose detail is empty: a failure ("dead-lettered with a reason"). */
  withoutReason: number;
  /** Original sequences dead-lettered more than once (the dead-letter stream deduplicates by sequence). */
  duplicated: number;
}

const expectedLabel = (e: Expectation) =>
  e.outcome === 'dead-letter'
    ? `dead-letter (${e.reason})`
    : e.outcome === 'refused'
      ? `refused (${e.why})`
      : 'stored, no consumer';

export function analyseDeadLetters(
  published: Published[],
  letters: StoredLetter[],
  eventStream: string,
): DeadLetterAnalysis {
  const bySeq = new Map<number, StoredLetter[]>();
  const notFromMalformedInput: DeadLetterAnalysis['notFromMalformedInput'] = [];
  const ours = new Set(published.flatMap((p) => (p.seq === undefined ? [] : [p.seq])));
  let withoutReason = 0;
  for (const letter of letters) {
    const original = letter.record?.original;
    if (
      !letter.record ||
      !original ||
      original.stream !== eventStream ||
      !ours.has(original.streamSequence)
    ) {
      notFromMalformedInput.push({
        seq: letter.seq,
        subject: letter.subject,
        reason: letter.record?.reason,
        detail: letter.record?.detail,
        consumer: letter.record?.consumer,
        originalSubject: original?.subject,
      });
      continue;
    }
    if (!letter.record.reason || !letter.record.detail) withoutReason++;
    bySeq.set(original.streamSequence, [...(bySeq.get(original.streamSequence) ?? []), letter]);
  }
  const rows = new Map<string, OutcomeRow>();
  const add = (p: Published, outcome: Outcome, got: string) => {
    const key = `${p.category}\u0000${p.detail}\u0000${outcome}`;
    const row = rows.get(key) ?? {
      category: p.category,
      detail: p.detail,
      expected: expectedLabel(p.expect),
      outcome,
      got: {},
      count: 0,
    };
    row.count++;
    row.got[got] = (row.got[got] ?? 0) + 1;
    rows.set(key, row);
  };
  let delivered = 0;
  let deadLettered = 0;
  let withExpected = 0;
  let notDeadLettered = 0;
  let refusedByServer = 0;
  let storedUnconsumed = 0;
  for (const p of published) {
    if (p.seq === undefined) {
      refusedByServer++;
      add(
        p,
        p.expect.outcome === 'refused' ? 'refused-by-server' : 'refused-unexpectedly',
        p.publishError ?? 'publish failed',
      );
      continue;
    }
    const found = bySeq.get(p.seq);
    if (p.expect.outcome === 'unconsumed') {
      if (found) {
        deadLettered++;
        add(p, 'dead-lettered-other-reason', found[0]!.record!.reason);
      } else {
        storedUnconsumed++;
        add(p, 'stored-unconsumed', 'stored, nobody received it');
      }
      continue;
    }
    if (p.expect.outcome === 'refused') {
      add(p, 'stored-not-refused', found ? `stored, dead-lettered (${found[0]!.record!.reason})` : 'stored');
      if (found) deadLettered++;
      continue;
    }
    delivered++;
    if (!found) {
      notDeadLettered++;
      add(p, 'not-dead-lettered', 'no dead letter');
      continue;
    }
    deadLettered++;
    const reason = found[0]!.record!.reason;
    if (reason === p.expect.reason) {
      withExpected++;
      add(p, 'dead-lettered', reason);
    } else add(p, 'dead-lettered-other-reason', reason);
  }
  return {
    published: published.length,
    delivered,
    deadLettered,
    deadLetteredWithExpectedReason: withExpected,
    notDeadLettered,
    refusedByServer,
    storedUnconsumed,
    rows: [...rows.values()].sort(
      (a, b) =>
        a.category.localeCompare(b.category) ||
        a.detail.localeCompare(b.detail) ||
        a.outcome.localeCompare(b.outcome),
    ),
    notFromMalformedInput,
    withoutReason,
    duplicated: [...bySeq.values()].filter((l) => l.length > 1).length,
  };
}
