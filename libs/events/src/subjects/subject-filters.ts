import {
  assertEventToken,
  assertNamespace,
  assertRootToken,
  assertSource,
  DEFAULT_SUBJECT_ROOT,
  encodeNameToken,
  kindToken,
  type EventSource,
} from './event-subject.js';

/** Which events a subscriber wants; an omitted token matches anything. */
export interface SubjectSelector {
  source?: EventSource;
  kind?: string;
  namespace?: string;
  name?: string;
  event?: string;
}

/**
 * A NATS filter subject for the selector: `*` for each omitted token, and a trailing run of them folded
 * into `>` (every event subject has the same six tokens, so both match the same subjects).
 */
export function eventSubjectFilter(
  selector: SubjectSelector = {},
  root: string = DEFAULT_SUBJECT_ROOT,
): string {
  assertRootToken(root);
  if (selector.source !== undefined) assertSource(selector.source);
  if (selector.namespace !== undefined) assertNamespace(selector.namespace);
  if (selector.event !== undefined) assertEventToken(selector.event);
  const tokens = [
    selector.source,
    selector.kind === undefined ? undefined : kindToken(selector.kind),
    selector.namespace,
    selector.name === undefined ? undefined : encodeNameToken(selector.name),
    selector.event,
  ];
  let last = tokens.length;
  while (last > 0 && tokens[last - 1] === undefined) last--;
  const fixed = tokens.slice(0, last).map((token) => token ?? '*');
  return [root, ...fixed, ...(last < tokens.length ? ['>'] : [])].join('.');
}

/** Every hand-off event (provider -> core): `capstan.handoff.>`. */
export const handoffEvents = (root?: string) => eventSubjectFilter({ source: 'handoff' }, root);

/** Every lifecycle event (core -> providers and integrations): `capstan.lifecycle.>`. */
export const lifecycleEvents = (root?: string) => eventSubjectFilter({ source: 'lifecycle' }, root);

/** One kind, e.g. `capstan.*.machine.>`, or `capstan.lifecycle.machine.>` with a source. */
export const eventsOfKind = (kind: string, source?: EventSource, root?: string) =>
  eventSubjectFilter({ source, kind }, root);

/** One event token across kinds and namespaces, e.g. `capstan.handoff.*.*.*.provisioned`. */
export const eventsNamed = (event: string, source?: EventSource, root?: string) =>
  eventSubjectFilter({ source, event }, root);

/** Everything in one namespace: `capstan.*.*.<namespace>.>`. */
export const eventsInNamespace = (namespace: string, source?: EventSource, root?: string) =>
  eventSubjectFilter({ source, namespace }, root);

/** Everything about one object: `capstan.*.<kind>.<namespace>.<name>.*`. */
export const eventsOfObject = (kind: string, namespace: string, name: string, root?: string) =>
  eventSubjectFilter({ kind, namespace, name }, root);
