import { InvalidSubjectError } from '../errors.js';

/** The first token of every Capstan subject; tests use their own root so parallel files never share a stream. */
export const DEFAULT_SUBJECT_ROOT = 'capstan';

/** `handoff`: a provider tells the core its object reached a contract milestone. `lifecycle`: the core tells everyone else. */
export const EVENT_SOURCES = ['handoff', 'lifecycle'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** The tokens of `<root>.<source>.<kind>.<namespace>.<name>.<event>`, decoded (a name holds its real dots). */
export interface EventSubjectParts {
  source: EventSource;
  /** Kubernetes kind; written lower-case in the subject (`K3sConfig` -> `k3sconfig`). */
  kind: string;
  namespace: string;
  name: string;
  /** The event token, e.g. `data-secret-created`. */
  event: string;
}

const ROOT_TOKEN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const KIND_TOKEN = /^[a-z][a-z0-9]*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const EVENT_TOKEN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_NAMESPACE = 63;
const MAX_NAME = 253;

export function assertRootToken(root: string): void {
  if (!ROOT_TOKEN.test(root)) {
    throw new InvalidSubjectError(
      `subject root ${JSON.stringify(root)} must be lower-case alphanumerics and '-'`,
      { root },
    );
  }
}

export function assertSource(source: string): asserts source is EventSource {
  if (!(EVENT_SOURCES as readonly string[]).includes(source)) {
    throw new InvalidSubjectError(
      `source ${JSON.stringify(source)} must be one of ${EVENT_SOURCES.join(', ')}`,
      { source },
    );
  }
}

/** Kinds are case-insensitive in the subject: the builder lower-cases, the parser returns lower case. */
export function kindToken(kind: string): string {
  const token = kind.toLowerCase();
  if (!KIND_TOKEN.test(token)) {
    throw new InvalidSubjectError(
      `kind ${JSON.stringify(kind)} must be alphanumeric and start with a letter`,
      { kind },
    );
  }
  return token;
}

export function assertNamespace(namespace: string): void {
  if (namespace.length > MAX_NAMESPACE || !DNS_LABEL.test(namespace)) {
    throw new InvalidSubjectError(`namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`, {
      namespace,
    });
  }
}

/** A Kubernetes object name is a DNS-1123 subdomain: labels of [a-z0-9-] joined by dots. */
export function assertObjectName(name: string): void {
  if (
    name.length === 0 ||
    name.length > MAX_NAME ||
    !name.split('.').every((label) => DNS_LABEL.test(label))
  ) {
    throw new InvalidSubjectError(`name ${JSON.stringify(name)} is not a DNS-1123 subdomain`, { name });
  }
}

export function assertEventToken(event: string): void {
  if (!EVENT_TOKEN.test(event)) {
    throw new InvalidSubjectError(`event ${JSON.stringify(event)} must be lower-case words joined by '-'`, {
      event,
    });
  }
}

/** A `.` separates subject tokens, so a dotted name is written with `_` (never valid in a Kubernetes name). */
export function encodeNameToken(name: string): string {
  assertObjectName(name);
  return name.replaceAll('.', '_');
}

export function decodeNameToken(token: string): string {
  const name = token.replaceAll('_', '.');
  assertObjectName(name);
  return name;
}

/** `capstan.handoff.k3sconfig.default.demo-md-0-x7k2p.data-secret-created` */
export function buildEventSubject(parts: EventSubjectParts, root: string = DEFAULT_SUBJECT_ROOT): string {
  assertRootToken(root);
  assertSource(parts.source);
  assertNamespace(parts.namespace);
  assertEventToken(parts.event);
  return [
    root,
    parts.source,
    kindToken(parts.kind),
    parts.namespace,
    encodeNameToken(parts.name),
    parts.event,
  ].join('.');
}

export function parseEventSubject(subject: string, root: string = DEFAULT_SUBJECT_ROOT): EventSubjectParts {
  const tokens = subject.split('.');
  if (tokens.length !== 6) {
    throw new InvalidSubjectError(`subject must have 6 tokens, has ${tokens.length}`, { subject });
  }
  const [first, source, kind, namespace, name, event] = tokens as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (first !== root) {
    throw new InvalidSubjectError(`subject must start with ${JSON.stringify(root)}`, { subject });
  }
  assertSource(source);
  if (kindToken(kind) !== kind) {
    throw new InvalidSubjectError('kind must be lower-case in a subject', { subject });
  }
  assertNamespace(namespace);
  assertEventToken(event);
  return { source, kind, namespace, name: decodeNameToken(name), event };
}
