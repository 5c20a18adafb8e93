import { MACHINE_NAME_LABEL } from '@capstan/node-agent';
import { formatLabelValue } from '@capstan/kube';
// What must hold of the management cluster's objects once the fleet has converged: no orphaned or duplicate
// Machines, InfraMachines (SimMachines), bootstrap configs (K3sConfigs) or Secrets, no Machine referencing an
// InfraMachine or bootstrap config that does not exist, and no stale Nodes in the workload clusters. Pure: works on
// listed objects, so it is unit-tested without servers.
//
// Garbage collection: the test environment runs no kube-controller-manager, so objects deleted only through owner
// references (the bootstrap data Secret and the plan Secret of a K3sConfig, as upstream's bootstrap provider
// leaves them to the garbage collector) stay behind once their owner is gone. Those are reported apart as
// `awaitingGc` (a real cluster's collector deletes them), not as orphans. Machines, SimMachines and K3sConfigs are
// deleted explicitly by the controllers (as upstream's Machine controller deletes its infrastructure and bootstrap
// objects), so a leftover of those is an orphan.

import { CLUSTER_SECRET_TYPE, LABELS, RESOURCES, type ResourceDefinition } from '@capstan/api';

/** Objects of the chaos suite's malformed-manifest phase carry this label and are left out of every check. */
export const MALFORMED_LABEL = 'chaos.capstan.dev/malformed';

export const CLUSTER_NAME_LABEL = LABELS.clusterName;
export const CONTROL_PLANE_LABEL = LABELS.controlPlane;
export const DEPLOYMENT_NAME_LABEL = LABELS.deploymentName;
export { MACHINE_NAME_LABEL };
export { CLUSTER_SECRET_TYPE };
export const MACHINE_PLAN_SECRET_TYPE = 'capstan.dev/machine-plan';
/** `<cluster>-<purpose>` Secrets a K3s cluster has (upstream util/secret purposes). */
export const CLUSTER_SECRET_PURPOSES = ['kubeconfig', 'ca', 'cca', 'etcd', 'proxy', 'sa', 'token'] as const;
/** A Machine younger than this is not judged on its references (its objects may not be listed yet). */
export const MACHINE_REF_GRACE_MS = 30_000;

export interface OwnerRef {
  apiVersion?: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerRef[];
  deletionTimestamp?: string | Date;
  creationTimestamp?: string | Date;
}

export interface Obj {
  kind?: string;
  metadata?: Meta;
}

export interface Ref {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export interface MachineLike extends Obj {
  spec?: {
    clusterName?: string;
    providerID?: string;
    infrastructureRef?: Ref;
    bootstrap?: { configRef?: Ref; dataSecretName?: string };
  };
  status?: { phase?: string; conditions?: ConditionLike[] };
}

export interface ConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ReplicatedLike extends Obj {
  spec?: { replicas?: number; clusterName?: string };
}

export interface SecretLike extends Obj {
  type?: string;
  data?: Record<string, string>;
}

export interface NodeLike extends Obj {
  spec?: { providerID?: string };
  status?: { conditions?: ConditionLike[] };
}

export interface FleetObjects {
  clusters: Obj[];
  machines: MachineLike[];
  machineSets: ReplicatedLike[];
  machineDeployments: ReplicatedLike[];
  controlPlanes: ReplicatedLike[];
  simMachines: Obj[];
  k3sConfigs: Obj[];
  secrets: SecretLike[];
}

export interface Finding {
  kind: string;
  name: string;
  problem: string;
}

export interface InvariantReport {
  orphans: Finding[];
  duplicates: Finding[];
  /** Left for the garbage collector, which this environment does not run (see the file comment). */
  awaitingGc: Finding[];
  /** Machines whose bootstrap config or infrastructure machine does not exist. */
  danglingRefs: Finding[];
}

const nameOf = (o: Obj) => o.metadata?.name ?? '';
const uidOf = (o: Obj) => o.metadata?.uid ?? '';
const deleting = (o: Obj) =>
  o.metadata?.deletionTimestamp !== undefined && o.metadata?.deletionTimestamp !== null;
/** Created less than `MACHINE_REF_GRACE_MS` before `now`; an unknown or unreadable creation time counts as old. */
const young = (o: Obj, now: number) =>
  now - new Date(o.metadata?.creationTimestamp ?? 0).getTime() < MACHINE_REF_GRACE_MS;
export const isMalformed = (o: Obj) => o.metadata?.labels?.[MALFORMED_LABEL] !== undefined;
const controllerOf = (o: Obj) => o.metadata?.ownerReferences?.find((r) => r.controller === true);

/**
 * Drops the malformed-manifest phase's objects: those labelled, those of a labelled cluster (by label or
 * `spec.clusterName`), whatever they own (transitively), and the infrastructure machines and bootstrap configs
 * their Machines reference.
 */
export function fleetOnly(objects: FleetObjects): FleetObjects {
  const malformedClusters = new Set(objects.clusters.filter(isMalformed).map(nameOf));
  if (malformedClusters.size === 0 && !Object.values(objects).some((list: Obj[]) => list.some(isMalformed)))
    return objects;
  const all: Obj[] = Object.values(objects).flat();
  const excluded = new Set<Obj>();
  const excludedUids = new Set<string>();
  const exclude = (o: Obj) => {
    excluded.add(o);
    if (uidOf(o)) excludedUids.add(uidOf(o));
  };
  const direct = (o: Obj) =>
    isMalformed(o) ||
    malformedClusters.has(o.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? '') ||
    malformedClusters.has((o as ReplicatedLike).spec?.clusterName ?? '');
  for (const o of all) if (direct(o)) exclude(o);
  for (let changed = true; changed;) {
    changed = false;
    for (const o of all) {
      if (!excluded.has(o) && o.metadata?.ownerReferences?.some((r) => excludedUids.has(r.uid))) {
        exclude(o);
        changed = true;
      }
    }
  }
  const referencedByExcluded = new Set(
    objects.machines
      .filter((m) => excluded.has(m))
      .flatMap((m) => [
        `SimMachine/${m.spec?.infrastructureRef?.name}`,
        `K3sConfig/${m.spec?.bootstrap?.configRef?.name}`,
      ]),
  );
  const keep = <T extends Obj>(list: T[], kind?: string) =>
    list.filter((o) => !excluded.has(o) && !(kind && referencedByExcluded.has(`${kind}/${nameOf(o)}`)));
  return {
    clusters: keep(objects.clusters),
    machines: keep(objects.machines),
    machineSets: keep(objects.machineSets),
    machineDeployments: keep(objects.machineDeployments),
    controlPlanes: keep(objects.controlPlanes),
    simMachines: keep(objects.simMachines, 'SimMachine'),
    k3sConfigs: keep(objects.k3sConfigs, 'K3sConfig'),
    secrets: keep(objects.secrets),
  };
}

function countBy<T>(items: T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined || k === '') continue;
    const list = groups.get(k) ?? [];
    list.push(item);
    groups.set(k, list);
  }
  return groups;
}

/**
 * Orphans and duplicates among the fleet's objects. `desired` gives, per cluster, how many control plane and worker
 * Machines it should have: more live ones than that is a duplicate (meaningful once converged). Dangling references:
 * live Machines (older than `MACHINE_REF_GRACE_MS` at `now`, in milliseconds since the epoch) whose bootstrap config
 * or infrastructure machine does not exist.
 */
export function checkInvariants(all: FleetObjects, now: number = Date.now()): InvariantReport {
  const objects = fleetOnly(all);
  const orphans: Finding[] = [];
  const duplicates: Finding[] = [];
  const awaitingGc: Finding[] = [];
  const danglingRefs: Finding[] = [];
  const clusters = new Set(objects.clusters.map(nameOf));
  const uids = new Set(
    [
      ...objects.clusters,
      ...objects.machines,
      ...objects.machineSets,
      ...objects.machineDeployments,
      ...objects.controlPlanes,
      ...objects.simMachines,
      ...objects.k3sConfigs,
    ].map(uidOf),
  );

  // Machines: in an existing cluster, controlled by an existing MachineSet or control plane.
  for (const machine of objects.machines) {
    if (deleting(machine)) continue;
    const name = nameOf(machine);
    const cluster = machine.spec?.clusterName ?? '';
    if (!clusters.has(cluster))
      orphans.push({ kind: 'Machine', name, problem: `its Cluster ${cluster || '(none)'} does not exist` });
    const owner = controllerOf(machine);
    if (!owner)
      orphans.push({
        kind: 'Machine',
        name,
        problem: 'has no controller owner (MachineSet or control plane)',
      });
    else if (!uids.has(owner.uid))
      orphans.push({
        kind: 'Machine',
        name,
        problem: `its controller ${owner.kind} ${owner.name} does not exist`,
      });
  }

  // More live Machines than the control plane or the MachineSet asks for.
  const live = objects.machines.filter((m) => !deleting(m));
  for (const [ownerUid, owned] of countBy(live, (m) => controllerOf(m)?.uid)) {
    const owner = [...objects.controlPlanes, ...objects.machineSets].find((o) => uidOf(o) === ownerUid);
    const wanted = owner?.spec?.replicas;
    if (owner && wanted !== undefined && owned.length > wanted) {
      duplicates.push({
        kind: 'Machine',
        name: owned.map(nameOf).sort().join(', '),
        problem: `${owned.length} live Machines for ${owner.kind ?? 'owner'} ${nameOf(owner)}, which wants ${wanted}`,
      });
    }
  }

  // Infrastructure machines and bootstrap configs: each referenced by exactly one Machine, and each live Machine's
  // reference (apiGroup, kind and name, in its namespace) names one that exists. The fleet's are SimMachines and
  // K3sConfigs, the only kinds listed: a reference to any other kind names nothing that exists here.
  const referenced = (
    resource: ResourceDefinition,
    role: string,
    list: Obj[],
    refOf: (m: MachineLike) => Ref | undefined,
  ) => {
    const kind = resource.kind;
    const existing = new Set(list.map(nameOf));
    for (const machine of objects.machines) {
      const ref = refOf(machine);
      if (!ref || deleting(machine) || young(machine, now)) continue;
      if (ref.apiGroup === resource.group && ref.kind === kind && existing.has(ref.name ?? '')) continue;
      danglingRefs.push({
        kind: 'Machine',
        name: nameOf(machine),
        problem: `in cluster ${machine.spec?.clusterName || '(none)'}, its ${role} ${ref.apiGroup ?? '(no group)'}/${ref.kind ?? '(no kind)'} ${ref.name ?? '(no name)'} does not exist`,
      });
    }
    const byName = countBy(objects.machines, (m) => {
      const ref = refOf(m);
      return ref?.kind === kind ? ref.name : undefined;
    });
    for (const [name, machines] of byName) {
      if (machines.length > 1)
        duplicates.push({
          kind,
          name,
          problem: `referenced by ${machines.length} Machines: ${machines.map(nameOf).sort().join(', ')}`,
        });
    }
    for (const object of list) {
      if (deleting(object)) continue;
      const name = nameOf(object);
      if (byName.has(name)) continue;
      // A template's clone for a Machine not yet created: owned by a live MachineSet or control plane, young.
      const owner = controllerOf(object) ?? object.metadata?.ownerReferences?.[0];
      orphans.push({
        kind,
        name,
        problem: owner
          ? `no Machine references it (owner ${owner.kind} ${owner.name}${uids.has(owner.uid) ? '' : ', gone'})`
          : 'no Machine references it and nothing owns it',
      });
    }
    // Two live objects of this kind owned by one Machine.
    for (const [ownerUid, owned] of countBy(
      list.filter((o) => !deleting(o)),
      (o) => o.metadata?.ownerReferences?.find((r) => r.kind === 'Machine')?.uid,
    )) {
      if (owned.length > 1) {
        const machine = objects.machines.find((m) => uidOf(m) === ownerUid);
        duplicates.push({
          kind,
          name: owned.map(nameOf).sort().join(', '),
          problem: `${owned.length} owned by Machine ${machine ? nameOf(machine) : ownerUid}`,
        });
      }
    }
  };
  referenced(
    RESOURCES.SimMachine,
    'infrastructure machine',
    objects.simMachines,
    (m) => m.spec?.infrastructureRef,
  );
  referenced(
    RESOURCES.K3sConfig,
    'bootstrap config',
    objects.k3sConfigs,
    (m) => m.spec?.bootstrap?.configRef,
  );

  // Secrets.
  const dataSecretsByConfig = new Map<string, string[]>();
  const planSecretsByMachine = new Map<string, string[]>();
  // The plan Secret's label holds the machine name as a label value (hashed past 63 characters).
  const machineNames = new Set(objects.machines.map((machine) => formatLabelValue(nameOf(machine))));
  for (const secret of objects.secrets) {
    if (deleting(secret)) continue;
    const name = nameOf(secret);
    const owner = controllerOf(secret);
    const cluster = secret.metadata?.labels?.[CLUSTER_NAME_LABEL];
    if (secret.type === MACHINE_PLAN_SECRET_TYPE) {
      const machine = secret.metadata?.labels?.[MACHINE_NAME_LABEL] ?? '';
      planSecretsByMachine.set(machine, [...(planSecretsByMachine.get(machine) ?? []), name]);
      if (owner && !uids.has(owner.uid))
        awaitingGc.push({
          kind: 'Secret',
          name,
          problem: `plan Secret; its owner ${owner.kind} ${owner.name} is gone`,
        });
      else if (!owner) orphans.push({ kind: 'Secret', name, problem: 'plan Secret without an owner' });
      else if (!machineNames.has(machine))
        orphans.push({
          kind: 'Secret',
          name,
          problem: `plan Secret of Machine ${machine || '(none)'}, which does not exist, while its owner ${owner.kind} ${owner.name} still does`,
        });
      continue;
    }
    if (secret.type !== CLUSTER_SECRET_TYPE) continue;
    if (owner?.kind === 'K3sConfig') {
      dataSecretsByConfig.set(owner.uid, [...(dataSecretsByConfig.get(owner.uid) ?? []), name]);
      if (!uids.has(owner.uid))
        awaitingGc.push({
          kind: 'Secret',
          name,
          problem: `bootstrap data; its K3sConfig ${owner.name} is gone`,
        });
      continue;
    }
    const purpose = cluster && name.startsWith(`${cluster}-`) ? name.slice(cluster.length + 1) : undefined;
    if (cluster !== undefined && !clusters.has(cluster)) {
      if (owner && !uids.has(owner.uid))
        awaitingGc.push({ kind: 'Secret', name, problem: `its owner ${owner.kind} ${owner.name} is gone` });
      else orphans.push({ kind: 'Secret', name, problem: `its Cluster ${cluster} does not exist` });
    } else if (cluster === undefined && !owner) {
      orphans.push({
        kind: 'Secret',
        name,
        problem: 'a cluster Secret with neither a cluster-name label nor an owner',
      });
    } else if (owner && !uids.has(owner.uid)) {
      awaitingGc.push({ kind: 'Secret', name, problem: `its owner ${owner.kind} ${owner.name} is gone` });
    } else if (
      !owner &&
      purpose !== undefined &&
      !(CLUSTER_SECRET_PURPOSES as readonly string[]).includes(purpose)
    ) {
      // Not one of the cluster's well-known Secrets and owned by nothing: nothing will ever read or delete it.
      orphans.push({
        kind: 'Secret',
        name,
        problem: `unknown Secret of cluster ${cluster} without an owner`,
      });
    }
  }
  for (const [configUid, names] of dataSecretsByConfig) {
    if (names.length > 1)
      duplicates.push({
        kind: 'Secret',
        name: names.sort().join(', '),
        problem: `${names.length} bootstrap data Secrets for one K3sConfig (${configUid})`,
      });
  }
  for (const [machine, names] of planSecretsByMachine) {
    if (names.length > 1)
      duplicates.push({
        kind: 'Secret',
        name: names.sort().join(', '),
        problem: `${names.length} plan Secrets for Machine ${machine}`,
      });
  }
  return { orphans, duplicates, awaitingGc, danglingRefs };
}

/**
 * Nodes against Machines: every Running Machine's Node exists and is Ready; a Node whose provider ID no Machine
 * has is stale (its machine was deleted but the host or its Node stayed). Takes all Machines of the namespace and the
 * Nodes listed through every cluster's endpoint (shared mode: each lists its own).
 */
export function checkNodes(
  machines: MachineLike[],
  nodes: NodeLike[],
  providerIdPrefix = 'sim://',
  liveClusters?: Set<string>,
): { missing: Finding[]; notReady: Finding[]; stale: Finding[]; ofDeletedClusters: Finding[] } {
  const byProviderId = new Map(nodes.map((n) => [n.spec?.providerID ?? '', n]));
  const machineIds = new Set(machines.map((m) => m.spec?.providerID).filter((id): id is string => !!id));
  const missing: Finding[] = [];
  const notReady: Finding[] = [];
  for (const machine of machines) {
    if (deleting(machine) || isMalformed(machine)) continue;
    const id = machine.spec?.providerID;
    if (!id) continue;
    const node = byProviderId.get(id);
    if (!node) missing.push({ kind: 'Node', name: id, problem: `Machine ${nameOf(machine)} has no Node` });
    else if (node.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') {
      notReady.push({
        kind: 'Node',
        name: nameOf(node),
        problem: `Node of Machine ${nameOf(machine)} is not Ready`,
      });
    }
  }
  const stale: Finding[] = [];
  const ofDeletedClusters: Finding[] = [];
  for (const n of nodes) {
    if (!(n.spec?.providerID ?? '').startsWith(providerIdPrefix) || machineIds.has(n.spec!.providerID!))
      continue;
    // The core annotates each Node with its cluster; a Node of a cluster that is gone is not a leftover of the fleet.
    const cluster = n.metadata?.annotations?.[CLUSTER_NAME_LABEL];
    if (liveClusters && cluster !== undefined && !liveClusters.has(cluster)) {
      ofDeletedClusters.push({
        kind: 'Node',
        name: nameOf(n),
        problem: `its Cluster ${cluster} was deleted, the Node stayed in the shared workload API server`,
      });
    } else {
      stale.push({
        kind: 'Node',
        name: nameOf(n),
        problem: `no Machine has its provider ID ${n.spec!.providerID!}`,
      });
    }
  }
  return { missing, notReady, stale, ofDeletedClusters };
}
