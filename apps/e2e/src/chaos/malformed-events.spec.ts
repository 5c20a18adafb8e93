import 'reflect-metadata';
import { generateKeyPairSync } from 'node:crypto';
import { decodeEvent, EVENT_NAMES, InvalidEventError } from '@capstan/events';
import {
  MALFORMED_CATEGORIES,
  MAX_EVENT_BYTES,
  eventSubjectOf,
  malformedEvent,
  malformedEvents,
  validEnvelope,
  type EventTarget,
} from './malformed-events.js';
import { createRandom } from './random.js';

const target: EventTarget = {
  root: 'chaos1',
  namespace: 'chaos-ns',
  consumerFilters: ['chaos1.handoff.>', 'chaos1.lifecycle.cluster.>', 'chaos1.lifecycle.machine.>'],
  streamSubjects: ['chaos1.handoff.>', 'chaos1.lifecycle.>'],
  fakeSecretPem: generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString(),
};

function refusal(payload: Uint8Array, subject: string): string {
  try {
    decodeEvent(payload, { subject, root: target.root, maxPayloadBytes: MAX_EVENT_BYTES });
  } catch (error) {
    if (error instanceof InvalidEventError) return error.reason;
    return `threw ${(error as Error).name}`;
  }
  return 'accepted';
}

describe('malformed events', () => {
  it('starts from an envelope every catalogued event accepts on its own subject', () => {
    for (const name of EVENT_NAMES) {
      const subject = eventSubjectOf(name, target, 'x');
      expect([
        name,
        refusal(new TextEncoder().encode(JSON.stringify(validEnvelope(name, target, 'x'))), subject),
      ]).toEqual([name, 'accepted']);
    }
  });

  it('makes every category on every subject, each refused by the consumers for the reason it expects', () => {
    const random = createRandom(7);
    let serial = 0;
    for (const name of EVENT_NAMES) {
      for (const category of MALFORMED_CATEGORIES) {
        for (let i = 0; i < 2; i++) {
          const event = malformedEvent(category, name, target, random, serial++);
          if (event.expect.outcome === 'dead-letter') {
            const outcome = refusal(event.payload, event.subject);
            expect([category, event.detail, name, outcome]).toEqual([
              category,
              event.detail,
              name,
              event.expect.reason,
            ]);
          } else if (category === 'over-max-payload') {
            expect(event.payload.byteLength).toBeGreaterThan(1024 * 1024);
          } else {
            // Subjects outside the stream or outside every consumer's filter.
            expect(['subject-unknown-source', 'subject-unconsumed-kind', 'subject-uppercase-kind']).toContain(
              category,
            );
          }
        }
      }
    }
  });

  it('says honestly what happens to wrong subjects', () => {
    const random = createRandom(1);
    expect(malformedEvent('subject-unknown-source', 'cluster.created', target, random, 0).expect).toEqual({
      outcome: 'refused',
      why: 'no stream captures the subject',
    });
    expect(malformedEvent('subject-unconsumed-kind', 'cluster.created', target, random, 0).expect).toEqual({
      outcome: 'unconsumed',
    });
    // The core takes all of handoff.>: an upper-case kind reaches it and is dead-lettered; lifecycle filters are exact.
    expect(
      malformedEvent('subject-uppercase-kind', 'bootstrap.data-secret-created', target, random, 0).expect,
    ).toEqual({ outcome: 'dead-letter', reason: 'validation-failed' });
    expect(malformedEvent('subject-uppercase-kind', 'cluster.created', target, random, 0).expect).toEqual({
      outcome: 'unconsumed',
    });
  });

  it('is the same for the same seed, and has every subject the asked number of times', () => {
    const a = [...malformedEvents(target, 20, createRandom(3))];
    const b = [...malformedEvents(target, 20, createRandom(3))];
    expect(a.map((e) => [e.category, e.subject])).toEqual(b.map((e) => [e.category, e.subject]));
    expect(a).toHaveLength(20 * EVENT_NAMES.length);
    for (const name of EVENT_NAMES) expect(a.filter((e) => e.event === name)).toHaveLength(20);
  });

  it('keeps the secret out of what it expects to be stored', () => {
    const secretLike = malformedEvent('secret-like', 'cluster.created', target, createRandom(2), 0);
    expect(secretLike.expect).toEqual({ outcome: 'dead-letter', reason: 'secret-like' });
  });
});
