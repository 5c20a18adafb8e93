import { type JetStreamManager } from '@nats-io/jetstream';
import { parseDeadLetter, type DeadLetterRecord } from './dead-letter.js';
import { streamInfo } from '../streams/provision-streams.js';

export interface StoredDeadLetter {
  /** Sequence in the dead-letter stream. */
  seq: number;
  subject: string;
  record: DeadLetterRecord;
}

/**
 * Reads dead letters without consuming them (direct stream reads by sequence), oldest first. For
 * operators' tools (`capstan events --dead-letters`) and tests.
 */
export async function readDeadLetters(
  jsm: JetStreamManager,
  deadLetterStream: string,
  options: { fromSeq?: number; limit?: number } = {},
): Promise<StoredDeadLetter[]> {
  const info = await streamInfo(jsm, deadLetterStream);
  if (!info || info.state.messages === 0) return [];
  const letters: StoredDeadLetter[] = [];
  const limit = options.limit ?? 100;
  for (
    let seq = Math.max(options.fromSeq ?? 1, info.state.first_seq);
    seq <= info.state.last_seq && letters.length < limit;
    seq++
  ) {
    const stored = await jsm.streams.getMessage(deadLetterStream, { seq }).catch(() => null);
    if (stored)
      letters.push({ seq: stored.seq, subject: stored.subject, record: parseDeadLetter(stored.data) });
  }
  return letters;
}
