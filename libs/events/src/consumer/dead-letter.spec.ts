import { headers } from '@nats-io/transport-node';
import { buildDeadLetter, deadLetterPayload, parseDeadLetter, type DeliveredMessage } from './dead-letter.js';
import { redeliveryDelay } from './redelivery-backoff.js';

const message = (data: Uint8Array): DeliveredMessage => {
  const h = headers();
  h.set('Nats-Msg-Id', 'u:1:provisioned');
  return {
    subject: 'capstan.handoff.simmachine.default.m-1.provisioned',
    data,
    headers: h,
    info: {
      stream: 'CAPSTAN',
      streamSequence: 42,
      deliveryCount: 3,
      timestampNanos: Date.parse('2026-11-21T10:00:00Z') * 1e6,
    },
  };
};
const options = { consumer: 'core', root: 'capstan', now: new Date('2026-11-21T10:00:05Z') };

describe('dead letters', () => {
  it('carries reason, original subject, headers and the payload as text', () => {
    const payload = new TextEncoder().encode('{"oops":');
    const letter = buildDeadLetter(message(payload), 'not-json', 'payload is not UTF-8 JSON', options);
    expect(letter.subject).toBe('capstan.dlq.handoff.simmachine.default.m-1.provisioned');
    expect(letter.msgId).toBe('dlq:CAPSTAN:42');
    expect(letter.headers).toEqual({
      'Capstan-Dead-Letter-Reason': 'not-json',
      'Capstan-Original-Subject': 'capstan.handoff.simmachine.default.m-1.provisioned',
      'Capstan-Original-Stream-Sequence': '42',
      'Capstan-Consumer': 'core',
    });
    expect(parseDeadLetter(letter.body)).toEqual({
      reason: 'not-json',
      detail: 'payload is not UTF-8 JSON',
      consumer: 'core',
      deadLetteredAt: '2026-11-21T10:00:05.000Z',
      original: {
        subject: 'capstan.handoff.simmachine.default.m-1.provisioned',
        stream: 'CAPSTAN',
        streamSequence: 42,
        deliveryCount: 3,
        publishedAt: '2026-11-21T10:00:00.000Z',
        headers: { 'Nats-Msg-Id': ['u:1:provisioned'] },
        payloadEncoding: 'utf8',
        payload: '{"oops":',
        payloadBytes: 8,
        payloadTruncated: false,
      },
    });
  });

  it('base64-encodes a payload that is not UTF-8 and reads it back', () => {
    const payload = new Uint8Array([0xff, 0x00, 0xc3, 0x28]);
    const record = buildDeadLetter(message(payload), 'not-json', 'x', options).record;
    expect(record.original.payloadEncoding).toBe('base64');
    expect(deadLetterPayload(record)).toEqual(payload);
  });

  it('truncates a huge payload so the dead letter stays publishable', () => {
    const payload = new TextEncoder().encode('x'.repeat(1000));
    const record = buildDeadLetter(message(payload), 'oversized', 'x', {
      ...options,
      maxPayloadBytes: 100,
    }).record;
    expect(record.original).toMatchObject({
      payloadBytes: 1000,
      payloadTruncated: true,
      payload: 'x'.repeat(100),
    });
  });

  it('omits a payload that looks like it holds a secret', () => {
    const payload = new TextEncoder().encode('{"token":"hunter2"}');
    const letter = buildDeadLetter(
      message(payload),
      'secret-like',
      'data.token looks like a secret',
      options,
    );
    expect(letter.record.original).toMatchObject({
      payloadEncoding: 'omitted',
      payloadBytes: 19,
      payloadTruncated: false,
    });
    expect(new TextDecoder().decode(letter.body)).not.toContain('hunter2');
    expect(deadLetterPayload(letter.record)).toEqual(new Uint8Array());
  });
});

describe('redelivery backoff', () => {
  const noJitter = () => 0;
  it('doubles per delivery up to the cap', () => {
    const backoff = { initialMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 50].map((n) => redeliveryDelay(n, backoff, noJitter))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });

  it('takes off at most 20% as jitter', () => {
    expect(redeliveryDelay(1, { initialMs: 1000, maxMs: 1000 }, () => 1)).toBe(800);
  });
});
