import { type KubernetesObject } from '@kubernetes/client-node';
import { deepEqual, type InformerRef, type WatchEvent } from '@capstan/kube';

/** A kind a controller reads, and how its changes wake the controller's primary objects. */
export interface WatchDeclaration<O extends KubernetesObject = KubernetesObject> {
  /** The kind (its shared informer), or a given informer (e.g. one scoped by label). */
  readonly source: InformerRef<O>;
  /** The primary keys a changed object concerns. */
  readonly map: (obj: O) => readonly string[];
  /** Only events this accepts wake anything (e.g. spec and metadata changes, not status writes). */
  readonly predicate?: (event: WatchEvent<O>) => boolean;
  /** Reconcile the mapped keys this long after the event: a burst of changes becomes one reconcile per key. */
  readonly batchMs?: number;
}

/**
 * Declares a watch with typed handlers: `map` and `predicate` receive the watched kind's type, so the declaration
 * needs no casts. `fingerprint` is a shorthand predicate: updates wake only when the fields it returns change.
 */
export function watch<O extends KubernetesObject>(
  source: InformerRef<O>,
  options: {
    map: (obj: O) => readonly string[];
    predicate?: (event: WatchEvent<O>) => boolean;
    fingerprint?: (obj: O) => unknown;
    batchMs?: number;
  },
): WatchDeclaration {
  const { fingerprint, predicate } = options;
  const accepts = fingerprint
    ? (event: WatchEvent<O>) =>
        (event.type !== 'update' ||
          !event.oldObject ||
          !deepEqual(fingerprint(event.oldObject), fingerprint(event.object))) &&
        (!predicate || predicate(event))
    : predicate;
  // The informer behind `source` delivers objects of kind O only, which is what the declaration's type says.
  return {
    source,
    map: options.map,
    predicate: accepts,
    batchMs: options.batchMs,
  } as unknown as WatchDeclaration;
}
