import { RESOURCES, type Cluster } from '@capstan/api';
import type { Informer, Manager } from '@capstan/kube';
import { summarizeCluster, type ClusterSummary } from './cluster-summary.js';

/** A change of the fleet as a browser applies it: a row added or changed, or gone. */
export type FleetChange =
  { type: 'upsert'; cluster: ClusterSummary } | { type: 'delete'; namespace: string; name: string };

/**
 * Every Cluster of the management cluster, summarized, from one informer for all users (the dashboard filters per
 * user: fleet-access.ts). Summaries are made once per change, not per reader, and only changes a reader would see
 * are passed on (a status write that changes no summarized field is none).
 */
export class FleetView {
  private readonly informer: Informer<Cluster>;
  private readonly summaries = new Map<string, ClusterSummary>();
  private readonly listeners = new Set<(change: FleetChange) => void>();

  constructor(manager: Manager) {
    this.informer = manager.informer<Cluster>(RESOURCES.Cluster);
    this.informer.addEventHandler({
      onAdd: (cluster) => this.upsert(cluster),
      onUpdate: (_old, cluster) => this.upsert(cluster),
      onDelete: (cluster) => {
        const key = keyOf(cluster.metadata.namespace ?? '', cluster.metadata.name ?? '');
        if (!this.summaries.delete(key)) return;
        this.emit({
          type: 'delete',
          namespace: cluster.metadata.namespace ?? '',
          name: cluster.metadata.name ?? '',
        });
      },
    });
  }

  /** Whether the first list has arrived (readiness). */
  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /** Every summary, sorted by namespace and name. */
  list(): ClusterSummary[] {
    return [...this.summaries.values()].sort((a, b) =>
      keyOf(a.namespace, a.name).localeCompare(keyOf(b.namespace, b.name)),
    );
  }

  /** The summary of one Cluster, if the informer has it. */
  get(namespace: string, name: string): ClusterSummary | undefined {
    return this.summaries.get(keyOf(namespace, name));
  }

  /** When the Cluster the informer has as `namespace/name` was created (RFC 3339), if it has one. */
  createdAt(namespace: string, name: string): string | undefined {
    const created: unknown = this.informer.getByName(namespace, name)?.metadata.creationTimestamp;
    if (created instanceof Date) return created.toISOString();
    return typeof created === 'string' ? created : undefined;
  }

  /** The namespaces holding Clusters now. */
  namespaces(): string[] {
    return [...new Set([...this.summaries.values()].map((summary) => summary.namespace))].sort();
  }

  /** Calls `listener` with each change from now on; returns the unsubscribe. */
  subscribe(listener: (change: FleetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private upsert(cluster: Cluster): void {
    const summary = summarizeCluster(cluster);
    const key = keyOf(summary.namespace, summary.name);
    const before = this.summaries.get(key);
    this.summaries.set(key, summary);
    if (before && sameRow(before, summary)) return;
    this.emit({ type: 'upsert', cluster: summary });
  }

  private emit(change: FleetChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

/** Equal but for the resourceVersion: nothing a reader sees changed. */
function sameRow(a: ClusterSummary, b: ClusterSummary): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}
