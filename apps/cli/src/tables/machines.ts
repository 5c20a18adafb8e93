import { ConditionType, type Machine } from '@capstan/api';
import { cell, creationAge, key, renderTable } from './table.js';

export interface MachineRow {
  namespace: string;
  name: string;
  cluster: string;
  node: string;
  providerID: string;
  phase: string;
  version: string;
  age: string;
  upToDate: string;
  ready: string;
  /** The status of Capstan's PlanApplied condition: the node agent applied the machine's current plan. */
  planApplied: string;
}

export function machineRows(machines: readonly Machine[], now = new Date()): MachineRow[] {
  const status = (machine: Machine, type: string) => cell(machine.status?.conditions?.find((c) => c.type === type)?.status);
  return [...machines]
    .sort((a, b) => key(a.metadata.namespace, a.metadata.name).localeCompare(key(b.metadata.namespace, b.metadata.name)))
    .map((machine) => ({
      namespace: cell(machine.metadata.namespace),
      name: cell(machine.metadata.name),
      cluster: cell(machine.spec.clusterName),
      node: cell(machine.status?.nodeRef?.name),
      providerID: cell(machine.spec.providerID),
      phase: cell(machine.status?.phase),
      version: cell(machine.spec.version),
      age: cell(creationAge(machine.metadata.creationTimestamp, now)),
      upToDate: status(machine, ConditionType.UpToDate),
      ready: status(machine, ConditionType.Ready),
      planApplied: status(machine, ConditionType.PlanApplied),
    }));
}

/** With `allNamespaces`, a NAMESPACE column first, as kubectl's -A adds it. */
export function machinesTable(rows: readonly MachineRow[], options: { wide?: boolean; allNamespaces?: boolean } = {}): string {
  const header = ['NAME', 'CLUSTER', 'NODE', 'PROVIDER ID', 'PHASE', 'VERSION', 'AGE'];
  if (options.wide) header.push('UP TO DATE', 'READY', 'PLAN APPLIED');
  if (options.allNamespaces) header.unshift('NAMESPACE');
  return renderTable(
    header,
    rows.map((r) => [
      ...(options.allNamespaces ? [r.namespace] : []),
      r.name,
      r.cluster,
      r.node,
      r.providerID,
      r.phase,
      r.version,
      r.age,
      ...(options.wide ? [r.upToDate, r.ready, r.planApplied] : []),
    ]),
  );
}
