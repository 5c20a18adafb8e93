import { type Cluster, type Machine, type MachineDeployment } from '@capstan/api';
import { clusterRows, clustersTable, controlPlaneKey, type ControlPlaneLike } from './clusters.js';
import { machineRows, machinesTable } from './machines.js';
import { asList, renderTable } from './table.js';

const now = new Date('2026-11-21T12:00:00Z');
const meta = (namespace: string, name: string, minutesAgo: number) => ({
  namespace,
  name,
  creationTimestamp: new Date(now.getTime() - minutesAgo * 60_000).toISOString() as unknown as Date,
});

const cluster = (namespace: string, name: string, extra: Partial<Cluster> = {}): Cluster =>
  ({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: meta(namespace, name, 5),
    spec: {
      controlPlaneRef: { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane', name: `${name}-control-plane` },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name },
    },
    ...extra,
  }) as Cluster;

const md = (namespace: string, clusterName: string, name: string, replicas: number, ready?: number): MachineDeployment =>
  ({ metadata: { namespace, name }, spec: { clusterName, replicas }, status: ready === undefined ? undefined : { readyReplicas: ready } }) as MachineDeployment;

describe('renderTable', () => {
  it('pads every column but the last to its widest cell plus three spaces, as kubectl does', () => {
    expect(renderTable(['A', 'LONGER', 'C'], [['xxxx', 'y', 'z']]).split('\n')).toEqual(['A      LONGER   C', 'xxxx   y        z']);
  });
});

describe('asList', () => {
  it('wraps objects in a v1 List without their managedFields', () => {
    const list = asList([{ metadata: { name: 'a', managedFields: [{}] } }, { metadata: { name: 'b' } }]);
    expect(list).toEqual({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] });
  });
});

describe('get clusters table', () => {
  const controlPlanes = new Map<string, ControlPlaneLike>([
    [controlPlaneKey('K3sControlPlane', 'fleet', 'prod-control-plane'), { metadata: { namespace: 'fleet', name: 'prod-control-plane' }, spec: { replicas: 3, version: 'v1.34.4' }, status: { readyReplicas: 2 } }],
    // Same name, other kind: must not be taken for prod's control plane.
    [controlPlaneKey('OtherControlPlane', 'fleet', 'demo-control-plane'), { metadata: { namespace: 'fleet', name: 'demo-control-plane' }, spec: { replicas: 9, version: 'v9.9.9' } }],
  ]);
  const listing = {
    clusters: [
      cluster('fleet', 'prod', {
        spec: {
          controlPlaneRef: { apiGroup: 'controlplane.capstan.dev', kind: 'K3sControlPlane', name: 'prod-control-plane' },
          infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimCluster', name: 'prod' },
          controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 },
        },
        status: { phase: 'Provisioned', conditions: [{ type: 'Available', status: 'True', reason: 'Available', lastTransitionTime: '2026-11-21T11:58:00Z' }] },
      } as Partial<Cluster>),
      cluster('default', 'demo', { status: { phase: 'Provisioning', controlPlane: { desiredReplicas: 1, readyReplicas: 0 } } } as Partial<Cluster>),
      cluster('fleet', 'demo'),
    ],
    controlPlanes,
    machineDeployments: [
      md('fleet', 'prod', 'prod-md-0', 2, 2),
      md('fleet', 'prod', 'prod-gpu', 3, 1),
      md('default', 'prod', 'prod-md-0', 7, 7), // another namespace's "prod"
      md('default', 'demo', 'demo-md-0', 2),
    ],
  };

  it('shows phase, the control plane version and ready/desired machines, sorted by namespace and name', () => {
    expect(clustersTable(clusterRows(listing, now)).split('\n')).toEqual([
      'NAMESPACE   NAME   PHASE          VERSION   CONTROL PLANE   WORKERS   AGE',
      'default     demo   Provisioning   <none>    0/1             0/2       5m',
      'fleet       demo   <none>         <none>    <none>          0/0       5m',
      'fleet       prod   Provisioned    v1.34.4   2/3             3/5       5m',
    ]);
  });

  it('adds endpoint, infrastructure and the Available condition with -o wide', () => {
    const table = clustersTable(clusterRows(listing, now), { wide: true }).split('\n');
    expect(table[0]).toBe('NAMESPACE   NAME   PHASE          VERSION   CONTROL PLANE   WORKERS   AGE   ENDPOINT         INFRASTRUCTURE    AVAILABLE');
    expect(table[3]).toBe('fleet       prod   Provisioned    v1.34.4   2/3             3/5       5m    127.0.0.1:6443   SimCluster/prod   True');
    expect(table[1]).toMatch(/<none>\s+SimCluster\/demo\s+<none>$/);
  });
});

describe('get machines table', () => {
  const machine = (namespace: string, name: string, extra: Partial<Machine> = {}): Machine =>
    ({ metadata: { ...meta(namespace, name, 90), labels: {} }, spec: { clusterName: 'demo', version: 'v1.34.4' }, ...extra }) as Machine;
  const machines = [
    machine('default', 'demo-md-0-b'),
    machine('default', 'demo-control-plane-x', {
      spec: { clusterName: 'demo', version: 'v1.34.4', providerID: 'sim://demo/demo-control-plane-x' },
      status: {
        phase: 'Running',
        nodeRef: { name: 'demo-control-plane-x' },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: '2026-11-21T11:00:00Z' },
          { type: 'UpToDate', status: 'True', reason: 'UpToDate', lastTransitionTime: '2026-11-21T11:00:00Z' },
          { type: 'PlanApplied', status: 'False', reason: 'PlanFailed', lastTransitionTime: '2026-11-21T11:00:00Z' },
        ],
      },
    } as Partial<Machine>),
  ];

  it('shows cluster, node, provider ID, phase, version and age', () => {
    expect(machinesTable(machineRows(machines, now)).split('\n')).toEqual([
      'NAME                   CLUSTER   NODE                   PROVIDER ID                       PHASE     VERSION   AGE',
      'demo-control-plane-x   demo      demo-control-plane-x   sim://demo/demo-control-plane-x   Running   v1.34.4   90m',
      'demo-md-0-b            demo      <none>                 <none>                            <none>    v1.34.4   90m',
    ]);
  });

  it('adds UP TO DATE, READY and PLAN APPLIED with -o wide, and NAMESPACE first with -A', () => {
    const table = machinesTable(machineRows(machines, now), { wide: true, allNamespaces: true }).split('\n');
    expect(table[0]).toMatch(/^NAMESPACE {3}NAME .* AGE {3}UP TO DATE {3}READY {4}PLAN APPLIED$/);
    expect(table[1]).toMatch(/^default {5}demo-control-plane-x .* 90m {3}True {9}True {5}False$/);
    expect(table[2]).toMatch(/90m {3}<none> {7}<none> {3}<none>$/);
  });
});
