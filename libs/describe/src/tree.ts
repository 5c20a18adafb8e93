import { since } from './human-duration.js';
import { type ClusterObjects, type Condition, type DescribedObject } from './objects.js';

// `capstan describe cluster` prints what upstream clusterctl v1.14 prints for `describe cluster` (its v1beta2 view),
// row for row and column for column, so the two can be diffed: the same tree (the Cluster; its infrastructure, control
// plane with its Machines and a Workers node with MachineDeployments and their Machines, siblings in name order), the
// same names (`Kind namespace/name, version`), the same counters and conditions per kind, Machines of the same state
// grouped, long messages wrapped at 100 columns.

export interface TreeRow {
  /** Tree prefix + name, e.g. `├─K3sControlPlane default/demo-control-plane, v1.34.4`. */
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
  /** `all`, a kind (`Machine`) or `kind/name`: also list every other condition of those objects. */
  showConditions?: string[];
  /** Group machines of the same state into one row (clusterctl's default). */
  grouping?: boolean;
}

type Role = 'cluster' | 'controlPlane' | 'machineDeployment' | 'machine' | 'other';

interface Node {
  /** The name column without the tree prefix. */
  name: string;
  role?: Role;
  object?: DescribedObject;
  /** Machines shown as one row. */
  group?: DescribedObject[];
  /** A row for one more condition of its parent object (`--show-conditions`). */
  conditionOf?: DescribedObject;
  conditionType?: string;
  children: Node[];
}

export function condition(object: DescribedObject | undefined, type: string): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}

const LAST = '└─';
const MIDDLE = '├─';
const PIPE = '│ ';
const INDENT = '  ';
const MESSAGE_WIDTH = 100;

function isOwnedBy(child: DescribedObject, owner: DescribedObject): boolean {
  return (child.metadata.ownerReferences ?? []).some(
    (ref) => ref.kind === owner.kind && ref.name === owner.metadata.name && (ref.controller ?? true),
  );
}

const stringAt = (value: unknown): string => (typeof value === 'string' ? value : '');

/** `Kind namespace/name` plus the version for the kinds that have one, as clusterctl names rows. */
function rowName(object: DescribedObject, role: Role): string {
  const { namespace, name } = object.metadata;
  let text = `${object.kind} ${namespace ? `${namespace}/` : ''}${name}`;
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const templateSpec = ((spec['template'] as { spec?: Record<string, unknown> } | undefined)?.spec ?? {}) as Record<string, unknown>;
  if (role === 'cluster' && spec['topology'] !== undefined) text += `, ${stringAt((spec['topology'] as Record<string, unknown>)['version'])}`;
  if (role === 'controlPlane' && typeof spec['version'] === 'string') text += `, ${spec['version']}`;
  if (role === 'machineDeployment') text += `, ${stringAt(templateSpec['version'])}`;
  if (role === 'machine') text += `, ${stringAt(spec['version'])}`;
  return object.metadata.deletionTimestamp ? `!! DELETED !! ${text}` : text;
}

/** The state machines are grouped by: their Available, Ready and UpToDate conditions' status and reason. */
function stateKey(machine: DescribedObject): string {
  return ['Available', 'Ready', 'UpToDate']
    .map((type) => {
      const c = condition(machine, type);
      return c ? `${c.status}/${c.reason ?? ''}` : '-';
    })
    .join('|');
}

function machineNodes(machines: DescribedObject[], grouping: boolean): Node[] {
  const single = (m: DescribedObject): Node => ({ name: rowName(m, 'machine'), role: 'machine', object: m, children: [] });
  if (!grouping) return machines.map(single);
  const byState = new Map<string, DescribedObject[]>();
  for (const machine of machines) byState.set(stateKey(machine), [...(byState.get(stateKey(machine)) ?? []), machine]);
  return [...byState.values()].map((group) =>
    group.length === 1 ? single(group[0]!) : { name: `${group.length} Machines...`, group, children: [] },
  );
}

function conditionNodes(object: DescribedObject, shown: string | undefined, filters: string[]): Node[] {
  const wanted = filters.some((f) => f === 'all' || f === object.kind || f === `${object.kind}/${object.metadata.name}`);
  if (!wanted) return [];
  return (object.status?.conditions ?? [])
    .filter((c) => c.type !== shown)
    .map((c) => ({ name: c.type, conditionOf: object, conditionType: c.type, children: [] }));
}

/** The condition a row shows for its object, by role, as clusterctl picks it. */
function shownCondition(node: Node): Condition | undefined {
  if (node.conditionOf) return condition(node.conditionOf, node.conditionType!);
  if (node.group) {
    const readies = node.group.map((m) => condition(m, 'Ready')).filter((c): c is Condition => c !== undefined);
    if (readies.length === 0) return undefined;
    // The group's age is its oldest machine's.
    const oldest = readies.reduce((a, b) => ((a.lastTransitionTime ?? '') <= (b.lastTransitionTime ?? '') ? a : b));
    return { ...readies[0]!, lastTransitionTime: oldest.lastTransitionTime, message: '' };
  }
  const object = node.object;
  switch (node.role) {
    case 'cluster':
    case 'machineDeployment':
      return condition(object, 'Available');
    case 'controlPlane':
      return condition(object, 'Available') ?? condition(object, 'Ready');
    case 'machine':
    case 'other':
      return condition(object, 'Ready');
    default:
      return undefined;
  }
}

const counted = (value: number | undefined) => (value === undefined ? '' : String(value));
const ratio = (current: number | undefined, desired: number | undefined) =>
  desired === undefined ? '' : `${current ?? 0}/${desired}`;
const isTrue = (object: DescribedObject, type: string) => condition(object, type)?.status === 'True';

/** REPLICAS, AVAILABLE, READY and UP TO DATE of a row. */
function counters(node: Node): Pick<TreeRow, 'replicas' | 'available' | 'ready' | 'upToDate'> {
  const none = { replicas: '', available: '', ready: '', upToDate: '' };
  if (node.group) {
    const count = (type: string) => String(node.group!.filter((m) => isTrue(m, type)).length);
    return { replicas: '', available: count('Available'), ready: count('Ready'), upToDate: count('UpToDate') };
  }
  const object = node.object;
  if (!object) return none;
  const status = object.status ?? {};
  switch (node.role) {
    case 'cluster': {
      const cp = status.controlPlane ?? {};
      const w = status.workers ?? {};
      const sum = (a?: number, b?: number) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
      const anyReplicas = [cp.desiredReplicas, w.desiredReplicas, cp.replicas, w.replicas].some((v) => v !== undefined);
      return {
        replicas: anyReplicas ? `${(cp.replicas ?? 0) + (w.replicas ?? 0)}/${(cp.desiredReplicas ?? 0) + (w.desiredReplicas ?? 0)}` : '',
        available: counted(sum(cp.availableReplicas, w.availableReplicas)),
        ready: counted(sum(cp.readyReplicas, w.readyReplicas)),
        upToDate: counted(sum(cp.upToDateReplicas, w.upToDateReplicas)),
      };
    }
    case 'machineDeployment':
      return {
        replicas: ratio(status.replicas, object.spec?.replicas),
        available: counted(status.availableReplicas),
        ready: counted(status.readyReplicas),
        upToDate: counted(status.upToDateReplicas),
      };
    case 'controlPlane':
      return {
        replicas: status.replicas !== undefined && object.spec?.replicas !== undefined ? `${status.replicas}/${object.spec.replicas}` : '',
        available: counted(status.availableReplicas),
        ready: counted(status.readyReplicas),
        upToDate: counted(status.upToDateReplicas),
      };
    case 'machine':
      return {
        replicas: '1',
        available: isTrue(object, 'Available') ? '1' : '0',
        ready: isTrue(object, 'Ready') ? '1' : '0',
        upToDate: isTrue(object, 'UpToDate') ? '1' : '0',
      };
    default:
      return none;
  }
}

/** Wraps a condition message at `width` columns as clusterctl does; a `* ` bullet's continuation is indented. */
export function formatParagraph(text: string, width = MESSAGE_WIDTH): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const leading = /^ */.exec(line)![0];
    const indent = leading + (line.trim().startsWith('* ') ? '  ' : '');
    let current = leading;
    for (const word of line.split(/\s+/)) {
      if (current.length + word.length < width) {
        if (current.trim() !== '') current += ' ';
        current += word;
        continue;
      }
      out.push(current);
      current = indent + word;
    }
    out.push(current);
  }
  return out.join('\n');
}

/** Builds the tree clusterctl prints for a cluster. */
export function buildTree(objects: ClusterObjects, options: TreeOptions = {}): Node {
  const grouping = options.grouping ?? true;
  const filters = options.showConditions ?? [];
  const cluster = objects.cluster;
  const root: Node = { name: rowName(cluster, 'cluster'), role: 'cluster', object: cluster, children: [] };
  if (objects.infrastructure) {
    root.children.push({ name: rowName(objects.infrastructure, 'other'), role: 'other', object: objects.infrastructure, children: [] });
  }
  const isControlPlaneMachine = (m: DescribedObject) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined;
  const controlPlaneMachines = objects.controlPlane ? objects.machines.filter(isControlPlaneMachine) : [];
  if (objects.controlPlane) {
    root.children.push({
      name: rowName(objects.controlPlane, 'controlPlane'),
      role: 'controlPlane',
      object: objects.controlPlane,
      children: machineNodes(controlPlaneMachines, grouping),
    });
  }
  const workerMachines = objects.machines.filter((m) => !controlPlaneMachines.includes(m));
  if (workerMachines.length > 0) {
    const placed = new Set<DescribedObject>();
    const workers: Node = { name: 'Workers', children: [] };
    for (const md of objects.machineDeployments) {
      const sets = objects.machineSets.filter((ms) => isOwnedBy(ms, md));
      const machines = workerMachines.filter((m) => sets.some((ms) => isOwnedBy(m, ms)));
      machines.forEach((m) => placed.add(m));
      workers.children.push({ name: rowName(md, 'machineDeployment'), role: 'machineDeployment', object: md, children: machineNodes(machines, grouping) });
    }
    const others = workerMachines.filter((m) => !placed.has(m));
    if (others.length > 0) workers.children.push({ name: 'Other', children: machineNodes(others, false) });
    root.children.push(workers);
  }
  addConditionNodes(root, filters);
  return root;
}

function addConditionNodes(node: Node, filters: string[]): void {
  for (const child of node.children) addConditionNodes(child, filters);
  if (!node.object || node.group || node.conditionOf) return;
  node.children.unshift(...conditionNodes(node.object, shownCondition(node)?.type, filters));
}

/** Children in clusterctl's order: condition rows first, then objects by name. */
function ordered(children: Node[]): Node[] {
  const conditions = children.filter((c) => c.conditionOf);
  const objects = children.filter((c) => !c.conditionOf).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [...conditions, ...objects];
}

function health(c: Condition | undefined, node: Node): TreeRow['health'] {
  if (!c) return node.object || node.group ? 'unknown' : 'none';
  return c.status === 'True' ? 'good' : c.status === 'False' ? 'bad' : 'unknown';
}

/** Flattens the tree into rows with clusterctl's `├─`, `└─` and `│ ` prefixes; wrapped messages get rows of their own. */
export function treeRows(root: Node, now = new Date()): TreeRow[] {
  const rows: TreeRow[] = [];
  const emit = (node: Node, prefix: string, continuation: string) => {
    const c = shownCondition(node);
    const lines = node.group
      ? [seeMachines(node.group)]
      : formatParagraph(c?.message ?? '').split('\n');
    rows.push({
      name: `${prefix}${node.name}`,
      ...(node.conditionOf ? { replicas: '', available: '', ready: '', upToDate: '' } : counters(node)),
      status: c?.status ?? '',
      reason: c?.reason ?? '',
      since: since(c?.lastTransitionTime, now),
      message: lines[0] ?? '',
      health: health(c, node),
    });
    for (const line of lines.slice(1)) {
      rows.push({ name: continuation, replicas: '', available: '', ready: '', upToDate: '', status: '', reason: '', since: '', message: line, health: 'none' });
    }
  };
  const walk = (node: Node, prefix: string, indent: string, lastInTree: boolean) => {
    const children = ordered(node.children);
    // Wrapped lines continue under the row: a pipe where the tree goes on below.
    emit(node, prefix, lastInTree ? '' : `${indent}${children.length > 0 ? PIPE : ''}`);
    children.forEach((child, i) => {
      const last = i === children.length - 1;
      walk(child, `${indent}${last ? LAST : MIDDLE}`, `${indent}${last ? INDENT : PIPE}`, lastInTree && last);
    });
  };
  walk(root, '', '', true);
  return rows;
}

function seeMachines(group: DescribedObject[]): string {
  const names = group.map((m) => m.metadata.name).sort();
  return names.length <= 2 ? `See ${names.join(', ')}` : `See ${names.slice(0, 2).join(', ')}, ...`;
}

export const TREE_COLUMNS = ['NAME', 'REPLICAS', 'AVAILABLE', 'READY', 'UP TO DATE', 'STATUS', 'REASON', 'SINCE', 'MESSAGE'] as const;

const COLOURS = { good: '\x1b[32m', bad: '\x1b[31m', unknown: '\x1b[33m', none: '' } as const;

/**
 * The table as clusterctl's writer lays it out: each column as wide as its header plus one space or its widest cell
 * plus two, whichever is more, and every line padded to the full width. Colour (status column) only when asked.
 */
export function renderTree(rows: TreeRow[], colour = false): string {
  const cells = rows.map((r) => [r.name, r.replicas, r.available, r.ready, r.upToDate, r.status, r.reason, r.since, r.message]);
  const widths = TREE_COLUMNS.map((h, i) => Math.max(h.length + 1, ...cells.map((c) => c[i]!.length + 2)));
  const header = TREE_COLUMNS.map((h, i) => h.padEnd(widths[i]!)).join('');
  const line = (values: readonly string[], row: TreeRow) =>
    values
      .map((v, i) => {
        const padded = v.padEnd(widths[i]!);
        return colour && i === 5 && row.health !== 'none' && v ? `${COLOURS[row.health]}${v}\x1b[0m${padded.slice(v.length)}` : padded;
      })
      .join('');
  return [header, ...cells.map((c, i) => line(c, rows[i]!))].join('\n');
}
