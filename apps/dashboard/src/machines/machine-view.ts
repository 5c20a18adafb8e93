import { RESOURCES, type Machine } from '@capstan/api';
import type { Informer, Manager } from '@capstan/kube';
import { machineRow, type MachineRow } from './machine-row.js';

/**
 * Every Machine of the management cluster as Cluster pages show it, from one informer for all users (the dashboard
 * filters per user: fleet-access.ts), grouped by their Cluster (`spec.clusterName` in their namespace). Rows are made
 * once per change, not per reader; a change is passed on only when a row changed (a write that changes nothing a page
 * shows is none).
 */
export class MachineView {
  private readonly informer: Informer<Machine>;
  /** `namespace/cluster` -> machine name -> row. */
  private readonly byCluster = new Map<string, Map<string, MachineRow>>();
  /** `namespace/machine` -> `namespace/cluster`: where to find a Machine's row when it changes or goes. */
  private readonly clusterOf = new Map<string, string>();
  private readonly listeners = new Map<string, Set<() => void>>();

  constructor(manager: Manager) {
    this.informer = manager.informer<Machine>(RESOURCES.Machine);
    this.informer.addEventHandler({
      onAdd: (machine) => this.upsert(machine),
      onUpdate: (_old, machine) => this.upsert(machine),
      onDelete: (machine) => this.remove(machine.metadata.namespace ?? '', machine.metadata.name ?? ''),
    });
  }

  /** Whether the first list has arrived (readiness). */
  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /** The rows of one Cluster's Machines: control plane first, then by name. */
  machinesOf(namespace: string, clusterName: string): MachineRow[] {
    const rows = [...(this.byCluster.get(clusterKey(namespace, clusterName))?.values() ?? [])];
    return rows.sort(
      (a, b) => Number(b.controlPlane) - Number(a.controlPlane) || a.name.localeCompare(b.name),
    );
  }

  /** Calls `listener` whenever a Machine of that Cluster is added, changed (as its row shows it) or removed. */
  subscribe(namespace: string, clusterName: string, listener: () => void): () => void {
    const key = clusterKey(namespace, clusterName);
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  private upsert(machine: Machine): void {
    const row = machineRow(machine);
    const key = clusterKey(row.namespace, machine.spec?.clusterName ?? '');
    const machineKey = `${row.namespace}/${row.name}`;
    const before = this.clusterOf.get(machineKey);
    // spec.clusterName is immutable, but a relist may bring a Machine of the same name made again for another Cluster.
    if (before !== undefined && before !== key) this.remove(row.namespace, row.name);
    let rows = this.byCluster.get(key);
    if (!rows) this.byCluster.set(key, (rows = new Map()));
    const previous = rows.get(row.name);
    rows.set(row.name, row);
    this.clusterOf.set(machineKey, key);
    if (previous && JSON.stringify(previous) === JSON.stringify(row)) return;
    this.emit(key);
  }

  private remove(namespace: string, name: string): void {
    const machineKey = `${namespace}/${name}`;
    const key = this.clusterOf.get(machineKey);
    if (key === undefined) return;
    this.clusterOf.delete(machineKey);
    const rows = this.byCluster.get(key);
    rows?.delete(name);
    if (rows?.size === 0) this.byCluster.delete(key);
    this.emit(key);
  }

  private emit(key: string): void {
    for (const listener of this.listeners.get(key) ?? []) listener();
  }
}

const clusterKey = (namespace: string, clusterName: string) => `${namespace}/${clusterName}`;
