import { type MsgHdrs } from '@nats-io/transport-node';
import { type InvalidEventReason } from '../errors.js';
import { deadLetterSubject } from '../subjects/dead-letter-subject.js';

/** Why a message ended in the dead letters. */
export type DeadLetterReason = InvalidEventReason | 'max-deliveries' | 'unprocessable';

/** Headers on every dead-letter message, so tools can filter without parsing the body. */
export const DEAD_LETTER_HEADERS = {
  reason: 'Capstan-Dead-Letter-Reason',
  originalSubject: 'Capstan-Original-Subject',
  originalSequence: 'Capstan-Original-Stream-Sequence',
  consumer: 'Capstan-Consumer',
} as const;

/** Dead letters embed at most this much of the original payload, so the dead letter itself stays publishable. */
export const DEFAULT_MAX_DEAD_LETTER_PAYLOAD_BYTES = 256 * 1024;

/** The body of a dead-letter message (JSON). */
export interface DeadLetterRecord {
  reason: DeadLetterReason;
  /** What was wrong, naming fields but never values. */
  detail: string;
  /** The durable consumer that gave up. */
  consumer: string;
  deadLetteredAt: string;
  original: {
    subject: string;
    stream: string;
    streamSequence: number;
    deliveryCount: number;
    /** When the original entered its stream. */
    publishedAt: string;
    headers: Record<string, string[]>;
    /** `utf8`: `payload` is the original text; `base64`: it was not UTF-8; `omitted`: it looked like a secret. */
    payloadEncoding: 'utf8' | 'base64' | 'omitted';
    payload?: string;
    /** Size of the original payload. */
    payloadBytes: number;
    payloadTruncated: boolean;
  };
}

/** The parts of a delivered JetStream message a dead letter is made from (a JsMsg has them). */
export interface DeliveredMessage {
  subject: string;
  data: Uint8Array;
  headers?: MsgHdrs;
  info: { stream: string; streamSequence: number; deliveryCount: number; timestampNanos: number };
}

export interface DeadLetter {
  subject: string;
  /** `dlq:<stream>:<sequence>`: a consumer that dies after publishing it and redelivers publishes a duplicate the stream drops. */
  msgId: string;
  headers: Record<string, string>;
  record: DeadLetterRecord;
  body: Uint8Array;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function buildDeadLetter(
  message: DeliveredMessage,
  reason: DeadLetterReason,
  detail: string,
  options: { consumer: string; root: string; maxPayloadBytes?: number; now?: Date },
): DeadLetter {
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_DEAD_LETTER_PAYLOAD_BYTES;
  const payloadTruncated = message.data.byteLength > maxPayloadBytes;
  const kept = payloadTruncated ? message.data.subarray(0, maxPayloadBytes) : message.data;
  let payloadEncoding: DeadLetterRecord['original']['payloadEncoding'];
  let payload: string | undefined;
  if (reason === 'secret-like') {
    payloadEncoding = 'omitted';
  } else {
    try {
      payload = utf8.decode(kept);
      payloadEncoding = 'utf8';
    } catch {
      payload = Buffer.from(kept).toString('base64');
      payloadEncoding = 'base64';
    }
  }
  const record: DeadLetterRecord = {
    reason,
    detail,
    consumer: options.consumer,
    deadLetteredAt: (options.now ?? new Date()).toISOString(),
    original: {
      subject: message.subject,
      stream: message.info.stream,
      streamSequence: message.info.streamSequence,
      deliveryCount: message.info.deliveryCount,
      publishedAt: new Date(Math.floor(message.info.timestampNanos / 1e6)).toISOString(),
      headers: headerRecord(message.headers),
      payloadEncoding,
      ...(payload !== undefined ? { payload } : {}),
      payloadBytes: message.data.byteLength,
      payloadTruncated: payloadEncoding !== 'omitted' && payloadTruncated,
    },
  };
  return {
    subject: deadLetterSubject(message.subject, options.root),
    msgId: `dlq:${message.info.stream}:${message.info.streamSequence}`,
    headers: {
      [DEAD_LETTER_HEADERS.reason]: reason,
      [DEAD_LETTER_HEADERS.originalSubject]: message.subject,
      [DEAD_LETTER_HEADERS.originalSequence]: String(message.info.streamSequence),
      [DEAD_LETTER_HEADERS.consumer]: options.consumer,
    },
    record,
    body: new TextEncoder().encode(JSON.stringify(record)),
  };
}

function headerRecord(headers: MsgHdrs | undefined): Record<string, string[]> {
  const record: Record<string, string[]> = {};
  if (!headers) return record;
  for (const key of headers.keys()) record[key] = headers.values(key);
  return record;
}

/** Reads a dead letter's body back (for tools and tests). */
export function parseDeadLetter(body: Uint8Array): DeadLetterRecord {
  return JSON.parse(new TextDecoder().decode(body)) as DeadLetterRecord;
}

/** The original payload bytes a dead letter kept (empty when omitted). */
export function deadLetterPayload(record: DeadLetterRecord): Uint8Array {
  const { payload, payloadEncoding } = record.original;
  if (payload === undefined || payloadEncoding === 'omitted') return new Uint8Array();
  return payloadEncoding === 'base64'
    ? new Uint8Array(Buffer.from(payload, 'base64'))
    : new TextEncoder().encode(payload);
}
