import { rmSync } from 'node:fs';
import { uniqueEventTopology } from '@capstan/events';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  recordedProcessAlive,
  SimConditionReason,
  SimConditionType,
  type SimMachineOptions,
} from '@capstan/sim';
import {
  createTestNamespace,
  installCapstanDefinitions,
  testKubeConfig,
  type TestNamespace,
  eventually,
} from '@capstan/testing';
import { SimClusterFixture } from './testing/sim-fixture.js';
import { startMachineProvider, testSimOptions } from './testing/start-machine-provider.js';

// A machine-provider stopped and started again mid-way loses nothing: 3 servers and 2 agents, the provider's
// own etcd (no etcd URL given), a graceful stop that leaves no kube-apiserver behind, and a start that brings
// the same cluster back from the objects and the etcd data.

describe('machine-provider restart', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let service: RunningService | undefined;
  let options: SimMachineOptions;
  let beta: SimClusterFixture;
  const topology = uniqueEventTopology('simrs');
  const servers = ['beta-cp-0', 'beta-cp-1', 'beta-cp-2'];
  const agents = ['beta-md-0', 'beta-md-1'];

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
    ns = await createTestNamespace('simrs');
    client = createKubeClient(testKubeConfig());
    options = testSimOptions({ etcdUrl: undefined });
    service = await startMachineProvider(ns.name, topology, options);
    beta = await SimClusterFixture.create(client, ns.name, 'beta');
  });

  afterAll(async () => {
    if (service) await beta?.deleteMachines();
    await service?.stop();
    await client?.close();
    await ns?.delete();
    if (options) rmSync(options.stateDir, { recursive: true, force: true });
  });

  it('brings back the API server and the nodes after a restart, as they were', async () => {
    await beta.machine(servers[0]!, { role: 'init-server' });
    for (const name of servers.slice(1)) await beta.machine(name, { role: 'join-server' });
    for (const name of agents) await beta.machine(name, { role: 'agent' });
    await beta.machine('beta-gone', { role: 'agent', spec: { nodeDisappearsAfterSeconds: 2 } });
    await eventually(async () => (await beta.readyNodes()).length === 5, {
      timeoutMs: 120_000,
      message: 'five Ready nodes',
    });
    for (const name of servers) await beta.condition(name, SimConditionType.APIServerHealthy);
    await beta.condition('beta-gone', SimConditionType.NodeRunning, SimConditionReason.NodeDeletedInjected);
    const core = await beta.workloadCore();
    const before = new Map((await core.listNode()).items.map((n) => [n.metadata!.name!, n.metadata!.uid!]));

    const clusterDir = `${options.stateDir}/clusters/${ns.name}/beta`;
    const apiServerPid = recordedProcessAlive(clusterDir, 'kube-apiserver')!.pid;
    await service!.stop();
    service = undefined;
    // A graceful stop leaves nothing running: the API server is gone, its port free.
    expect(recordedProcessAlive(clusterDir, 'kube-apiserver')).toBeUndefined();
    expect(() => process.kill(apiServerPid, 0)).toThrow();
    await expect(core.listNode()).rejects.toBeDefined();

    const restartedAt = Date.now();
    service = await startMachineProvider(ns.name, topology, options);
    await eventually(async () => (await beta.readyNodes()).length === 5, {
      timeoutMs: 120_000,
      message: 'five Ready nodes again',
    });
    const after = await core.listNode();
    // The same Node objects (the cluster's data survived in the provider's etcd), not re-created ones.
    expect(new Map(after.items.map((n) => [n.metadata!.name!, n.metadata!.uid!]))).toEqual(before);
    expect(after.items.map((n) => n.metadata!.name).sort()).toEqual([...servers, ...agents].sort());
    // Heartbeats resumed.
    await eventually(
      async () => {
        const node = await core.readNode({ name: 'beta-md-0' });
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        return ready && new Date(ready.lastHeartbeatTime!).getTime() >= restartedAt - 1000;
      },
      { timeoutMs: 30_000, message: 'a fresh heartbeat' },
    );
    // The host that died stays dead.
    await beta.condition('beta-gone', SimConditionType.NodeRunning, SimConditionReason.NodeDeletedInjected);
    await expect(core.readNode({ name: 'beta-gone' })).rejects.toMatchObject({ code: 404 });
  });
});
