import { type CapstanEvent } from '../envelope/cloud-event.js';
import { type EventSource } from './event-subject.js';
import { eventsInNamespace } from './subject-filters.js';

/**
 * The events of one workload cluster. Subjects name objects, not clusters, but every object of a
 * cluster lives in the Cluster's namespace and carries `data.clusterName`: the server filters by
 * namespace, the handler by cluster name.
 */
export interface ClusterEventSelector {
  /** NATS filter for the consumer: `capstan.*.*.<namespace>.>` (or one source). */
  filterSubject: string;
  matches(event: CapstanEvent): boolean;
}

export function clusterEvents(
  namespace: string,
  clusterName: string,
  source?: EventSource,
  root?: string,
): ClusterEventSelector {
  return {
    filterSubject: eventsInNamespace(namespace, source, root),
    matches: (event) => event.data.clusterName === clusterName && event.data.object.namespace === namespace,
  };
}
