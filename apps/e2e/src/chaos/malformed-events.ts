// Malformed events: for every catalogued event subject, N messages that no consumer may act on: wrong types,
// truncated JSON, huge payloads, secrets, wrong subjects. Each carries what should become of it, computed from the
// consumers' actual filter subjects: dead-lettered with a reason (the consumers receive it), refused by the server
// (no stream takes the subject, or over NATS's max_payload), or stored with no consumer filtering it.
import {
  EVENT_CATALOGUE,
  EVENT_NAMES,
  buildEventSubject,
  subjectMatches,
  type EventName,
  type InvalidEventReason,
} from '@capstan/events';
import type { Random } from './random.js';

export const MALFORMED_CATEGORIES = [
  'truncated-json',
  'not-json-text',
  'invalid-utf8',
  'json-not-object',
  'unknown-type',
  'missing-type',
  'wrong-field-types',
  'missing-fields',
  'invalid-values',
  'secret-like',
  'subject-mismatch',
  'oversized',
  'over-max-payload',
  'subject-too-short',
  'subject-too-long',
  'subject-uppercase-kind',
  'subject-unknown-source',
  'subject-unconsumed-kind',
] as const;
export type MalformedCategory = (typeof MALFORMED_CATEGORIES)[number];

/** Huge payloads cost stream space and time: fewer of them. */
const WEIGHTS: Partial<Record<MalformedCategory, number>> = { oversized: 0.4, 'over-max-payload': 0.05 };

/** The consumers' event size limit (DEFAULT_MAX_EVENT_BYTES) and NATS's default max_payload. */
export const MAX_EVENT_BYTES = 64 * 1024;
export const NATS_MAX_PAYLOAD = 1024 * 1024;

export type Expectation =
  | { outcome: 'dead-letter'; reason: InvalidEventReason }
  /** No stream captures the subject, or the payload is over max_payload: the publish fails. */
  | { outcome: 'refused'; why: string }
  /** In the stream, but no consumer filters the subject: nobody receives it. */
  | { outcome: 'unconsumed' };

export interface MalformedEvent {
  category: MalformedCategory;
  /** Which variant of the category (e.g. `delete data.object`), for the per-variant outcome table. */
  detail: string;
  /** The catalogued event whose subject this is aimed at. */
  event: EventName;
  subject: string;
  payload: Uint8Array;
  expect: Expectation;
}

export interface EventTarget {
  root: string;
  namespace: string;
  /** The filter subjects of the durable consumers on the event stream (read from the server). */
  consumerFilters: string[];
  /** The event stream's subjects (`<root>.handoff.>`, `<root>.lifecycle.>`). */
  streamSubjects: string[];
  /** A private key (PEM) the secret-like events carry: it must never show up in a log. */
  fakeSecretPem: string;
}

const PROVIDER_KINDS: Record<string, { apiGroup: string; kind: string }> = {
  'infrastructure-cluster': { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster' },
  'infrastructure-machine': { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine' },
  bootstrap: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig' },
  'control-plane': { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane' },
};

/** The kind (and API group) an event of `name` is about. */
export function eventKind(name: EventName): { apiGroup: string; kind: string } {
  const definition = EVENT_CATALOGUE[name];
  if ('kind' in definition && definition.kind) return { apiGroup: 'cluster.x-k8s.io', kind: definition.kind };
  const provider = PROVIDER_KINDS[definition.role];
  if (!provider) throw new Error(`no kind known for event ${name}`);
  return provider;
}

/** The subject of event `name` about object `objectName`. */
export function eventSubjectOf(
  name: EventName,
  target: Pick<EventTarget, 'root' | 'namespace'>,
  objectName: string,
): string {
  const definition = EVENT_CATALOGUE[name];
  return buildEventSubject(
    {
      source: definition.source,
      kind: eventKind(name).kind,
      namespace: target.namespace,
      name: objectName,
      event: definition.event,
    },
    target.root,
  );
}

/**
 * A valid envelope of event `name` about `objectName`: data with every field any catalogued event needs (decoding
 * tolerates the fields another event would not have). The malformed events are each one change away from it.
 */
export function validEnvelope(
  name: EventName,
  target: Pick<EventTarget, 'namespace'>,
  objectName: string,
): Record<string, unknown> {
  const definition = EVENT_CATALOGUE[name];
  const { apiGroup, kind } = eventKind(name);
  const checksum = 'a'.repeat(64);
  return {
    specversion: '1.0',
    id: `00000000-0000-4000-8000-000000000000:1:${definition.event}`,
    source: '/capstan/chaos',
    type: definition.type,
    subject: `${target.namespace}/${objectName}`,
    time: new Date(0).toISOString(),
    datacontenttype: 'application/json',
    data: {
      object: {
        apiGroup,
        kind,
        namespace: target.namespace,
        name: objectName,
        uid: '00000000-0000-4000-8000-000000000000',
      },
      generation: 1,
      resourceVersion: '1',
      clusterName: 'chaos-no-such-cluster',
      machineName: objectName,
      phase: 'Provisioning',
      controlPlane: false,
      controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
      dataSecretName: objectName,
      providerID: `sim://${target.namespace}/${objectName}`,
      nodeName: objectName,
      reason: 'ChaosTest',
      message: 'malformed on purpose',
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      upToDateReplicas: 1,
      desiredReplicas: 1,
      planSecretName: `${objectName}-machine-plan`,
      checksum,
      revision: 1,
      failure: 'step failed',
      failureCount: 1,
      probes: [],
      target: 'v1.34.4',
      planChecksum: checksum,
    },
  };
}

const encoder = new TextEncoder();
const json = (value: unknown) => encoder.encode(JSON.stringify(value));

function weightedCategory(random: Random): MalformedCategory {
  const total = MALFORMED_CATEGORIES.reduce((sum, c) => sum + (WEIGHTS[c] ?? 1), 0);
  let point = random.next() * total;
  for (const category of MALFORMED_CATEGORIES) {
    point -= WEIGHTS[category] ?? 1;
    if (point < 0) return category;
  }
  return MALFORMED_CATEGORIES[0];
}

/** What becomes of a message on `subject` that its consumers would dead-letter for `reason`. */
export function expectationFor(
  subject: string,
  target: Pick<EventTarget, 'consumerFilters' | 'streamSubjects'>,
  reason: InvalidEventReason,
): Expectation {
  if (!target.streamSubjects.some((filter) => subjectMatches(filter, subject)))
    return { outcome: 'refused', why: 'no stream captures the subject' };
  if (!target.consumerFilters.some((filter) => subjectMatches(filter, subject)))
    return { outcome: 'unconsumed' };
  return { outcome: 'dead-letter', reason };
}

type Mutation = [
  label: string,
  apply: (envelope: Record<string, unknown>, data: Record<string, unknown>) => unknown,
];

function mutate(
  envelope: Record<string, unknown>,
  random: Random,
  mutations: Mutation[],
): { body: Record<string, unknown>; label: string } {
  const body = structuredClone(envelope);
  const [label, apply] = random.pick(mutations);
  apply(body, body['data'] as Record<string, unknown>);
  return { body, label };
}

const objectOf = (data: Record<string, unknown>) => data['object'] as Record<string, unknown>;

/** One malformed event of `category` aimed at event `name`'s subject. */
export function malformedEvent(
  category: MalformedCategory,
  name: EventName,
  target: EventTarget,
  random: Random,
  serial: number,
): MalformedEvent {
  const objectName = `chaos-malformed-${serial}`;
  const subject = eventSubjectOf(name, target, objectName);
  const envelope = validEnvelope(name, target, objectName);
  const definition = EVENT_CATALOGUE[name];
  const on = (
    payload: Uint8Array,
    reason: InvalidEventReason,
    at = subject,
    detail: string = category,
  ): MalformedEvent => ({
    category,
    detail,
    event: name,
    subject: at,
    payload,
    expect: expectationFor(at, target, reason),
  });
  const mutated = (reason: InvalidEventReason, mutations: Mutation[]) => {
    const { body, label } = mutate(envelope, random, mutations);
    return on(json(body), reason, subject, label);
  };
  switch (category) {
    case 'truncated-json': {
      const text = JSON.stringify(envelope);
      return on(encoder.encode(text.slice(0, random.int(1, text.length - 2))), 'not-json');
    }
    case 'not-json-text': {
      const words = ['<html>', 'hello', 'cluster', '{{', '}}', 'SELECT *', '\u0000', 'ÿ', '%%%'];
      return on(
        encoder.encode(`<${Array.from({ length: random.int(1, 20) }, () => random.pick(words)).join(' ')}`),
        'not-json',
      );
    }
    case 'invalid-utf8': {
      const bytes = new Uint8Array(random.int(1, 64)).map(() => 0x80 + random.int(0, 0x7f));
      bytes[0] = 0xff;
      return on(bytes, 'not-json');
    }
    case 'json-not-object':
      return on(
        encoder.encode(random.pick(['[]', 'null', '42', '"text"', 'true', JSON.stringify([envelope])])),
        'not-json',
      );
    case 'unknown-type':
      return on(
        json({
          ...envelope,
          type: random.pick([
            'dev.capstan.handoff.no-such.event',
            'com.example.other',
            definition.type.toUpperCase(),
            '',
            42,
          ]),
        }),
        'unknown-type',
      );
    case 'missing-type': {
      const copy = structuredClone(envelope);
      delete copy['type'];
      return on(json(copy), 'unknown-type');
    }
    case 'wrong-field-types':
      return mutated('validation-failed', [
        ['data.generation: seven', (_, d) => (d['generation'] = 'seven')],
        ['data.object: 42', (_, d) => (d['object'] = 42)],
        ['data.object.uid: 42', (_, d) => (objectOf(d)['uid'] = 42)],
        ['time: 12345', (e) => (e['time'] = 12345)],
        ['specversion: 1', (e) => (e['specversion'] = 1)],
        ['data: not an object', (e) => (e['data'] = 'not an object')],
        ['data.resourceVersion: 7', (_, d) => (d['resourceVersion'] = 7)],
        ['data.clusterName: [a]', (_, d) => (d['clusterName'] = ['a'])],
        ['id: { nested: true }', (e) => (e['id'] = { nested: true })],
      ]);
    case 'missing-fields':
      return mutated('validation-failed', [
        ['delete id', (e) => delete e['id']],
        ['delete source', (e) => delete e['source']],
        ['delete time', (e) => delete e['time']],
        ['delete specversion', (e) => delete e['specversion']],
        ['delete datacontenttype', (e) => delete e['datacontenttype']],
        ['delete subject', (e) => delete e['subject']],
        ['delete data', (e) => delete e['data']],
        ['delete data.object', (_, d) => delete d['object']],
        ['delete data.object.uid', (_, d) => delete objectOf(d)['uid']],
        ['delete data.object.kind', (_, d) => delete objectOf(d)['kind']],
        ['delete data.resourceVersion', (_, d) => delete d['resourceVersion']],
        ['delete data.clusterName', (_, d) => delete d['clusterName']],
        ['delete data.generation', (_, d) => delete d['generation']],
      ]);
    case 'invalid-values':
      return mutated('validation-failed', [
        ['data.object.name: 300 characters', (_, d) => (objectOf(d)['name'] = 'a'.repeat(300))],
        ['data.object.namespace: Upper_Case', (_, d) => (objectOf(d)['namespace'] = 'Upper_Case')],
        ['data.generation: -1', (_, d) => (d['generation'] = -1)],
        ['data.resourceVersion: a:b', (_, d) => (d['resourceVersion'] = 'a:b')],
        ['data.object.kind: lowercase', (_, d) => (objectOf(d)['kind'] = 'lowercase')],
        ['data.clusterName: -bad-', (_, d) => (d['clusterName'] = '-bad-')],
        ['data.object.apiGroup: NOT VALID', (_, d) => (objectOf(d)['apiGroup'] = 'NOT VALID')],
        ['time: yesterday', (e) => (e['time'] = 'yesterday')],
        ['specversion: 0.3', (e) => (e['specversion'] = '0.3')],
        ['datacontenttype: text/plain', (e) => (e['datacontenttype'] = 'text/plain')],
        ['id: (empty)', (e) => (e['id'] = '')],
        ['data.object.uid: has:colon', (_, d) => (objectOf(d)['uid'] = 'has:colon')],
      ]);
    case 'secret-like':
      return mutated('secret-like', [
        ['data.privateKey: <PEM private key>', (_, d) => (d['privateKey'] = target.fakeSecretPem)],
        ['data.message: <PEM private key>', (_, d) => (d['message'] = target.fakeSecretPem)],
        ['data.bootstrapToken: not-a-real-token', (_, d) => (d['bootstrapToken'] = 'not-a-real-token')],
        ['data.kubeconfig: apiVersion: v1', (_, d) => (d['kubeconfig'] = 'apiVersion: v1')],
        ['data.extra: { password: hunter2 }', (_, d) => (d['extra'] = { password: 'hunter2' })],
      ]);
    case 'subject-mismatch': {
      // A valid event about another object, or another event, than its subject names.
      const siblings = EVENT_NAMES.filter(
        (n) =>
          n !== name &&
          eventKind(n).kind === eventKind(name).kind &&
          EVENT_CATALOGUE[n].source === definition.source,
      );
      const otherObject = siblings.length === 0 || random.next() < 0.5;
      const body = otherObject
        ? validEnvelope(name, target, `${objectName}-other`)
        : validEnvelope(random.pick(siblings), target, objectName);
      return on(json(body), 'validation-failed');
    }
    case 'oversized': {
      const size = random.int(MAX_EVENT_BYTES + 1, MAX_EVENT_BYTES + 36 * 1024);
      const padded = { ...envelope, data: { ...(envelope['data'] as object), padding: '' } };
      const base = JSON.stringify(padded).length;
      (padded.data as Record<string, unknown>)['padding'] = 'x'.repeat(Math.max(0, size - base));
      return on(json(padded), 'oversized');
    }
    case 'over-max-payload': {
      const payload = new Uint8Array(NATS_MAX_PAYLOAD + random.int(1, 4096)).fill(0x78);
      return {
        category,
        detail: category,
        event: name,
        subject,
        payload,
        expect: { outcome: 'refused', why: 'over max_payload' },
      };
    }
    case 'subject-too-short':
      return on(json(envelope), 'validation-failed', subject.split('.').slice(0, 5).join('.'));
    case 'subject-too-long':
      return on(json(envelope), 'validation-failed', `${subject}.extra`);
    case 'subject-uppercase-kind': {
      const tokens = subject.split('.');
      tokens[2] = eventKind(name).kind;
      return on(json(envelope), 'validation-failed', tokens.join('.'));
    }
    case 'subject-unknown-source': {
      const tokens = subject.split('.');
      tokens[1] = 'nonsense';
      return on(json(envelope), 'validation-failed', tokens.join('.'));
    }
    case 'subject-unconsumed-kind': {
      // A lifecycle event about a kind no consumer filters for (the core announces Clusters and Machines only).
      const tokens = subject.split('.');
      tokens[1] = 'lifecycle';
      tokens[2] = 'k3sconfig';
      return on(json(envelope), 'validation-failed', tokens.join('.'));
    }
  }
}

/** `perSubject` malformed events for every catalogued event, lazily (huge payloads are made when needed). */
export function* malformedEvents(
  target: EventTarget,
  perSubject: number,
  random: Random,
): Generator<MalformedEvent> {
  let serial = 0;
  for (const name of EVENT_NAMES) {
    const r = random.fork();
    for (let i = 0; i < perSubject; i++) yield malformedEvent(weightedCategory(r), name, target, r, serial++);
  }
}
