import type { DeadLetterRecord } from '@capstan/events';
import { analyseDeadLetters, type Published, type StoredLetter } from './dead-letters.js';

const letter = (
  seq: number,
  originalSeq: number,
  reason: DeadLetterRecord['reason'],
  stream = 'S',
  detail = 'why',
): StoredLetter => ({
  seq,
  subject: 'r.dlq.x',
  record: {
    reason,
    detail,
    consumer: 'core-abc',
    deadLetteredAt: '',
    original: {
      subject: 'r.handoff.x',
      stream,
      streamSequence: originalSeq,
      deliveryCount: 1,
      publishedAt: '',
      headers: {},
      payloadEncoding: 'utf8',
      payloadBytes: 1,
      payloadTruncated: false,
    },
  },
});

const published = (
  seq: number | undefined,
  expect: Published['expect'],
  detail = 'd',
  publishError?: string,
): Published => ({
  category: 'truncated-json',
  detail,
  subject: 'r.handoff.x',
  bytes: 1,
  expect,
  seq,
  publishError,
});

describe('dead-letter analysis', () => {
  it('matches dead letters to what was published, by original stream sequence', () => {
    const analysis = analyseDeadLetters(
      [
        published(1, { outcome: 'dead-letter', reason: 'not-json' }),
        published(2, { outcome: 'dead-letter', reason: 'validation-failed' }, 'delete data.object'),
        published(3, { outcome: 'dead-letter', reason: 'not-json' }),
        published(4, { outcome: 'unconsumed' }),
        published(undefined, { outcome: 'refused', why: 'no stream captures the subject' }, 'd', '503'),
      ],
      [
        letter(1, 1, 'not-json'),
        letter(2, 1, 'not-json'),
        letter(3, 2, 'max-deliveries'),
        letter(4, 99, 'max-deliveries'),
        letter(5, 3, 'not-json', 'OTHER'),
      ],
      'S',
    );
    expect(analysis).toMatchObject({
      published: 5,
      delivered: 3,
      deadLettered: 2,
      deadLetteredWithExpectedReason: 1,
      notDeadLettered: 1,
      refusedByServer: 1,
      storedUnconsumed: 1,
      duplicated: 1,
      withoutReason: 0,
    });
    // Sequence 99 was never published by the suite; sequence 3 of another stream is not ours either.
    expect(analysis.notFromMalformedInput.map((l) => l.seq)).toEqual([4, 5]);
    expect(analysis.rows.find((r) => r.detail === 'delete data.object')).toMatchObject({
      outcome: 'dead-lettered-other-reason',
      got: { 'max-deliveries': 1 },
    });
  });

  it('counts a dead letter without a detail', () => {
    expect(
      analyseDeadLetters(
        [published(1, { outcome: 'dead-letter', reason: 'not-json' })],
        [letter(1, 1, 'not-json', 'S', '')],
        'S',
      ).withoutReason,
    ).toBe(1);
  });
});
