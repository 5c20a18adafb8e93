import { assertRootToken, DEFAULT_SUBJECT_ROOT, EVENT_SOURCES } from './event-subject.js';

/** The token after the root that marks a dead letter: `capstan.dlq.<original subject minus "capstan.">`. */
export const DEAD_LETTER_TOKEN = 'dlq';

/** `capstan.handoff.k3sconfig.default.x.data-secret-created` -> `capstan.dlq.handoff.k3sconfig.default.x.data-secret-created` */
export function deadLetterSubject(originalSubject: string, root: string = DEFAULT_SUBJECT_ROOT): string {
  assertRootToken(root);
  const prefix = `${root}.`;
  const rest = originalSubject.startsWith(prefix)
    ? originalSubject.slice(prefix.length)
    : `foreign.${originalSubject}`;
  return `${root}.${DEAD_LETTER_TOKEN}.${rest}`;
}

/** Every dead letter: `capstan.dlq.>`. */
export function deadLetterFilter(root: string = DEFAULT_SUBJECT_ROOT): string {
  assertRootToken(root);
  return `${root}.${DEAD_LETTER_TOKEN}.>`;
}

/**
 * The subjects of the event stream: one wildcard per source rather than `capstan.>`, so the dead letters
 * (`capstan.dlq.>`) can live in their own stream (NATS refuses overlapping stream subjects) and a consumer
 * of all events never receives, and re-dead-letters, its own dead letters.
 */
export function eventStreamSubjects(root: string = DEFAULT_SUBJECT_ROOT): string[] {
  assertRootToken(root);
  return EVENT_SOURCES.map((source) => `${root}.${source}.>`);
}
