import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { getCondition, RESOURCES, type Machine } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { ALL_IN_ONE_NODE_FLAGS, LOCAL_SERVICES, startCapstan, type CapstanUnderTest } from '@capstan/testing';
import { createSimK3sCluster, deleteClusterAndWait, FAST_SIM_ENV, waitForClusterAvailable } from './sim-cluster-fixture.js';

// The all-in-one process (apps/all-in-one): the five services in one Node runtime, for small installs. The same
// hand-offs as the per-service deployment must take a cluster to Available and delete it.

const CLUSTER = 'aio';
const STEP_TIMEOUT_MS = 240_000;

describe('the all-in-one process', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;

  beforeAll(async () => {
    capstan = await startCapstan('aio', { env: FAST_SIM_ENV, allInOne: true });
    client = createKubeClient(capstan.namespace.kc);
  });

  afterAll(async () => {
    await capstan?.stop({ keepLogs: process.env['CAPSTAN_KEEP_LOGS'] === '1' });
  });

  it('hosts the five services in one process, each ready and measured at its own endpoint', async () => {
    expect(capstan.services.map((s) => s.name)).toEqual([...LOCAL_SERVICES]);
    expect(new Set(capstan.services.map((s) => s.pid)).size).toBe(1);
    // The small-install tuning reaches the process: V8's size optimization and two malloc arenas.
    const pid = capstan.services[0]!.pid;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining([...ALL_IN_ONE_NODE_FLAGS]));
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
    expect(new Set(capstan.services.map((s) => s.url)).size).toBe(LOCAL_SERVICES.length);
    const controllersOf = new Map<string, Set<string>>();
    for (const service of capstan.services) {
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      controllersOf.set(service.name, new Set([...metrics.matchAll(/controller_runtime_max_concurrent_reconciles\{[^}]*controller="([^"]+)"/g)].map((m) => m[1]!)));
    }
    // Each service keeps its own registry: its own controllers, none of another's.
    for (const [name, controllers] of controllersOf) {
      expect({ name, some: controllers.size > 0 }).toEqual({ name, some: true });
      for (const [other, theirs] of controllersOf) {
        if (other !== name) expect({ name, other, shared: [...controllers].filter((c) => theirs.has(c)) }).toEqual({ name, other, shared: [] });
      }
    }
  });

  it('provisions a K3s cluster on sim machines to Available and deletes it', async () => {
    await createSimK3sCluster(client, {
      namespace: capstan.namespace.name,
      name: CLUSTER,
      version: 'v1.34.1',
      controlPlaneReplicas: 1,
      workers: 1,
      mode: 'shared',
    });
    const cluster = await waitForClusterAvailable(client, capstan.namespace.name, CLUSTER, STEP_TIMEOUT_MS);
    expect(getCondition(cluster.status?.conditions, 'Available')?.status).toBe('True');
    const machines = await client.resource<Machine>(RESOURCES.Machine).list({ namespace: capstan.namespace.name });
    expect(machines.items).toHaveLength(2);
    expect(machines.items.every((m) => m.status?.phase === 'Running' && m.status.nodeRef?.name)).toBe(true);
    await deleteClusterAndWait(client, capstan.namespace.name, CLUSTER);
  });
});
