import { type KubernetesObject } from '@kubernetes/client-node';
import { type Informer, isConflict, OwnWrites, type ReconcileContext, type ReconcileResult } from '@capstan/kube';
import { type LifecyclePublisher } from '../../handoff/lifecycle-publisher.js';

export interface ReconcileEnvelopeDeps<T extends KubernetesObject> {
  cache: Informer<T>;
  lifecycle: LifecyclePublisher;
  ownWrites?: OwnWrites;
}

/**
 * What the Cluster and Machine reconcilers do around their own logic: publish the lifecycle events still owed
 * for the key (even once the object is gone), read the object from the cache, start over after a conflict, and
 * come back with backoff while events are still owed.
 */
export function reconcileEnvelope<T extends KubernetesObject>(
  deps: ReconcileEnvelopeDeps<T>,
  reconcile: (obj: T, key: string, rc: ReconcileContext) => Promise<ReconcileResult | undefined>,
): (key: string, rc: ReconcileContext) => Promise<ReconcileResult | undefined> {
  return async (key, rc) => {
    const flushed = await deps.lifecycle.flush(key);
    const obj = deps.cache.get(key);
    if (!obj) {
      deps.ownWrites?.forget(key);
      return flushed ? undefined : { requeue: true };
    }
    try {
      const result = await reconcile(obj, key, rc);
      return deps.lifecycle.pending(key) > 0 && !result?.requeueAfter ? { requeue: true } : result;
    } catch (error) {
      if (isConflict(error)) {
        rc.log.debug('object changed while reconciling: starting over from the cache');
        return { requeue: true };
      }
      throw error;
    }
  };
}
