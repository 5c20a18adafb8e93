import { type ClusterObjects, type DescribedObject } from './objects.js';
import { buildTree, renderTree, treeRows } from './tree.js';

const now = new Date('2026-11-21T12:00:00Z');
const fiveMinutesAgo = '2026-11-21T11:55:00Z';
const ok = (type: string, reason = type) => ({ type, status: 'True' as const, reason, lastTransitionTime: fiveMinutesAgo });

function machine(name: string, owner: { kind: string; name: string }, controlPlane = false, ready = true): DescribedObject {
  return {
    kind: 'Machine',
    metadata: { name, labels: controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {}, ownerReferences: [{ ...owner, controller: true }] },
    status: {
      conditions: [
        ready ? ok('Ready') : { type: 'Ready', status: 'False', reason: 'NotReady', message: 'NodeHealthy: Node not ready\nmore', lastTransitionTime: fiveMinutesAgo },
        ok('Available'),
        ok('UpToDate'),
      ],
    },
  };
}

const objects: ClusterObjects = {
  cluster: {
    kind: 'Cluster',
    metadata: { name: 'demo' },
    status: {
      conditions: [ok('Available'), ok('InfrastructureReady', 'Ready')],
      controlPlane: { desiredReplicas: 1, replicas: 1, readyReplicas: 1, availableReplicas: 1, upToDateReplicas: 1 },
      workers: { desiredReplicas: 3, replicas: 3, readyReplicas: 2, availableReplicas: 3, upToDateReplicas: 3 },
    },
  },
  infrastructure: { kind: 'SimCluster', metadata: { name: 'demo' }, status: { conditions: [ok('Ready')] } },
  controlPlane: {
    kind: 'K3sControlPlane',
    metadata: { name: 'demo-control-plane' },
    spec: { replicas: 1 },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, upToDateReplicas: 1, conditions: [ok('Available')] },
  },
  machineDeployments: [
    { kind: 'MachineDeployment', metadata: { name: 'demo-md-0' }, spec: { replicas: 3 }, status: { replicas: 3, readyReplicas: 2, availableReplicas: 3, upToDateReplicas: 3, conditions: [ok('Available')] } },
  ],
  machineSets: [{ kind: 'MachineSet', metadata: { name: 'demo-md-0-abc', ownerReferences: [{ kind: 'MachineDeployment', name: 'demo-md-0', controller: true }] } }],
  machines: [
    machine('demo-control-plane-x1', { kind: 'K3sControlPlane', name: 'demo-control-plane' }, true),
    machine('demo-md-0-abc-1', { kind: 'MachineSet', name: 'demo-md-0-abc' }),
    machine('demo-md-0-abc-2', { kind: 'MachineSet', name: 'demo-md-0-abc' }),
    machine('demo-md-0-abc-3', { kind: 'MachineSet', name: 'demo-md-0-abc' }, false, false),
  ],
};

describe('describe cluster tree', () => {
  it('prints the clusterctl v1beta2 tree with grouped machines', () => {
    const text = renderTree(treeRows(buildTree(objects), now));
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^NAME\s+REPLICAS\s+AVAILABLE\s+READY\s+UP TO DATE\s+STATUS\s+REASON\s+SINCE\s+MESSAGE$/);
    const nameWidth = lines[0]!.indexOf('REPLICAS');
    const names = lines.slice(1).map((l) => l.slice(0, nameWidth).trimEnd());
    expect(names).toEqual([
      'Cluster/demo',
      '├─ClusterInfrastructure - SimCluster/demo',
      '├─ControlPlane - K3sControlPlane/demo-control-plane',
      '│ └─Machine/demo-control-plane-x1',
      '└─Workers',
      '  └─MachineDeployment/demo-md-0',
      '    ├─2 Machines...',
      '    └─Machine/demo-md-0-abc-3',
    ]);
    expect(lines[1]).toMatch(/Cluster\/demo\s+4\/4\s+4\s+3\s+4\s+Available: True\s+Available\s+5m/);
    expect(text).toContain('See demo-md-0-abc-1, demo-md-0-abc-2');
    expect(lines[8]).toMatch(/Ready: False\s+NotReady\s+5m\s+NodeHealthy: Node not ready$/);
  });

  it('adds condition rows for the kinds asked for, and no colour unless asked', () => {
    const rows = treeRows(buildTree(objects, { showConditions: ['Cluster'] }), now);
    expect(rows[1]!.name).toBe('├─InfrastructureReady');
    expect(rows[1]!.status).toBe('InfrastructureReady: True');
    expect(renderTree(rows)).not.toContain('\x1b[');
    expect(renderTree(rows, true)).toContain('\x1b[32mAvailable: True');
  });

  it('lists every machine when grouping is off', () => {
    const rows = treeRows(buildTree(objects, { grouping: false }), now);
    expect(rows.filter((r) => r.name.includes('Machine/demo-md-0-abc'))).toHaveLength(3);
  });

  it('shows a machine updating in place by its Updating condition, and whether each machine is up to date', () => {
    const updating: DescribedObject = {
      ...machine('demo-md-0-abc-2', { kind: 'MachineSet', name: 'demo-md-0-abc' }),
    };
    updating.status = {
      conditions: [
        ok('Ready'),
        ok('Available'),
        { type: 'UpToDate', status: 'False', reason: 'Updating', lastTransitionTime: fiveMinutesAgo },
        { type: 'Updating', status: 'True', reason: 'InPlaceUpdating', message: '* Updating in place to 5d1c0a9e2f', lastTransitionTime: fiveMinutesAgo },
      ],
    };
    const machines = objects.machines.map((m) => (m.metadata.name === 'demo-md-0-abc-2' ? updating : m));
    const rows = treeRows(buildTree({ ...objects, machines }), now);
    const row = rows.find((r) => r.name.endsWith('Machine/demo-md-0-abc-2'))!;
    expect(row).toMatchObject({ upToDate: 'No', status: 'Updating: True', reason: 'InPlaceUpdating', message: '* Updating in place to 5d1c0a9e2f' });
    expect(rows.find((r) => r.name.endsWith('Machine/demo-control-plane-x1'))!.upToDate).toBe('Yes');
  });
});
