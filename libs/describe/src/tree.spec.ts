import { humanDuration } from './human-duration.js';
import { type ClusterObjects, type DescribedObject } from './objects.js';
import { buildTree, formatParagraph, renderTree, treeRows } from './tree.js';

const now = new Date('2026-11-24T10:59:33Z');
const at = (secondsAgo: number) => new Date(now.getTime() - secondsAgo * 1000).toISOString();
const ok = (type: string, reason: string, secondsAgo: number, message = '') => ({
  type,
  status: 'True' as const,
  reason,
  message,
  lastTransitionTime: at(secondsAgo),
});

function machine(name: string, owner: { kind: string; name: string }, controlPlane: boolean, secondsAgo: number): DescribedObject {
  return {
    kind: 'Machine',
    metadata: {
      name,
      namespace: 'default',
      labels: controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {},
      ownerReferences: [{ ...owner, controller: true }],
    },
    spec: { version: 'v1.34.4' },
    status: { conditions: [ok('Available', 'Available', secondsAgo), ok('Ready', 'Ready', secondsAgo), ok('UpToDate', 'UpToDate', secondsAgo)] },
  };
}

/** The demo cluster as it was when upstream clusterctl v1.14.2 described it (ages relative to `now`). */
const demo: ClusterObjects = {
  cluster: {
    kind: 'Cluster',
    metadata: { name: 'demo', namespace: 'default' },
    status: {
      conditions: [ok('Available', 'Available', 13)],
      controlPlane: { desiredReplicas: 1, replicas: 1, readyReplicas: 1, availableReplicas: 1, upToDateReplicas: 1 },
      workers: { desiredReplicas: 2, replicas: 2, readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 2 },
    },
  },
  infrastructure: {
    kind: 'SimCluster',
    metadata: { name: 'demo', namespace: 'default' },
    status: { conditions: [ok('Ready', 'Provisioned', 21, 'control plane endpoint 127.0.0.1:20025')] },
  },
  controlPlane: {
    kind: 'K3sControlPlane',
    metadata: { name: 'demo-control-plane', namespace: 'default' },
    spec: { replicas: 1, version: 'v1.34.4' },
    status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, upToDateReplicas: 1, conditions: [ok('Available', 'Available', 16)] },
  },
  machineDeployments: [
    {
      kind: 'MachineDeployment',
      metadata: { name: 'demo-md-0', namespace: 'default' },
      spec: { replicas: 2, template: { spec: { version: 'v1.34.4' } } },
      status: { replicas: 2, readyReplicas: 2, availableReplicas: 2, upToDateReplicas: 2, conditions: [ok('Available', 'Available', 14)] },
    },
  ],
  machineSets: [
    { kind: 'MachineSet', metadata: { name: 'demo-md-0-ed038e0095', ownerReferences: [{ kind: 'MachineDeployment', name: 'demo-md-0', controller: true }] } },
  ],
  machines: [
    machine('demo-control-plane-mfbqs', { kind: 'K3sControlPlane', name: 'demo-control-plane' }, true, 16),
    machine('demo-md-0-ed038e0095-n96cs', { kind: 'MachineSet', name: 'demo-md-0-ed038e0095' }, false, 14),
    machine('demo-md-0-ed038e0095-m5wrt', { kind: 'MachineSet', name: 'demo-md-0-ed038e0095' }, false, 15),
  ],
};

// What `clusterctl describe cluster demo -n default` (v1.14.2) printed for that cluster, trailing spaces included.
const UPSTREAM = [
  'NAME                                                   REPLICAS AVAILABLE READY UP TO DATE STATUS REASON       SINCE MESSAGE                                                     ',
  'Cluster default/demo                                   3/3      3         3     3          True   Available    13s                                                               ',
  '├─K3sControlPlane default/demo-control-plane, v1.34.4  1/1      1         1     1          True   Available    16s                                                               ',
  '│ └─Machine default/demo-control-plane-mfbqs, v1.34.4  1        1         1     1          True   Ready        16s                                                               ',
  '├─SimCluster default/demo                                                                  True   Provisioned  21s   control plane endpoint 127.0.0.1:20025                      ',
  '└─Workers                                                                                                                                                                        ',
  '  └─MachineDeployment default/demo-md-0, v1.34.4       2/2      2         2     2          True   Available    14s                                                               ',
  '    └─2 Machines...                                             2         2     2          True   Ready        15s   See demo-md-0-ed038e0095-m5wrt, demo-md-0-ed038e0095-n96cs  ',
].join('\n');

describe('describe cluster tree', () => {
  it('prints what upstream clusterctl v1.14 prints for the same cluster, byte for byte', () => {
    expect(renderTree(treeRows(buildTree(demo), now))).toBe(UPSTREAM);
  });

  it('lists every machine without grouping, each with its own counters and version', () => {
    const rows = treeRows(buildTree(demo, { grouping: false }), now);
    expect(rows.map((r) => r.name)).toEqual([
      'Cluster default/demo',
      '├─K3sControlPlane default/demo-control-plane, v1.34.4',
      '│ └─Machine default/demo-control-plane-mfbqs, v1.34.4',
      '├─SimCluster default/demo',
      '└─Workers',
      '  └─MachineDeployment default/demo-md-0, v1.34.4',
      '    ├─Machine default/demo-md-0-ed038e0095-m5wrt, v1.34.4',
      '    └─Machine default/demo-md-0-ed038e0095-n96cs, v1.34.4',
    ]);
    expect(rows[6]).toMatchObject({ replicas: '1', available: '1', ready: '1', upToDate: '1', status: 'True', reason: 'Ready' });
  });

  it('keeps a machine of another state apart, names three or more grouped machines with "...", and marks deleted ones', () => {
    const sick: DescribedObject = {
      ...machine('demo-md-0-ed038e0095-zzzzz', { kind: 'MachineSet', name: 'demo-md-0-ed038e0095' }, false, 5),
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'NotReady', message: '* NodeHealthy: Node not ready', lastTransitionTime: at(5) },
          { type: 'UpToDate', status: 'True', reason: 'UpToDate', lastTransitionTime: at(5) },
        ],
      },
    };
    const third = machine('demo-md-0-ed038e0095-aaaaa', { kind: 'MachineSet', name: 'demo-md-0-ed038e0095' }, false, 20);
    third.metadata.deletionTimestamp = at(1);
    const rows = treeRows(buildTree({ ...demo, machines: [...demo.machines, sick, third] }), now);
    const names = rows.map((r) => r.name);
    expect(names.slice(-2)).toEqual(['    ├─3 Machines...', '    └─Machine default/demo-md-0-ed038e0095-zzzzz, v1.34.4']);
    expect(rows.at(-2)).toMatchObject({ replicas: '', ready: '3', since: '20s', message: 'See demo-md-0-ed038e0095-aaaaa, demo-md-0-ed038e0095-m5wrt, ...' });
    expect(rows.at(-1)).toMatchObject({ replicas: '1', available: '0', ready: '0', upToDate: '1', status: 'False', message: '* NodeHealthy: Node not ready' });
    const ungrouped = treeRows(buildTree({ ...demo, machines: [...demo.machines, third] }, { grouping: false }), now);
    expect(ungrouped.map((r) => r.name)).toContain('    ├─!! DELETED !! Machine default/demo-md-0-ed038e0095-aaaaa, v1.34.4');
  });

  it('wraps long messages at 100 columns onto rows of their own, under the tree', () => {
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    // A word goes to the next line when the line and the word (without the space) reach 100, as in clusterctl.
    expect(formatParagraph(`* ${words}`).split('\n')).toEqual([
      '* word0 word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 word12 word13 word14',
      '  word15 word16 word17 word18 word19 word20 word21 word22 word23 word24 word25 word26 word27 word28',
      '  word29',
    ]);
    const infrastructure = { ...demo.infrastructure!, status: { conditions: [{ ...ok('Ready', 'Provisioned', 21), message: `* ${words}` }] } };
    const rows = treeRows(buildTree({ ...demo, infrastructure }), now);
    const at3 = rows.findIndex((r) => r.name === '├─SimCluster default/demo');
    expect(rows[at3 + 1]).toMatchObject({ name: '│ ', message: '  word15 word16 word17 word18 word19 word20 word21 word22 word23 word24 word25 word26 word27 word28' });
    expect(rows[at3 + 2]).toMatchObject({ name: '│ ', message: '  word29' });
  });

  it('adds condition rows for the kinds asked for, and no colour unless asked', () => {
    const withConditions: ClusterObjects = {
      ...demo,
      cluster: { ...demo.cluster, status: { ...demo.cluster.status, conditions: [ok('Available', 'Available', 13), ok('InfrastructureReady', 'Provisioned', 20)] } },
    };
    const rows = treeRows(buildTree(withConditions, { showConditions: ['Cluster'] }), now);
    expect(rows[1]).toMatchObject({ name: '├─InfrastructureReady', status: 'True', reason: 'Provisioned' });
    expect(renderTree(rows)).not.toContain('\x1b[');
    expect(renderTree(rows, true)).toContain('\x1b[32mTrue\x1b[0m');
  });
});

describe('humanDuration', () => {
  it('prints ages as kubectl and clusterctl do', () => {
    const s = 1000;
    expect([0, 59, 119, 120, 150, 600, 10799, 3 * 3600, 3 * 3600 + 5 * 60, 8 * 3600, 50 * 3600, 9 * 86400, 800 * 86400].map((v) => humanDuration(v * s))).toEqual([
      '0s', '59s', '119s', '2m', '2m30s', '10m', '179m', '3h', '3h5m', '8h', '2d2h', '9d', '2y70d',
    ]);
    expect(humanDuration(-500)).toBe('0s');
  });
});
