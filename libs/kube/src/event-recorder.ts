import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClient } from './client.js';
import { defaultLogger } from './logger.js';
import { microTime } from './micro-time.js';
import type { ResourceType } from './resource.js';

export const EVENTS_V1: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

export interface EventObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** events.k8s.io/v1 Event. */
export interface KubeEvent extends KubernetesObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: 'Normal' | 'Warning';
  note?: string;
  regarding: EventObjectReference;
  related?: EventObjectReference;
  series?: { count: number; lastObservedTime: string };
}

export interface EventSpec {
  type: 'Normal' | 'Warning';
  /** Why (CamelCase, e.g. `MachineProvisioned`). */
  reason: string;
  /** What was done or failed (CamelCase, e.g. `Provision`). */
  action: string;
  /** A human-readable sentence. Never put secrets here: events are readable by many. */
  note?: string;
  related?: KubernetesObject;
}

export interface EventRecorderOptions {
  client: KubeClient;
  /** A qualified name such as `capstan.dev/machine-controller`. */
  reportingController: string;
  /** This replica, e.g. the pod name. */
  reportingInstance: string;
  logger?: Logger;
  /** Repeats of the same event within this window bump its series count instead of creating new events (default 6 min, as client-go). */
  seriesWindowMs?: number;
  /** Series remembered at most (oldest forgotten first). */
  maxSeries?: number;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
}

const NOTE_LIMIT = 1024;

/** Strips obvious credentials from a note: PEM blocks and bearer tokens. */
export function redactNote(note: string): string {
  return note
    .replace(/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)/g, '[redacted PEM block]')
    .replace(/\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1[redacted]');
}

function reference(obj: KubernetesObject): EventObjectReference {
  const m = obj.metadata ?? {};
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
}

/**
 * Records Kubernetes Events (events.k8s.io/v1) on objects. Repeats of an event (same object, type, reason,
 * action, note) within the series window update the first one's `series.count` rather than adding events.
 * Recording never throws: a failure is logged, since an event must not fail a reconcile.
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly log: Logger;
  private readonly windowMs: number;
  private readonly maxSeries: number;

  constructor(private readonly options: EventRecorderOptions) {
    this.log = (options.logger ?? defaultLogger()).child({ component: 'event-recorder' });
    this.windowMs = options.seriesWindowMs ?? 6 * 60 * 1000;
    this.maxSeries = options.maxSeries ?? 4096;
  }

  /** Records the event; resolves with the Event written (created or series-updated), or undefined on failure. */
  async event(regarding: KubernetesObject, spec: EventSpec): Promise<KubeEvent | undefined> {
    const ref = reference(regarding);
    const namespace = ref.namespace ?? 'default';
    const note = spec.note === undefined ? undefined : truncate(redactNote(spec.note));
    const seriesKey = JSON.stringify([
      ref.uid ?? `${ref.kind}/${namespace}/${ref.name}`,
      spec.type,
      spec.reason,
      spec.action,
      note,
    ]);
    const events = this.options.client.resource<KubeEvent>(EVENTS_V1);
    const now = Date.now();
    const known = this.series.get(seriesKey);
    try {
      if (known && now - known.firstAt < this.windowMs) {
        known.count++;
        return await events.mergePatch(
          { namespace: known.namespace, name: known.name },
          { series: { count: known.count, lastObservedTime: microTime(new Date(now)) } },
        );
      }
      const created = await events.create({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: `${ref.name ?? 'object'}.${randomBytes(8).toString('hex')}`, namespace },
        eventTime: microTime(new Date(now)),
        reportingController: this.options.reportingController,
        reportingInstance: this.options.reportingInstance,
        action: spec.action,
        reason: spec.reason,
        type: spec.type,
        note,
        regarding: ref,
        related: spec.related ? reference(spec.related) : undefined,
      });
      this.remember(seriesKey, { name: created.metadata!.name!, namespace, count: 1, firstAt: now });
      return created;
    } catch (err) {
      // The series' event may have been deleted (TTL): start a new one next time.
      this.series.delete(seriesKey);
      this.log.warn(
        {
          err: err instanceof Error ? err.message : String(err),
          reason: spec.reason,
          regarding: `${ref.kind} ${namespace}/${ref.name}`,
        },
        'could not record event',
      );
      return undefined;
    }
  }

  private remember(key: string, series: Series): void {
    this.series.delete(key);
    this.series.set(key, series);
    while (this.series.size > this.maxSeries) {
      const oldest = this.series.keys().next().value;
      if (oldest === undefined) break;
      this.series.delete(oldest);
    }
  }
}

function truncate(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_LIMIT) return note;
  let cut = note.slice(0, NOTE_LIMIT - 3);
  while (Buffer.byteLength(cut) > NOTE_LIMIT - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}
