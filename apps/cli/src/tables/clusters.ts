import { type Cluster, type MachineDeployment } from '@capstan/api';
import { cell, creationAge, key, renderTable } from './table.js';

/** The fields `get clusters` reads from any control plane kind (the v1beta2 control plane contract). */
export interface ControlPlaneLike {
  metadata: { name?: string; namespace?: string };
  spec?: { replicas?: number; version?: string };
  status?: { readyReplicas?: number; version?: string };
}

export interface ClusterListing {
  clusters: readonly Cluster[];
  /** The clusters' control plane objects, by controlPlaneKey. */
  controlPlanes: ReadonlyMap<string, ControlPlaneLike>;
  machineDeployments: readonly MachineDeployment[];
}

export const controlPlaneKey = (kind: string, namespace: string | undefined, name: string | undefined): string =>
  `${kind}/${key(namespace, name)}`;

export interface ClusterRow {
  namespace: string;
  name: string;
  phase: string;
  version: string;
  /** ready/desired */
  controlPlane: string;
  /** ready/desired, summed over the cluster's MachineDeployments */
  workers: string;
  age: string;
  endpoint: string;
  infrastructure: string;
  available: string;
}

/** One row per Cluster, sorted by namespace and name. */
export function clusterRows(listing: ClusterListing, now = new Date()): ClusterRow[] {
  const workers = new Map<string, { ready: number; desired: number }>();
  for (const md of listing.machineDeployments) {
    const k = key(md.metadata.namespace, md.spec.clusterName);
    const sum = workers.get(k) ?? { ready: 0, desired: 0 };
    sum.ready += md.status?.readyReplicas ?? 0;
    sum.desired += md.spec.replicas ?? 0;
    workers.set(k, sum);
  }
  return [...listing.clusters]
    .sort((a, b) => key(a.metadata.namespace, a.metadata.name).localeCompare(key(b.metadata.namespace, b.metadata.name)))
    .map((cluster) => {
      const k = key(cluster.metadata.namespace, cluster.metadata.name);
      const ref = cluster.spec.controlPlaneRef;
      const cp = ref ? listing.controlPlanes.get(controlPlaneKey(ref.kind, cluster.metadata.namespace, ref.name)) : undefined;
      // The control plane object is the source; the Cluster's copy of its counters is the fallback.
      const cpReady = cp?.status?.readyReplicas ?? cluster.status?.controlPlane?.readyReplicas ?? 0;
      const cpDesired = cp?.spec?.replicas ?? cluster.status?.controlPlane?.desiredReplicas;
      const w = workers.get(k) ?? { ready: 0, desired: 0 };
      const endpoint = cluster.spec.controlPlaneEndpoint;
      const infra = cluster.spec.infrastructureRef;
      return {
        namespace: cell(cluster.metadata.namespace),
        name: cell(cluster.metadata.name),
        phase: cell(cluster.status?.phase),
        version: cell(cp?.spec?.version ?? cp?.status?.version),
        controlPlane: !ref || cpDesired === undefined ? cell(undefined) : `${cpReady}/${cpDesired}`,
        workers: `${w.ready}/${w.desired}`,
        age: cell(creationAge(cluster.metadata.creationTimestamp, now)),
        endpoint: cell(endpoint?.host ? `${endpoint.host}:${endpoint.port}` : undefined),
        infrastructure: cell(infra ? `${infra.kind}/${infra.name}` : undefined),
        available: cell(cluster.status?.conditions?.find((c) => c.type === 'Available')?.status),
      };
    });
}

export function clustersTable(rows: readonly ClusterRow[], options: { wide?: boolean } = {}): string {
  const header = ['NAMESPACE', 'NAME', 'PHASE', 'VERSION', 'CONTROL PLANE', 'WORKERS', 'AGE'];
  if (options.wide) header.push('ENDPOINT', 'INFRASTRUCTURE', 'AVAILABLE');
  return renderTable(
    header,
    rows.map((r) => [
      r.namespace,
      r.name,
      r.phase,
      r.version,
      r.controlPlane,
      r.workers,
      r.age,
      ...(options.wide ? [r.endpoint, r.infrastructure, r.available] : []),
    ]),
  );
}
