import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import { CLUSTER_SECRET_TYPE, RESOURCES, type Cluster, type Condition, type Machine } from '@capstan/api';
import type { MachineHealthCheck, MachineSet } from '@capstan/api';
import { CLUSTER_NAME_LABEL, EVENTS_V1, isNotFound, NODES, SECRETS } from '@capstan/kube';
import type { HttpMethod, KubeEvent, ResourceClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { owedOn } from '@capstan/provider-kit';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import {
  createReadyCluster,
  createTemplates,
  eventually,
  machineTemplate,
  MachinePlayer,
  PLAYER_FIELD_MANAGER,
  resourceOf,
} from '../../testing/workload-env.js';

// The controllers' clock runs an hour ahead of the API server's: to them every object is an hour old, so startup
// timeouts have run out at once. The times the tests write are relative to that clock.
const AHEAD_MS = 3600_000;
const ago = (seconds: number) =>
  new Date(Date.now() + AHEAD_MS - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const REMEDIATE = { 'cluster.x-k8s.io/remediate-machine': '' };
const CONTROL_PLANE = { [CLUSTER_NAME_LABEL]: 'demo', pool: 'a', 'cluster.x-k8s.io/control-plane': '' };
const STARTING = { nodeStartupTimeoutSeconds: 7200 };
const notReady = (status: 'False' | 'Unknown') => ({ type: 'Ready', status, timeoutSeconds: 300 });
const READY_FALSE = { unhealthyNodeConditions: [notReady('False')] };
const READY_CHECKS = { unhealthyNodeConditions: [notReady('False'), notReady('Unknown')] };
const BOOTSTRAP_CHECK = {
  unhealthyMachineConditions: [
    { type: 'BootstrapConfigReady', status: 'False' as const, timeoutSeconds: 60 },
  ],
};

/**
 * The workload cluster: an in-memory API server serving Nodes, its reads answered over HTTP, since the health check
 * reaches Nodes through WorkloadClusters and the `<cluster>-kubeconfig` Secret, as in production. Without one it
 * judges no Machine healthy, nor one without Node timed out: it cannot tell that Node from one it cannot see.
 */
async function serveWorkloadCluster(
  api: InMemoryApiServer,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://workload');
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const request = {
      method: req.method as HttpMethod,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
    };
    api.send(request, abort.signal).then(
      (answer) => {
        res.writeHead(answer.statusCode, { 'Content-Type': 'application/json' });
        answer.body.on('error', () => res.destroy()).pipe(res);
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    // Refusing connections first keeps the controllers' Node informer from reconnecting while they stop.
    close: () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}

interface MachineSetup {
  cluster?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Its Node: Ready=True, gone (a nodeRef and no Node), or Ready in this status for `since` seconds. */
  node?: 'ready' | 'gone' | { status: 'True' | 'False' | 'Unknown'; since: number };
  /** Conditions of the Machine: status and seconds since. */
  conditions?: Record<string, ['True' | 'False', number]>;
  deleting?: boolean;
}

/** Seconds since the Cluster's ControlPlaneInitialized / InfrastructureReady became True; false: not (yet). */
type ClusterState = { controlPlane?: number | false; infrastructure?: number | false };

describe('MachineHealthCheck controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  let nodes: ResourceClient<V1Node>;
  let workloadCluster: { url: string; close(): Promise<void> };
  let machines: ResourceClient<Machine>;
  let checks: ResourceClient<MachineHealthCheck>;
  let player: MachinePlayer | undefined;

  beforeEach(async () => {
    bed = await startInMemoryWorkload({ now: () => new Date(Date.now() + AHEAD_MS) });
    const workload = new InMemoryApiServer([NODES]);
    nodes = workload.client().resource<V1Node>(NODES);
    workloadCluster = await serveWorkloadCluster(workload);
    machines = bed.client.resource<Machine>(RESOURCES.Machine);
    checks = bed.client.resource<MachineHealthCheck>(RESOURCES.MachineHealthCheck);
    await createReadyCluster(bed, 'demo');
    const kubeconfig = JSON.stringify({
      clusters: [{ name: 'workload', cluster: { server: workloadCluster.url } }],
      users: [{ name: 'workload', user: {} }],
      contexts: [{ name: 'workload', context: { cluster: 'workload', user: 'workload' } }],
      'current-context': 'workload',
    });
    await bed.client.resource(SECRETS).create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'demo-kubeconfig', namespace: bed.ns.name, labels: { [CLUSTER_NAME_LABEL]: 'demo' } },
      type: CLUSTER_SECRET_TYPE,
      data: { value: Buffer.from(kubeconfig).toString('base64') },
    } as KubernetesObject);
  });
  afterEach(async () => {
    await player?.stop();
    player = undefined;
    await workloadCluster.close();
    await bed.stop();
  });

  async function setClusterState(state: ClusterState): Promise<void> {
    const condition = (type: string, since: number | false = 7200) => {
      const status = since === false ? 'False' : 'True';
      return { type, status, reason: status, message: '', lastTransitionTime: ago(since || 0) };
    };
    const conditions = [
      condition('ControlPlaneInitialized', state.controlPlane),
      condition('InfrastructureReady', state.infrastructure),
    ];
    const cluster = {
      metadata: { name: 'demo', namespace: bed.ns.name },
      status: { conditions },
    } as unknown as Cluster;
    await bed.client
      .resource<Cluster>(RESOURCES.Cluster)
      .applyStatus(cluster, { fieldManager: PLAYER_FIELD_MANAGER });
  }

  async function setNodeReady(name: string, ready: { status: string; since: number }): Promise<void> {
    const condition = {
      type: 'Ready',
      status: ready.status,
      reason: 'Kubelet',
      lastTransitionTime: ago(ready.since),
    };
    await nodes.mergePatch({ name }, { status: { conditions: [condition] } }, { subresource: 'status' });
  }

  /** A Machine no owner controls, as the Machine controller and its providers left it (and its Node). */
  async function createMachine(name: string, setup: MachineSetup = {}): Promise<Machine> {
    const cluster = setup.cluster ?? 'demo';
    const providerID = `test://${name}`;
    await machines.create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: RESOURCES.Machine.kind,
      metadata: {
        name,
        namespace: bed.ns.name,
        labels: setup.labels ?? { [CLUSTER_NAME_LABEL]: cluster, pool: 'a' },
        annotations: setup.annotations,
        finalizers: setup.deleting ? ['test.capstan.dev/hold'] : undefined,
      },
      spec: {
        clusterName: cluster,
        providerID,
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: {
          apiGroup: 'infrastructure.generic.capstan.dev',
          kind: 'GenericInfrastructureMachine',
          name,
        },
      },
    } as Machine);
    if (setup.node && setup.node !== 'gone') {
      await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } });
      await setNodeReady(name, setup.node === 'ready' ? { status: 'True', since: 3600 } : setup.node);
    }
    const conditions = Object.entries(setup.conditions ?? {}).map(([type, [status, since]]) => {
      return { type, status, reason: type, message: '', lastTransitionTime: ago(since) };
    });
    const status = { ...(setup.node ? { nodeRef: { name } } : {}), conditions };
    const written = await machines.applyStatus(
      { metadata: { name, namespace: bed.ns.name }, status } as unknown as Machine,
      { fieldManager: PLAYER_FIELD_MANAGER },
    );
    if (setup.deleting) await machines.delete({ namespace: bed.ns.name, name });
    return written;
  }

  async function createHealthCheck(
    spec: Partial<MachineHealthCheck['spec']> = {},
    annotations?: Record<string, string>,
  ) {
    await checks.create({
      apiVersion: RESOURCES.MachineHealthCheck.apiVersion,
      kind: RESOURCES.MachineHealthCheck.kind,
      metadata: { name: 'mhc', namespace: bed.ns.name, annotations },
      spec: { clusterName: 'demo', selector: { matchLabels: { pool: 'a' } }, ...spec },
    } as MachineHealthCheck);
  }

  const healthCheck = () => checks.get({ namespace: bed.ns.name, name: 'mhc' });
  /** The health check once it judged `expected` Machines: it writes its status after their conditions. */
  const judged = (expected: number) =>
    eventually(
      `health check over ${expected} machines`,
      async () => {
        const mhc = await healthCheck();
        const current = mhc.status?.observedGeneration === mhc.metadata.generation;
        return current && mhc.status?.expectedMachines === expected ? mhc : undefined;
      },
      4000,
    );
  const orNone = (err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err));
  const machineNamed = (name: string) => machines.get({ namespace: bed.ns.name, name }).catch(orNone);
  const condition = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
    obj?.status?.conditions?.find((c) => c.type === type);
  const machineCondition = async (name: string, type: string) => condition(await machineNamed(name), type);
  const untilHealthCheck = (name: string, status: 'True' | 'False' | 'any') =>
    eventually(
      `${name} HealthCheckSucceeded ${status}`,
      async () => {
        const c = await machineCondition(name, 'HealthCheckSucceeded');
        return c && (status === 'any' || c.status === status) ? c : undefined;
      },
      4000,
    );
  const eventsFor = (reason: string) =>
    eventually(
      `${reason} event`,
      async () => {
        const events = await bed.client.resource<KubeEvent>(EVENTS_V1).list({ namespace: bed.ns.name });
        const found = events.items.filter((e) => e.reason === reason);
        return found.length > 0 ? found : undefined;
      },
      4000,
    );
  const failed = (reason: string, message: string) => ({
    status: 'False',
    reason,
    message: `Health check failed: ${message}`,
  });
  const startup = (duration: string) =>
    failed('NodeStartupTimeout', `Node failed to report startup in ${duration}`);
  const annotated = failed(
    'HasRemediateAnnotation',
    'marked for remediation via cluster.x-k8s.io/remediate-machine annotation',
  );
  const healthy = { status: 'True', reason: 'HealthCheckSucceeded' };

  describe('judges each Machine it selects', () => {
    type Verdict = { status: string; reason: string; message?: string };
    interface Case {
      title: string;
      machine: MachineSetup;
      checks?: MachineHealthCheck['spec']['checks'];
      cluster?: ClusterState;
      /** HealthCheckSucceeded as written on the Machine; none: not judged (yet). */
      verdict?: Verdict;
    }
    it.each<Case>([
      {
        title: 'a Machine whose Node is Ready is healthy',
        machine: { node: 'ready' },
        checks: READY_CHECKS,
        verdict: healthy,
      },
      { title: 'no Node past the default 10m startup timeout', machine: {}, verdict: startup('10m0s') },
      {
        title: 'no Node past the shortest startup timeout',
        machine: {},
        checks: { nodeStartupTimeoutSeconds: 30 },
        verdict: startup('30s'),
      },
      { title: 'no Node yet within its startup timeout', machine: {}, checks: STARTING },
      {
        title: 'no Node with the startup check disabled',
        machine: {},
        checks: { nodeStartupTimeoutSeconds: 0 },
      },
      {
        title: 'no Node, its infrastructure ready 100 s ago',
        machine: { conditions: { InfrastructureReady: ['True', 100] } },
      },
      {
        title: 'no Node, its infrastructure ready 700 s ago',
        machine: { conditions: { InfrastructureReady: ['True', 700] } },
        verdict: startup('10m0s'),
      },
      { title: 'no Node, control plane initialized 100 s ago', machine: {}, cluster: { controlPlane: 100 } },
      {
        title: 'no Node, cluster infrastructure ready 100 s ago',
        machine: {},
        cluster: { infrastructure: 100 },
      },
      {
        title: 'a worker without Node before the control plane is up',
        machine: {},
        cluster: { controlPlane: false },
      },
      {
        title: 'a control plane Machine without Node before the control plane is up',
        machine: { labels: CONTROL_PLANE },
        cluster: { controlPlane: false },
        verdict: startup('10m0s'),
      },
      {
        title: 'a control plane Machine without Node before the infrastructure is ready',
        machine: { labels: CONTROL_PLANE },
        cluster: { infrastructure: false },
      },
      {
        title: 'a Machine marked remediate-machine before the control plane is up',
        machine: { annotations: REMEDIATE },
        cluster: { controlPlane: false },
        verdict: annotated,
      },
      {
        title: 'a Machine marked remediate-machine with a Ready Node',
        machine: { node: 'ready', annotations: REMEDIATE },
        verdict: annotated,
      },
      {
        title: 'a Machine whose Node is gone',
        machine: { node: 'gone' },
        verdict: failed('NodeDeleted', 'Node m has been deleted'),
      },
      {
        title: 'a Node NotReady past its timeout',
        machine: { node: { status: 'False', since: 600 } },
        checks: READY_CHECKS,
        verdict: failed(
          'UnhealthyNode',
          'Condition Ready on Node is reporting status False for more than 5m0s',
        ),
      },
      {
        title: 'a Node Unknown within its timeout',
        machine: { node: { status: 'Unknown', since: 100 } },
        checks: READY_CHECKS,
      },
      {
        title: 'a Node Unknown no check names',
        machine: { node: { status: 'Unknown', since: 600 } },
        checks: READY_FALSE,
        verdict: healthy,
      },
      {
        title: 'a Machine condition past its timeout',
        machine: { node: 'ready', conditions: { BootstrapConfigReady: ['False', 120] } },
        checks: BOOTSTRAP_CHECK,
        verdict: failed(
          'UnhealthyMachine',
          'Condition BootstrapConfigReady on Machine is reporting status False for more than 1m0s',
        ),
      },
      {
        title: 'a Machine condition within its timeout',
        machine: { node: 'ready', conditions: { BootstrapConfigReady: ['False', 30] } },
        checks: BOOTSTRAP_CHECK,
      },
      { title: 'a deleting Machine with a Ready Node', machine: { node: 'ready', deleting: true } },
    ])('$title', async ({ machine, checks: spec, cluster, verdict }) => {
      if (cluster) await setClusterState(cluster);
      await createMachine('m', machine);
      await createHealthCheck({ checks: spec });
      expect((await judged(1)).status).toMatchObject({
        targets: ['m'],
        currentHealthy: verdict === healthy ? 1 : 0,
      });
      const current = await machineNamed('m');
      expect(condition(current, 'HealthCheckSucceeded')).toEqual(verdict && expect.objectContaining(verdict));
      // Remediation is allowed (no triggerIf): an unhealthy Machine is handed to its owner, no other.
      const asked =
        verdict?.status === 'False' ? { status: 'False', reason: 'WaitingForRemediation' } : undefined;
      expect(condition(current, 'OwnerRemediated')).toEqual(asked && expect.objectContaining(asked));
    });

    it('leaves a Machine without Node alone while its workload cluster cannot be read', async () => {
      await createReadyCluster(bed, 'dark');
      await createMachine('m', { cluster: 'dark' });
      await createMachine('marked', { cluster: 'dark', annotations: REMEDIATE });
      await createHealthCheck({ clusterName: 'dark' });
      expect((await judged(2)).status).toMatchObject({ currentHealthy: 0, targets: ['m', 'marked'] });
      expect(await machineCondition('m', 'HealthCheckSucceeded')).toBeUndefined();
      expect(await machineCondition('marked', 'HealthCheckSucceeded')).toMatchObject(annotated);
    });
  });

  describe('remediates only within spec.remediation.triggerIf', () => {
    interface Case {
      limit: string;
      triggerIf?: NonNullable<MachineHealthCheck['spec']['remediation']>['triggerIf'];
      healthy: number;
      marked: number;
      starting: number;
      remaining?: number;
      /** Why remediation is not allowed; none: allowed. */
      message?: string;
    }
    const restricted = (what: string, total: number, unhealthy: number, limit: string) =>
      `Remediation is not allowed, the number of not started or unhealthy machines ${what} ` +
      `(total: ${total}, unhealthy: ${unhealthy}, ${limit})`;
    const exceeds = (total: number, unhealthy: number, limit: string | number) =>
      restricted(
        'exceeds unhealthyLessThanOrEqualTo',
        total,
        unhealthy,
        `unhealthyLessThanOrEqualTo: ${limit}`,
      );
    const outside = (total: number, unhealthy: number, range: string) =>
      restricted('does not fall within the range', total, unhealthy, `unhealthyInRange: ${range}`);
    const atMost = (limit: number | string) => ({
      limit: `at most ${limit}`,
      triggerIf: { unhealthyLessThanOrEqualTo: limit },
    });
    const inRange = (range: string) => ({ limit: `in ${range}`, triggerIf: { unhealthyInRange: range } });
    it.each<Case>([
      { limit: 'no limit', healthy: 2, marked: 1, starting: 0, remaining: 2 },
      { ...atMost(1), healthy: 2, marked: 1, starting: 0, remaining: 0 },
      { ...atMost(1), healthy: 1, marked: 1, starting: 1, message: exceeds(3, 2, 1) },
      { ...atMost(0), healthy: 1, marked: 1, starting: 0, message: exceeds(2, 1, 0) },
      { ...atMost('50%'), healthy: 2, marked: 2, starting: 0, remaining: 0 },
      { ...atMost('30%'), healthy: 3, marked: 2, starting: 0, message: exceeds(5, 2, '30%') },
      { ...inRange('[1-3]'), healthy: 2, marked: 1, starting: 0, remaining: 2 },
      { ...inRange('[2-3]'), healthy: 2, marked: 1, starting: 0, message: outside(3, 1, '[2-3]') },
      { ...inRange('[1-2]'), healthy: 0, marked: 1, starting: 2, message: outside(3, 3, '[1-2]') },
      {
        ...inRange('[3-1]'),
        healthy: 1,
        marked: 1,
        starting: 0,
        message: 'spec.remediation.triggerIf.unhealthyInRange [3-1] is not a range [min-max]',
      },
    ])('unhealthy $limit: $healthy healthy, $marked unhealthy, $starting starting', async (row) => {
      const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
      for (const name of names('healthy', row.healthy)) await createMachine(name, { node: 'ready' });
      for (const name of names('marked', row.marked))
        await createMachine(name, { node: 'ready', annotations: REMEDIATE });
      for (const name of names('starting', row.starting)) await createMachine(name);
      await createHealthCheck({
        checks: STARTING,
        remediation: row.triggerIf && { triggerIf: row.triggerIf },
      });
      const mhc = await judged(row.healthy + row.marked + row.starting);
      const allowed = row.message === undefined;
      expect(mhc.status).toMatchObject({
        currentHealthy: row.healthy,
        remediationsAllowed: row.remaining ?? 0,
      });
      expect(condition(mhc, 'RemediationAllowed')).toMatchObject(
        allowed
          ? { status: 'True', reason: 'RemediationAllowed' }
          : { status: 'False', reason: 'TooManyUnhealthy', message: row.message },
      );
      expect(
        mhc.status?.deprecated?.v1beta1?.conditions?.find((c) => c.type === 'RemediationAllowed'),
      ).toMatchObject(
        allowed ? { status: 'True' } : { status: 'False', reason: 'TooManyUnhealthy', severity: 'Warning' },
      );
      for (const name of names('marked', row.marked)) {
        const machine = await machineNamed(name);
        expect(condition(machine, 'HealthCheckSucceeded')).toMatchObject(annotated);
        // Held back, it is marked unhealthy yet not handed to its owner.
        expect(condition(machine, 'OwnerRemediated')?.status).toBe(allowed ? 'False' : undefined);
      }
      for (const name of names('healthy', row.healthy)) {
        expect(await machineCondition(name, 'HealthCheckSucceeded')).toMatchObject(healthy);
      }
      if (!allowed) {
        const [event] = await eventsFor('RemediationRestricted');
        expect(event).toMatchObject({
          type: 'Warning',
          note: row.message,
          regarding: { kind: 'MachineHealthCheck' },
        });
      }
    });
  });

  it('checks only the Machines of its cluster its selector matches, and none it must skip', async () => {
    const notChecked: [string, MachineSetup][] = [
      ['other-pool', { labels: { [CLUSTER_NAME_LABEL]: 'demo', pool: 'b' } }],
      ['no-cluster-label', { labels: { pool: 'a' } }],
      ['other-cluster', { cluster: 'other' }],
      ['skipped', { annotations: { 'cluster.x-k8s.io/skip-remediation': '' } }],
      ['paused', { annotations: { 'cluster.x-k8s.io/paused': '' } }],
      ['updating', { annotations: { 'in-place.capstan.dev/update-in-progress': 'abc' } }],
    ];
    await createReadyCluster(bed, 'other');
    await createMachine('in', { annotations: REMEDIATE });
    for (const [name, setup] of notChecked) {
      await createMachine(name, { ...setup, annotations: { ...REMEDIATE, ...setup.annotations } });
    }
    await createHealthCheck();
    expect((await judged(1)).status?.targets).toEqual(['in']);
    expect(await machineCondition('in', 'HealthCheckSucceeded')).toMatchObject(annotated);
    for (const [name] of notChecked) {
      expect({ name, judged: await machineCondition(name, 'HealthCheckSucceeded') }).toEqual({
        name,
        judged: undefined,
      });
    }
  });

  it('follows Machines into and out of its selector, and a new selector', async () => {
    await createMachine('a', { node: 'ready' });
    await createMachine('b', { node: 'ready', labels: { [CLUSTER_NAME_LABEL]: 'demo', pool: 'b' } });
    await createHealthCheck();
    expect((await judged(1)).status?.targets).toEqual(['a']);
    await machines.mergePatch({ namespace: bed.ns.name, name: 'b' }, { metadata: { labels: { pool: 'a' } } });
    expect((await judged(2)).status).toMatchObject({ targets: ['a', 'b'], currentHealthy: 2 });
    await machines.mergePatch({ namespace: bed.ns.name, name: 'a' }, { metadata: { labels: { pool: 'c' } } });
    expect((await judged(1)).status?.targets).toEqual(['b']);
    await checks.mergePatch(
      { namespace: bed.ns.name, name: 'mhc' },
      { spec: { selector: { matchLabels: { pool: 'c' } } } },
    );
    expect((await judged(1)).status?.targets).toEqual(['a']);
  });

  it('waits for a Cluster that does not exist yet, then takes it as owner', async () => {
    await createMachine('m', { cluster: 'later', annotations: REMEDIATE });
    await createHealthCheck({ clusterName: 'later' });
    const waiting = await eventually(
      'ClusterNotFound',
      async () => {
        const c = condition(await healthCheck(), 'RemediationAllowed');
        return c?.status === 'False' ? c : undefined;
      },
      4000,
    );
    expect(waiting).toMatchObject({
      reason: 'ClusterNotFound',
      message: 'spec.clusterName: Cluster later does not exist',
    });
    expect((await healthCheck()).status?.expectedMachines).toBeUndefined();
    expect(await machineCondition('m', 'HealthCheckSucceeded')).toBeUndefined();

    const cluster = await createReadyCluster(bed, 'later');
    const mhc = await judged(1);
    expect(condition(mhc, 'RemediationAllowed')?.status).toBe('True');
    expect(mhc.metadata.labels?.[CLUSTER_NAME_LABEL]).toBe('later');
    expect(mhc.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', uid: cluster.metadata?.uid }),
    ]);
    expect(await machineCondition('m', 'HealthCheckSucceeded')).toMatchObject(annotated);
  });

  const pauseCluster = (paused: boolean) =>
    bed.client
      .resource<Cluster>(RESOURCES.Cluster)
      .mergePatch({ namespace: bed.ns.name, name: 'demo' }, { spec: { paused } });
  it.each([
    { how: 'its Cluster is paused', pause: () => pauseCluster(true), resume: () => pauseCluster(false) },
    {
      how: 'it has the paused annotation',
      annotations: { 'cluster.x-k8s.io/paused': '' },
      resume: () =>
        checks.mergePatch(
          { namespace: bed.ns.name, name: 'mhc' },
          { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } },
        ),
    },
  ])('judges nothing while $how, and resumes once unpaused', async ({ pause, resume, annotations }) => {
    await createMachine('m', { annotations: REMEDIATE });
    await pause?.();
    await createHealthCheck({}, annotations);
    await eventually('Paused', async () => condition(await healthCheck(), 'Paused')?.status === 'True', 4000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await healthCheck()).status?.expectedMachines).toBeUndefined();
    expect(await machineCondition('m', 'HealthCheckSucceeded')).toBeUndefined();

    await resume();
    expect(await untilHealthCheck('m', 'False')).toMatchObject(annotated);
    expect(condition(await judged(1), 'Paused')).toMatchObject({ status: 'False', reason: 'NotPaused' });
  });

  describe('hands unhealthy Machines to their owner', () => {
    it('writes OwnerRemediated, owes the lifecycle events and records MachineMarkedUnhealthy', async () => {
      const machine = await createMachine('m', { node: 'gone' });
      await createHealthCheck();
      await judged(1);
      expect(await machineCondition('m', 'OwnerRemediated')).toMatchObject({
        status: 'False',
        reason: 'WaitingForRemediation',
      });
      // The bus is down on the bed: the events stay owed on the health check.
      const owed = await eventually('owed events', async () => {
        const events = owedOn(await healthCheck());
        return events.length >= 2 ? events : undefined;
      });
      const data = (e: (typeof owed)[number]) => e.data as { object: { name: string }; reason?: string };
      expect(owed.map((e) => [e.name, data(e).object.name, data(e).reason])).toEqual([
        ['machine.unhealthy', 'm', 'NodeDeleted'],
        ['machine.remediated', 'm', 'NodeDeleted'],
      ]);
      const [event] = await eventsFor('MachineMarkedUnhealthy');
      expect(event).toMatchObject({
        regarding: { kind: 'Machine', name: 'm', uid: machine.metadata.uid },
        note: 'Machine m has been marked as unhealthy by mhc: Health check failed: Node m has been deleted',
      });
    });

    it.each([
      { owner: 'nothing yet', before: undefined, after: 'WaitingForRemediation', remediated: true },
      {
        owner: 'a remediation under way',
        before: ['False', 'Deleting'],
        after: 'Deleting',
        remediated: false,
      },
      {
        owner: 'a finished remediation',
        before: ['True', 'Remediated'],
        after: 'WaitingForRemediation',
        remediated: true,
      },
    ] as const)('asks it again only when it reported $owner', async ({ before, after, remediated }) => {
      await createMachine('m', { annotations: REMEDIATE });
      if (before) {
        const owner = {
          type: 'OwnerRemediated',
          status: before[0],
          reason: before[1],
          message: '',
          lastTransitionTime: ago(60),
        };
        await machines.applyStatus(
          {
            metadata: { name: 'm', namespace: bed.ns.name },
            status: { conditions: [owner] },
          } as unknown as Machine,
          { fieldManager: 'capstan-test-owner' },
        );
      }
      await createHealthCheck();
      await untilHealthCheck('m', 'False');
      expect(await machineCondition('m', 'OwnerRemediated')).toMatchObject({
        status: 'False',
        reason: after,
      });
      const owed = await eventually('machine.unhealthy owed', async () => {
        const events = owedOn(await healthCheck());
        return events.some((e) => e.name === 'machine.unhealthy') ? events : undefined;
      });
      expect(owed.some((e) => e.name === 'machine.remediated')).toBe(remediated);
    });

    it('has a MachineSet replace the Machine it marks, and only that one', async () => {
      await createTemplates(bed, 'workers');
      player = await new MachinePlayer(bed, { availableAfterMs: 20, releaseAfterMs: 20 }).start();
      await bed.client.resource<MachineSet>(RESOURCES.MachineSet).create({
        apiVersion: RESOURCES.MachineSet.apiVersion,
        kind: RESOURCES.MachineSet.kind,
        metadata: { name: 'pool', namespace: bed.ns.name },
        spec: {
          clusterName: 'demo',
          replicas: 2,
          selector: { matchLabels: { pool: 'a' } },
          template: machineTemplate('demo', 'workers', { pool: 'a' }),
        },
      } as MachineSet);
      // The set's Machines get no Node here: with the startup check off they are neither healthy nor remediated.
      await createHealthCheck({ checks: { nodeStartupTimeoutSeconds: 0 } });
      const [victim, bystander] = (await judged(2)).status!.targets!;
      await machines.mergePatch(
        { namespace: bed.ns.name, name: victim! },
        { metadata: { annotations: REMEDIATE } },
      );
      const targets = await eventually(
        'victim replaced',
        async () => {
          const now = (await healthCheck()).status?.targets ?? [];
          return now.length === 2 && !now.includes(victim!) && !(await machineNamed(victim!))
            ? now
            : undefined;
        },
        4000,
      );
      expect(targets).toContain(bystander);
      expect((await machineNamed(bystander!))?.metadata.deletionTimestamp).toBeUndefined();
    });
  });

  describe('with an external remediation template', () => {
    const templateRef = {
      apiVersion: 'bootstrap.generic.capstan.dev/v1beta2',
      kind: 'GenericBootstrapConfigTemplate',
      name: 'remediation',
    };
    const requestOf = (name: string) =>
      bed.client
        .resource(resourceOf('GenericBootstrapConfig'))
        .get({ namespace: bed.ns.name, name })
        .catch(orNone);

    it('creates a remediation request for an unhealthy Machine and deletes it once healthy', async () => {
      await bed.client.resource(resourceOf(templateRef.kind)).create({
        apiVersion: templateRef.apiVersion,
        kind: templateRef.kind,
        metadata: { name: 'remediation', namespace: bed.ns.name },
        spec: { template: { spec: { strategy: 'reboot' } } },
      } as KubernetesObject);
      const machine = await createMachine('m', { node: 'ready', annotations: REMEDIATE });
      await createHealthCheck({ remediation: { templateRef } });
      const request = await eventually('remediation request', () => requestOf('m'), 4000);
      expect(request.metadata?.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Machine', name: 'm', uid: machine.metadata.uid }),
      ]);
      expect((request as unknown as { spec: unknown }).spec).toEqual({ strategy: 'reboot' });
      const marked = await machineNamed('m');
      expect(condition(marked, 'ExternallyRemediated')).toMatchObject({
        status: 'False',
        reason: 'WaitingForRemediation',
      });
      expect(condition(marked, 'OwnerRemediated')).toBeUndefined();

      const unmark = { metadata: { annotations: { 'cluster.x-k8s.io/remediate-machine': null } } };
      await machines.mergePatch({ namespace: bed.ns.name, name: 'm' }, unmark);
      await untilHealthCheck('m', 'True');
      await eventually('remediation request deleted', async () => (await requestOf('m')) === undefined, 4000);
      // The condition was the health check's own (its reason), so it goes with the request.
      await eventually(
        'ExternallyRemediated removed',
        async () => condition(await machineNamed('m'), 'ExternallyRemediated') === undefined,
        4000,
      );
    });

    it('leaves ExternallyRemediated alone once the remediation controller has taken it over', async () => {
      await bed.client.resource(resourceOf(templateRef.kind)).create({
        apiVersion: templateRef.apiVersion,
        kind: templateRef.kind,
        metadata: { name: 'remediation', namespace: bed.ns.name },
        spec: { template: { spec: { strategy: 'reboot' } } },
      } as KubernetesObject);
      await createMachine('m', { node: 'ready', annotations: REMEDIATE });
      await createHealthCheck({ remediation: { templateRef } });
      await eventually('remediation request', () => requestOf('m'), 4000);
      // The external remediation controller reports with a reason of its own.
      const marked = (await machineNamed('m'))!;
      await machines.replaceStatus({
        ...marked,
        status: {
          ...marked.status,
          conditions: marked.status!.conditions!.map((c) =>
            c.type === 'ExternallyRemediated'
              ? { ...c, reason: 'Rebooting', message: 'rebooting the host' }
              : c,
          ),
        },
      });
      const unmark = { metadata: { annotations: { 'cluster.x-k8s.io/remediate-machine': null } } };
      await machines.mergePatch({ namespace: bed.ns.name, name: 'm' }, unmark);
      await untilHealthCheck('m', 'True');
      expect(condition(await machineNamed('m'), 'ExternallyRemediated')).toMatchObject({
        reason: 'Rebooting',
      });
    });

    it('remediates nothing while the template does not exist, yet still judges', async () => {
      await createMachine('m', { node: 'ready', annotations: REMEDIATE });
      await createMachine('fine', { node: 'ready' });
      await createHealthCheck({ remediation: { templateRef } });
      const mhc = await judged(2);
      expect(condition(mhc, 'RemediationAllowed')).toMatchObject({
        status: 'False',
        reason: 'RemediationTemplateNotFound',
        message: `spec.remediation.templateRef: ${templateRef.kind} remediation (${templateRef.apiVersion}) does not exist`,
      });
      expect(mhc.status).toMatchObject({ currentHealthy: 1, remediationsAllowed: 0 });
      // The deprecated v1beta1 condition counts unhealthy Machines only, as upstream's does.
      const deprecated = mhc.status?.deprecated?.v1beta1?.conditions?.find(
        (c) => c.type === 'RemediationAllowed',
      );
      expect(deprecated?.status).toBe('True');
      const marked = await machineNamed('m');
      expect(condition(marked, 'HealthCheckSucceeded')).toMatchObject(annotated);
      expect(condition(marked, 'ExternallyRemediated')).toBeUndefined();
      expect(condition(marked, 'OwnerRemediated')).toBeUndefined();
      expect(await requestOf('m')).toBeUndefined();
    });
  });

  describe('looks again', () => {
    it.each([
      {
        change: 'its Node turns Ready',
        from: { status: 'Unknown', since: 100 },
        to: { status: 'True', since: 0 },
        verdict: 'True',
      },
      {
        change: 'its Node turns NotReady',
        from: { status: 'True', since: 600 },
        to: { status: 'False', since: 600 },
        verdict: 'False',
      },
    ] as const)('when $change in the workload cluster', async ({ from, to, verdict }) => {
      await createMachine('m', { node: from });
      await createHealthCheck({ checks: READY_CHECKS });
      await judged(1);
      const before = await machineCondition('m', 'HealthCheckSucceeded');
      expect(before).toEqual(from.status === 'True' ? expect.objectContaining(healthy) : undefined);
      await setNodeReady('m', to);
      await untilHealthCheck('m', verdict);
    });

    it('when its Node is deleted from the workload cluster', async () => {
      await createMachine('m', { node: 'ready' });
      await createHealthCheck();
      await untilHealthCheck('m', 'True');
      await nodes.delete({ name: 'm' });
      expect(await untilHealthCheck('m', 'False')).toMatchObject({ reason: 'NodeDeleted' });
    });

    it.each<{
      what: string;
      machine: MachineSetup;
      checks: MachineHealthCheck['spec']['checks'];
      reason: string;
    }>([
      {
        what: 'a Node condition',
        machine: { node: { status: 'False', since: 298 } },
        checks: READY_CHECKS,
        reason: 'UnhealthyNode',
      },
      {
        what: 'the startup',
        machine: { conditions: { InfrastructureReady: ['True', 598] } },
        checks: {},
        reason: 'NodeStartupTimeout',
      },
    ])(
      'when the timeout of $what runs out, with nothing else happening',
      async ({ machine, checks: spec, reason }) => {
        await createMachine('m', machine);
        await createHealthCheck({ checks: spec });
        await judged(1);
        expect(await machineCondition('m', 'HealthCheckSucceeded')).toBeUndefined();
        expect(await untilHealthCheck('m', 'any')).toMatchObject({ status: 'False', reason });
      },
    );
  });
});
