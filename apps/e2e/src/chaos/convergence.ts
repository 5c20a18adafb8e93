// When the system counts as converged (pure; observer.ts gathers what it judges): every service replica alive and
// ready, every service's shard membership agreed by all its replicas; every Cluster of the fleet Available and not
// deleting; every cluster with exactly its control plane and worker Machines, all Running, none deleting; no
// orphaned or duplicate objects and no dangling references (invariants.ts); every Machine's Node present and Ready in
// its workload cluster and no stale Nodes.
import {
  CONTROL_PLANE_LABEL,
  checkInvariants,
  fleetOnly,
  type ConditionLike,
  type FleetObjects,
  type Obj,
} from './invariants.js';

export interface FleetExpectation {
  clusters: string[];
  controlPlanes: number;
  workers: number;
}

export interface ShardView {
  sharded: boolean;
  fenced?: boolean;
  view?: string[];
  published?: string[];
}

export interface ServiceProbe {
  service: string;
  replica: number;
  identity: string;
  pid: number;
  alive: boolean;
  ready: boolean;
  shards?: ShardView;
  error?: string;
}

const conditionOf = (o: { status?: { conditions?: ConditionLike[] } }, type: string) =>
  o.status?.conditions?.find((c) => c.type === type);
const isDeleting = (o: Obj) => !!o.metadata?.deletionTimestamp;

/** Why the services are not settled (empty: settled). */
export function serviceReasons(probes: ServiceProbe[]): string[] {
  const reasons: string[] = [];
  const byService = new Map<string, ServiceProbe[]>();
  for (const probe of probes) byService.set(probe.service, [...(byService.get(probe.service) ?? []), probe]);
  for (const [service, replicas] of byService) {
    const identities = replicas.map((r) => r.identity).sort();
    for (const r of replicas) {
      if (!r.alive) reasons.push(`${r.identity} is not running`);
      else if (!r.ready) reasons.push(`${r.identity} is not ready${r.error ? ` (${r.error})` : ''}`);
      else if (replicas.length > 1) {
        if (!r.shards?.sharded) reasons.push(`${r.identity}: no shard view${r.error ? ` (${r.error})` : ''}`);
        else if (r.shards.fenced) reasons.push(`${r.identity} is fenced`);
        else if (JSON.stringify([...(r.shards.view ?? [])].sort()) !== JSON.stringify(identities)) {
          reasons.push(
            `${r.identity} sees members [${(r.shards.view ?? []).join(', ')}] of ${service}, not [${identities.join(', ')}]`,
          );
        } else if (JSON.stringify([...(r.shards.published ?? [])].sort()) !== JSON.stringify(identities)) {
          reasons.push(
            `${r.identity} has published [${(r.shards.published ?? []).join(', ')}], not the full membership yet`,
          );
        }
      }
    }
  }
  return reasons;
}

/** Why the fleet's Clusters and Machines are not converged (empty: converged). Cheap: Clusters and Machines only. */
export function fleetReasons(
  expected: FleetExpectation,
  objects: Pick<FleetObjects, 'clusters' | 'machines'>,
): string[] {
  const fleet = fleetOnly({ ...emptyObjects(), ...objects });
  const reasons: string[] = [];
  const byName = new Map(fleet.clusters.map((c) => [c.metadata?.name ?? '', c]));
  for (const name of expected.clusters) {
    const cluster = byName.get(name) as (Obj & { status?: { conditions?: ConditionLike[] } }) | undefined;
    if (!cluster) {
      reasons.push(`Cluster ${name} does not exist`);
      continue;
    }
    if (isDeleting(cluster)) reasons.push(`Cluster ${name} is being deleted`);
    const available = conditionOf(cluster, 'Available');
    if (available?.status !== 'True') {
      reasons.push(
        `Cluster ${name} not Available${available ? ` (${available.reason ?? ''}${available.message ? `: ${available.message}` : ''})` : ''}`,
      );
    }
  }
  for (const cluster of fleet.clusters) {
    const name = cluster.metadata?.name ?? '';
    if (!expected.clusters.includes(name)) reasons.push(`unexpected Cluster ${name}`);
  }
  for (const name of expected.clusters) {
    const machines = fleet.machines.filter((m) => m.spec?.clusterName === name);
    const deleting = machines.filter(isDeleting);
    const live = machines.filter((m) => !isDeleting(m));
    const controlPlanes = live.filter((m) => CONTROL_PLANE_LABEL in (m.metadata?.labels ?? {}));
    const workers = live.length - controlPlanes.length;
    if (deleting.length > 0)
      reasons.push(
        `${name}: ${deleting.length} Machine(s) still being deleted (${deleting.map((m) => m.metadata?.name).join(', ')})`,
      );
    if (controlPlanes.length !== expected.controlPlanes)
      reasons.push(`${name}: ${controlPlanes.length} control plane Machines, want ${expected.controlPlanes}`);
    if (workers !== expected.workers)
      reasons.push(`${name}: ${workers} worker Machines, want ${expected.workers}`);
    for (const m of live) {
      if (m.status?.phase !== 'Running')
        reasons.push(`Machine ${m.metadata?.name} is ${m.status?.phase ?? 'without a phase'}`);
    }
  }
  return reasons;
}

/** Orphans, duplicates and dangling references as reasons. */
export function invariantReasons(objects: FleetObjects): string[] {
  const report = checkInvariants(objects);
  return [
    ...report.orphans.map((f) => `orphaned ${f.kind} ${f.name}: ${f.problem}`),
    ...report.duplicates.map((f) => `duplicate ${f.kind} ${f.name}: ${f.problem}`),
    ...report.danglingRefs.map((f) => `dangling reference of ${f.kind} ${f.name}: ${f.problem}`),
  ];
}

export function emptyObjects(): FleetObjects {
  return {
    clusters: [],
    machines: [],
    machineSets: [],
    machineDeployments: [],
    controlPlanes: [],
    simMachines: [],
    k3sConfigs: [],
    secrets: [],
  };
}
