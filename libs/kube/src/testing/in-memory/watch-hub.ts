// The in-memory API server's watches: every change is kept in a bounded history, so a watch can resume from a
// resourceVersion (or is told 410 Gone when that version is no longer kept), and is sent to the open watches whose
// namespace and selectors it concerns, with the real server's transitions (an object that stops matching a selector
// is DELETED for that watch, one that starts matching is ADDED).

import { PassThrough } from 'node:stream';
import { fieldsMatch, labelsMatch, type FieldRequirement, type LabelRequirement } from './selector-strings.js';

type Obj = Record<string, unknown> & { metadata?: { namespace?: string; labels?: Record<string, string> } };

export interface Change {
  resourceVersion: number;
  kindId: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
  /** The state before a MODIFIED change. */
  previous?: Obj;
}

export interface WatchFilter {
  kindId: string;
  namespace?: string;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

interface Watch extends WatchFilter {
  stream: PassThrough;
}

const matches = (w: WatchFilter, obj: Obj | undefined) =>
  obj !== undefined &&
  (w.namespace === undefined || obj.metadata?.namespace === w.namespace) &&
  labelsMatch(w.labels, obj.metadata?.labels) &&
  fieldsMatch(w.fields, obj);

/** What a change looks like to one watch, or undefined when the watch does not see it. */
function seenBy(w: WatchFilter, change: Change): { type: Change['type']; object: Obj } | undefined {
  if (change.kindId !== w.kindId) return undefined;
  const now = matches(w, change.object);
  if (change.type !== 'MODIFIED') return now ? { type: change.type, object: change.object } : undefined;
  const before = matches(w, change.previous);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: change.object } : undefined;
}

export class WatchHub {
  private readonly history: Change[] = [];
  /** The newest resourceVersion no longer in the history: a watch from it or before is 410 Gone. */
  private forgottenThrough = 0;
  private readonly watches = new Set<Watch>();

  constructor(private readonly historyLimit: number) {}

  record(change: Change): void {
    this.history.push(change);
    if (this.history.length > this.historyLimit) this.forgottenThrough = this.history.shift()!.resourceVersion;
    for (const w of this.watches) this.send(w, change);
  }

  /**
   * Opens a watch: `current` (the objects as they are) is sent as ADDED when no resourceVersion is given, else the
   * changes after `from`; then the live changes until `timeoutSeconds` or until the reader goes away.
   */
  open(filter: WatchFilter, from: number | undefined, current: () => Obj[], timeoutSeconds?: number): PassThrough {
    const stream = new PassThrough();
    const watch: Watch = { ...filter, stream };
    if (from !== undefined && from < this.forgottenThrough) {
      write(stream, {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Expired',
          code: 410,
          message: `too old resource version: ${from} (${this.forgottenThrough + 1})`,
        },
      });
      stream.end();
      return stream;
    }
    if (from === undefined) {
      for (const object of current()) if (matches(filter, object)) write(stream, { type: 'ADDED', object });
    } else {
      for (const change of this.history) if (change.resourceVersion > from) this.send(watch, change);
    }
    this.watches.add(watch);
    const timer = timeoutSeconds ? setTimeout(() => stream.end(), timeoutSeconds * 1000) : undefined;
    timer?.unref();
    stream.once('close', () => {
      clearTimeout(timer);
      this.watches.delete(watch);
    });
    stream.once('finish', () => this.watches.delete(watch));
    return stream;
  }

  /** Ends every open watch (the server's shutdown, or a test's way to make informers re-watch). */
  closeAll(): void {
    for (const w of this.watches) w.stream.end();
    this.watches.clear();
  }

  get openWatches(): number {
    return this.watches.size;
  }

  private send(w: Watch, change: Change): void {
    const event = seenBy(w, change);
    if (event && !w.stream.writableEnded) write(w.stream, { type: event.type, object: structuredClone(event.object) });
  }
}

function write(stream: PassThrough, event: { type: string; object: unknown }): void {
  stream.write(`${JSON.stringify(event)}\n`);
}
