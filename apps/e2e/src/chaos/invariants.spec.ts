import { BOOTSTRAP_GROUP, INFRASTRUCTURE_GROUP } from '@capstan/api';
import { fleetReasons, invariantReasons, serviceReasons, type ServiceProbe } from './convergence.js';
import {
  MACHINE_REF_GRACE_MS,
  MALFORMED_LABEL,
  checkInvariants,
  checkNodes,
  fleetOnly,
  type FleetObjects,
  type MachineLike,
  type Obj,
  type SecretLike,
} from './invariants.js';

const owner = (o: Obj) => ({
  kind: o.kind!,
  name: o.metadata!.name!,
  uid: o.metadata!.uid!,
  controller: true,
});
const obj = (
  kind: string,
  name: string,
  extra: Record<string, unknown> = {},
  labels: Record<string, string> = {},
): Obj & Record<string, unknown> => ({
  kind,
  metadata: { name, uid: `uid-${kind}-${name}`, labels: { 'cluster.x-k8s.io/cluster-name': 'a', ...labels } },
  ...extra,
});

/** Cluster `a`: a control plane of 1 and a MachineSet of 2, each Machine with its SimMachine, K3sConfig and Secrets. */
function fleet(): FleetObjects {
  const cluster = obj('Cluster', 'a', { status: { conditions: [{ type: 'Available', status: 'True' }] } });
  const kcp = obj('K3sControlPlane', 'a-cp', { spec: { replicas: 1 } });
  const md = obj('MachineDeployment', 'a-md', { spec: { replicas: 2 } });
  const ms = obj('MachineSet', 'a-md-1', { spec: { replicas: 2 } });
  ms.metadata!.ownerReferences = [owner(md)];
  const machines: MachineLike[] = [];
  const simMachines: Obj[] = [];
  const k3sConfigs: Obj[] = [];
  const secrets: SecretLike[] = ['kubeconfig', 'ca', 'cca', 'etcd', 'proxy', 'sa'].map((p) => ({
    ...obj('Secret', `a-${p}`),
    type: 'cluster.x-k8s.io/secret',
    metadata: { ...obj('Secret', `a-${p}`).metadata, ownerReferences: [owner(kcp)] },
  }));
  secrets.push({
    ...obj('Secret', 'a-token'),
    type: 'cluster.x-k8s.io/secret',
    metadata: { ...obj('Secret', 'a-token').metadata, ownerReferences: [owner(cluster)] },
  });
  for (const [name, controller, cp] of [
    ['a-cp-x', kcp, true],
    ['a-md-1-y', ms, false],
    ['a-md-1-z', ms, false],
  ] as const) {
    const machine: MachineLike = {
      ...obj('Machine', name, {}, cp ? { 'cluster.x-k8s.io/control-plane': '' } : {}),
      spec: {
        clusterName: 'a',
        providerID: `sim://ns/${name}`,
        infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimMachine', name },
        bootstrap: { configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'K3sConfig', name } },
      },
      status: { phase: 'Running' },
    };
    machine.metadata!.ownerReferences = [owner(controller)];
    machines.push(machine);
    const sim = obj('SimMachine', name);
    sim.metadata!.ownerReferences = [{ ...owner(machine), controller: true }];
    simMachines.push(sim);
    const config = obj('K3sConfig', name);
    config.metadata!.ownerReferences = [{ ...owner(machine), controller: true }];
    k3sConfigs.push(config);
    const data = obj('Secret', name);
    data.metadata!.ownerReferences = [owner(config)];
    secrets.push({ ...data, type: 'cluster.x-k8s.io/secret' });
    const plan = obj('Secret', `${name}-machine-plan`, {}, { 'capstan.dev/machine-name': name });
    plan.metadata!.ownerReferences = [owner(config)];
    secrets.push({ ...plan, type: 'capstan.dev/machine-plan' });
  }
  return {
    clusters: [cluster],
    machines,
    machineSets: [ms],
    machineDeployments: [md],
    controlPlanes: [kcp],
    simMachines,
    k3sConfigs,
    secrets,
  };
}

const expected = { clusters: ['a'], controlPlanes: 1, workers: 2 };

describe('invariants', () => {
  it('finds nothing wrong with a consistent fleet', () => {
    expect(checkInvariants(fleet())).toEqual({
      orphans: [],
      duplicates: [],
      awaitingGc: [],
      danglingRefs: [],
    });
    expect(fleetReasons(expected, fleet())).toEqual([]);
    expect(invariantReasons(fleet())).toEqual([]);
  });

  it('finds orphaned SimMachines, K3sConfigs and Machines whose owner is gone', () => {
    const f = fleet();
    f.simMachines.push(obj('SimMachine', 'leftover'));
    f.k3sConfigs.push(obj('K3sConfig', 'leftover2'));
    f.machines[1]!.metadata!.ownerReferences = [
      { kind: 'MachineSet', name: 'gone', uid: 'gone', controller: true },
    ];
    const { orphans } = checkInvariants(f);
    expect(orphans.map((o) => `${o.kind} ${o.name}`).sort()).toEqual([
      'K3sConfig leftover2',
      'Machine a-md-1-y',
      'SimMachine leftover',
    ]);
  });

  it('finds duplicates: more Machines than wanted, two Machines on one SimMachine, two SimMachines of one Machine', () => {
    const f = fleet();
    const extra = structuredClone(f.machines[1]!);
    extra.metadata!.name = 'a-md-1-w';
    extra.metadata!.uid = 'uid-w';
    f.machines.push(extra);
    const twin = structuredClone(f.simMachines[2]!);
    twin.metadata!.name = 'a-md-1-z-twin';
    twin.metadata!.uid = 'uid-twin';
    f.simMachines.push(twin);
    const problems = checkInvariants(f).duplicates.map((d) => d.problem);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('3 live Machines for MachineSet a-md-1, which wants 2'),
        expect.stringContaining('referenced by 2 Machines'),
        expect.stringContaining('2 owned by Machine a-md-1-z'),
      ]),
    );
    expect(fleetReasons(expected, f)).toContain('a: 3 worker Machines, want 2');
  });

  it('leaves Secrets whose owner is gone to the garbage collector, but not cluster Secrets nobody owns', () => {
    const f = fleet();
    f.k3sConfigs.splice(1, 1);
    f.machines.splice(1, 1);
    f.simMachines.splice(1, 1);
    f.secrets.push({ ...obj('Secret', 'a-mystery'), type: 'cluster.x-k8s.io/secret' });
    const report = checkInvariants(f);
    expect(report.awaitingGc.map((g) => g.name).sort()).toEqual(['a-md-1-y', 'a-md-1-y-machine-plan']);
    expect(report.orphans.map((o) => o.name)).toEqual(['a-mystery']);
  });

  it('leaves the malformed-manifest phase out: labelled objects, their clusters and what they own', () => {
    const f = fleet();
    const target = obj('Cluster', 'target', {}, { [MALFORMED_LABEL]: 'target' });
    target.metadata!.labels = { [MALFORMED_LABEL]: 'target' };
    f.clusters.push(target);
    const bad: MachineLike = {
      ...obj('Machine', 'bad', {}, { 'cluster.x-k8s.io/cluster-name': 'target' }),
      spec: { clusterName: 'target', infrastructureRef: { kind: 'SimMachine', name: 'bad-sim' } },
    };
    f.machines.push(bad);
    f.simMachines.push(obj('SimMachine', 'bad-sim', {}, { 'cluster.x-k8s.io/cluster-name': 'other' }));
    const ownedByBad = obj('K3sConfig', 'bad-config', {}, { 'cluster.x-k8s.io/cluster-name': 'other' });
    ownedByBad.metadata!.ownerReferences = [owner(bad)];
    f.k3sConfigs.push(ownedByBad);
    expect(fleetOnly(f).machines.map((m) => m.metadata!.name)).not.toContain('bad');
    expect(checkInvariants(f)).toEqual({ orphans: [], duplicates: [], awaitingGc: [], danglingRefs: [] });
    expect(fleetReasons(expected, f)).toEqual([]);
  });

  describe('dangling references', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    const dangling = (f: FleetObjects, at = now) =>
      checkInvariants(f, at).danglingRefs.map((d) => `${d.kind} ${d.name}: ${d.problem}`);

    it('passes a Machine whose K3sConfig and SimMachine exist', () => {
      const f = fleet();
      f.machines[1]!.metadata!.creationTimestamp = new Date(now - MACHINE_REF_GRACE_MS).toISOString();
      expect(dangling(f)).toEqual([]);
    });

    it('finds a Machine whose K3sConfig is missing', () => {
      const f = fleet();
      f.k3sConfigs.splice(1, 1);
      const problem =
        'Machine a-md-1-y: in cluster a, its bootstrap config bootstrap.capstan.dev/K3sConfig a-md-1-y does not exist';
      expect(dangling(f)).toEqual([problem]);
      expect(invariantReasons(f)).toContain(`dangling reference of ${problem}`);
    });

    it('finds a Machine whose SimMachine is missing, or whose reference names another API group', () => {
      const f = fleet();
      f.simMachines.splice(2, 1);
      f.machines[0]!.spec!.infrastructureRef!.apiGroup = 'infrastructure.cluster.x-k8s.io';
      expect(dangling(f)).toEqual([
        'Machine a-cp-x: in cluster a, its infrastructure machine infrastructure.cluster.x-k8s.io/SimMachine a-cp-x does not exist',
        'Machine a-md-1-z: in cluster a, its infrastructure machine infrastructure.capstan.dev/SimMachine a-md-1-z does not exist',
      ]);
    });

    it('ignores a Machine being deleted, and one younger than the grace until it is not', () => {
      const f = fleet();
      f.simMachines.splice(1, 2);
      f.k3sConfigs.splice(1, 2);
      f.machines[1]!.metadata!.deletionTimestamp = new Date(now).toISOString();
      f.machines[2]!.metadata!.creationTimestamp = new Date(now - MACHINE_REF_GRACE_MS + 1).toISOString();
      expect(dangling(f)).toEqual([]);
      expect(dangling(f, now + 1)).toEqual([
        'Machine a-md-1-z: in cluster a, its infrastructure machine infrastructure.capstan.dev/SimMachine a-md-1-z does not exist',
        'Machine a-md-1-z: in cluster a, its bootstrap config bootstrap.capstan.dev/K3sConfig a-md-1-z does not exist',
      ]);
    });
  });

  it('checks Nodes against Machines', () => {
    const { machines } = fleet();
    const node = (id: string, ready = 'True', cluster = 'a') => ({
      metadata: { name: id.split('/').pop(), annotations: { 'cluster.x-k8s.io/cluster-name': cluster } },
      spec: { providerID: id },
      status: { conditions: [{ type: 'Ready', status: ready }] },
    });
    const nodes = [
      node('sim://ns/a-cp-x'),
      node('sim://ns/a-md-1-y', 'False'),
      node('sim://ns/gone'),
      node('sim://ns/b-cp', 'True', 'b'),
    ];
    const result = checkNodes(machines, nodes, 'sim://ns/', new Set(['a']));
    expect(result.missing.map((f) => f.name)).toEqual(['sim://ns/a-md-1-z']);
    expect(result.notReady.map((f) => f.name)).toEqual(['a-md-1-y']);
    expect(result.stale.map((f) => f.name)).toEqual(['gone']);
    expect(result.ofDeletedClusters.map((f) => f.name)).toEqual(['b-cp']);
  });
});

describe('convergence', () => {
  it('wants every Cluster Available and every Machine Running, none deleting', () => {
    const f = fleet();
    f.clusters[0] = {
      ...f.clusters[0]!,
      status: { conditions: [{ type: 'Available', status: 'False', reason: 'RemoteConnectionProbeFailed' }] },
    } as Obj;
    f.machines[1]!.status = { phase: 'Provisioning' };
    f.machines[2]!.metadata!.deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(fleetReasons({ ...expected, clusters: ['a', 'b'] }, f)).toEqual([
      'Cluster a not Available (RemoteConnectionProbeFailed)',
      'Cluster b does not exist',
      'a: 1 Machine(s) still being deleted (a-md-1-z)',
      'a: 1 worker Machines, want 2',
      'Machine a-md-1-y is Provisioning',
      'b: 0 control plane Machines, want 1',
      'b: 0 worker Machines, want 2',
    ]);
  });

  it('wants every replica alive, ready and agreeing on the shard membership', () => {
    const probe = (service: string, replica: number, extra: Partial<ServiceProbe> = {}): ServiceProbe => ({
      service,
      replica,
      identity: `${service}-${replica}`,
      pid: 1,
      alive: true,
      ready: true,
      shards: {
        sharded: true,
        fenced: false,
        view: [`${service}-0`, `${service}-1`],
        published: [`${service}-1`, `${service}-0`],
      },
      ...extra,
    });
    expect(serviceReasons([probe('core', 0), probe('core', 1)])).toEqual([]);
    expect(
      serviceReasons([
        probe('core', 0, { alive: false }),
        probe('core', 1, {
          shards: { sharded: true, fenced: false, view: ['core-1'], published: ['core-1'] },
        }),
        probe('x', 0, { ready: false }),
        probe('x', 1, { shards: { sharded: true, fenced: true } }),
      ]),
    ).toEqual([
      'core-0 is not running',
      'core-1 sees members [core-1] of core, not [core-0, core-1]',
      'x-0 is not ready',
      'x-1 is fenced',
    ]);
  });
});
