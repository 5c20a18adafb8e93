import { type ClusterObjects, type Condition, type DescribedObject } from './objects.js';

export interface TreeRow {
  /** Tree prefix + label, e.g. `├─ControlPlane - K3sControlPlane/demo`. */
  name: string;
  replicas: string;
  available: string;
  ready: string;
  upToDate: string;
  status: string;
  reason: string;
  since: string;
  message: string;
  /** Whether the row's condition is good, bad or unknown: used for colour only. */
  health: 'good' | 'bad' | 'unknown' | 'none';
}

export interface TreeOptions {
  /** `all`, a kind (`Machine`) or `kind/name`, as clusterctl's --show-conditions. */
  showConditions?: string[];
  /** Collapse machines that share status and reason into one row. */
  grouping?: boolean;
  now?: Date;
}

interface Node {
  label: string;
  object?: DescribedObject;
  counters?: { desired?: number; replicas?: number; available?: number; ready?: number; upToDate?: number };
  conditionType?: string;
  groupOf?: DescribedObject[];
  children: Node[];
}

/** The condition a row shows per kind, as clusterctl's v1beta2 tree does. */
const SUMMARY_CONDITION: Record<string, string> = {
  Cluster: 'Available',
  MachineDeployment: 'Available',
  MachineSet: 'MachinesReady',
  Machine: 'Ready',
};

function summaryConditionType(object: DescribedObject, role: 'infrastructure' | 'controlPlane' | 'other'): string {
  if (role === 'infrastructure') return 'Ready';
  if (role === 'controlPlane') return 'Available';
  return SUMMARY_CONDITION[object.kind] ?? 'Ready';
}

export function condition(object: DescribedObject | undefined, type: string): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}

export function since(time: string | undefined, now: Date): string {
  if (!time) return '';
  const seconds = Math.max(0, Math.floor((now.getTime() - new Date(time).getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

function counters(object: DescribedObject): Node['counters'] {
  const s = object.status ?? {};
  return { desired: object.spec?.replicas, replicas: s.replicas, available: s.availableReplicas, ready: s.readyReplicas, upToDate: s.upToDateReplicas };
}

function isOwnedBy(child: DescribedObject, owner: DescribedObject): boolean {
  return (child.metadata.ownerReferences ?? []).some(
    (ref) => ref.kind === owner.kind && ref.name === owner.metadata.name && (ref.controller ?? true),
  );
}

/** A machine being updated in place shows its `Updating` condition (what it is doing); any other its `Ready`. */
function machineConditionType(machine: DescribedObject): string {
  return condition(machine, 'Updating')?.status === 'True' ? 'Updating' : 'Ready';
}

function machineNodes(machines: DescribedObject[], grouping: boolean): Node[] {
  const sorted = [...machines].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const single = (m: DescribedObject): Node => ({ label: `Machine/${m.metadata.name}`, object: m, conditionType: machineConditionType(m), children: [] });
  if (!grouping || sorted.length < 2) return sorted.map(single);
  const groups = new Map<string, DescribedObject[]>();
  for (const machine of sorted) {
    const shown = machineConditionType(machine);
    const c = condition(machine, shown);
    const upToDate = condition(machine, 'UpToDate')?.status ?? 'None';
    const key = `${shown}/${c?.status ?? 'None'}/${c?.reason ?? ''}/${upToDate}`;
    groups.set(key, [...(groups.get(key) ?? []), machine]);
  }
  return [...groups.values()].map((group) =>
    group.length === 1
      ? single(group[0]!)
      : { label: `${group.length} Machines...`, object: group[0], groupOf: group, conditionType: machineConditionType(group[0]!), children: [] },
  );
}

/** A machine's own UP TO DATE cell, as clusterctl prints it: Yes or No from its UpToDate condition. */
function machineUpToDate(machine: DescribedObject): string {
  const status = condition(machine, 'UpToDate')?.status;
  return status === 'True' ? 'Yes' : status === 'False' ? 'No' : '';
}

/** Builds the tree clusterctl prints: Cluster, its infrastructure, control plane and machines, then workers. */
export function buildTree(objects: ClusterObjects, options: TreeOptions = {}): Node {
  const grouping = options.grouping ?? true;
  const cluster = objects.cluster;
  const cp = cluster.status?.controlPlane;
  const workers = cluster.status?.workers;
  const sum = (a?: number, b?: number) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  const root: Node = {
    label: `Cluster/${cluster.metadata.name}`,
    object: cluster,
    conditionType: 'Available',
    counters: {
      desired: sum(cp?.desiredReplicas, workers?.desiredReplicas),
      replicas: sum(cp?.replicas, workers?.replicas),
      available: sum(cp?.availableReplicas, workers?.availableReplicas),
      ready: sum(cp?.readyReplicas, workers?.readyReplicas),
      upToDate: sum(cp?.upToDateReplicas, workers?.upToDateReplicas),
    },
    children: [],
  };
  if (objects.infrastructure) {
    root.children.push({
      label: `ClusterInfrastructure - ${objects.infrastructure.kind}/${objects.infrastructure.metadata.name}`,
      object: objects.infrastructure,
      conditionType: summaryConditionType(objects.infrastructure, 'infrastructure'),
      children: [],
    });
  }
  const isControlPlaneMachine = (m: DescribedObject) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined;
  if (objects.controlPlane) {
    root.children.push({
      label: `ControlPlane - ${objects.controlPlane.kind}/${objects.controlPlane.metadata.name}`,
      object: objects.controlPlane,
      conditionType: summaryConditionType(objects.controlPlane, 'controlPlane'),
      counters: counters(objects.controlPlane),
      children: machineNodes(objects.machines.filter(isControlPlaneMachine), grouping),
    });
  }
  const workerMachines = objects.machines.filter((m) => !isControlPlaneMachine(m));
  const placed = new Set<DescribedObject>();
  const deploymentNodes = [...objects.machineDeployments]
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .map((md): Node => {
      const sets = objects.machineSets.filter((ms) => isOwnedBy(ms, md));
      const machines = workerMachines.filter((m) => sets.some((ms) => isOwnedBy(m, ms)));
      machines.forEach((m) => placed.add(m));
      return { label: `MachineDeployment/${md.metadata.name}`, object: md, conditionType: 'Available', counters: counters(md), children: machineNodes(machines, grouping) };
    });
  const loose = workerMachines.filter((m) => !placed.has(m));
  if (deploymentNodes.length > 0 || loose.length > 0) {
    root.children.push({ label: 'Workers', children: [...deploymentNodes, ...machineNodes(loose, grouping)] });
  }
  addConditionRows(root, options.showConditions ?? []);
  return root;
}

function wantsConditions(object: DescribedObject, filters: string[]): boolean {
  return filters.some((f) => f === 'all' || f === object.kind || f === `${object.kind}/${object.metadata.name}`);
}

function addConditionRows(node: Node, filters: string[]): void {
  for (const child of node.children) addConditionRows(child, filters);
  if (!node.object || node.groupOf || !wantsConditions(node.object, filters)) return;
  const others = (node.object.status?.conditions ?? []).filter((c) => c.type !== node.conditionType);
  node.children.unshift(...others.map((c): Node => ({ label: c.type, object: node.object, conditionType: c.type, children: [] })));
}

const fraction = (current?: number, desired?: number) =>
  current === undefined && desired === undefined ? '' : desired === undefined ? String(current ?? 0) : `${current ?? 0}/${desired}`;
const count = (value?: number) => (value === undefined ? '' : String(value));

function rowOf(node: Node, prefix: string, now: Date): TreeRow {
  const c = node.conditionType ? condition(node.object, node.conditionType) : undefined;
  const isConditionRow = node.object !== undefined && node.children.length === 0 && !node.label.includes('/') && !node.groupOf;
  const health: TreeRow['health'] = !c ? (node.object ? 'unknown' : 'none') : c.status === 'True' ? 'good' : c.status === 'False' ? 'bad' : 'unknown';
  const group = node.groupOf;
  const groupCount = (type: string) => group?.filter((m) => condition(m, type)?.status === 'True').length;
  return {
    name: `${prefix}${node.label}`,
    replicas: group ? String(group.length) : isConditionRow ? '' : fraction(node.counters?.replicas, node.counters?.desired),
    available: group ? count(groupCount('Available')) : isConditionRow ? '' : count(node.counters?.available),
    ready: group ? count(groupCount('Ready')) : isConditionRow ? '' : count(node.counters?.ready),
    upToDate: group
      ? count(groupCount('UpToDate'))
      : isConditionRow
        ? ''
        : node.object?.kind === 'Machine'
          ? machineUpToDate(node.object)
          : count(node.counters?.upToDate),
    status: c ? `${c.type}: ${c.status}` : '',
    reason: c?.reason ?? '',
    since: since(c?.lastTransitionTime, now),
    message: group ? `See ${group.map((m) => m.metadata.name).join(', ')}` : (c?.message ?? '').split('\n')[0]!,
    health,
  };
}

/** Flattens the tree into rows with the `├─`, `└─` and `│ ` prefixes of clusterctl. */
export function treeRows(root: Node, now = new Date()): TreeRow[] {
  const rows: TreeRow[] = [rowOf(root, '', now)];
  const walk = (node: Node, indent: string) => {
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1;
      rows.push(rowOf(child, `${indent}${last ? '└─' : '├─'}`, now));
      walk(child, `${indent}${last ? '  ' : '│ '}`);
    });
  };
  walk(root, '');
  return rows;
}

export const TREE_COLUMNS = ['NAME', 'REPLICAS', 'AVAILABLE', 'READY', 'UP TO DATE', 'STATUS', 'REASON', 'SINCE', 'MESSAGE'] as const;

const COLOURS = { good: '\x1b[32m', bad: '\x1b[31m', unknown: '\x1b[33m', none: '' } as const;

/** A left-aligned table; colour (status column only) when printing to a terminal. */
export function renderTree(rows: TreeRow[], colour = false): string {
  const cells = rows.map((r) => [r.name, r.replicas, r.available, r.ready, r.upToDate, r.status, r.reason, r.since, r.message]);
  const widths = TREE_COLUMNS.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: readonly string[], row?: TreeRow) =>
    values
      .map((v, i) => {
        const padded = i === values.length - 1 ? v : v.padEnd(widths[i]!);
        return colour && row && i === 5 && row.health !== 'none' && v ? `${COLOURS[row.health]}${padded}\x1b[0m` : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(TREE_COLUMNS), ...cells.map((c, i) => line(c, rows[i]))].join('\n');
}
