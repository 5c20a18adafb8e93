import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ClusterBlueprint } from './cluster-blueprint.js';
import { clientUrlOf, recordedPorts } from './etcd.js';
import { listMembers } from './etcd-membership.js';
import { clusterApiSpecFrom } from './host-plan.js';
import { simMachineOptionsFromEnv } from './options.js';
import { isSimError } from './errors.js';
import { recordedProcessAlive } from './owned-process.js';
import { SimRuntime } from './sim-runtime.js';

// A dedicated cluster's own etcd (K3s's embedded etcd, one member per server): what it keeps, members joining and
// leaving, a snapshot of one member, and a cluster reset from that snapshot after which the other members join
// again, against the real etcd, etcdutl and kube-apiserver.
describe('a dedicated cluster with etcd members of its own', () => {
  const namespace = `etcd-${randomBytes(3).toString('hex')}`;
  let stateDir: string;
  let runtime: SimRuntime;

  beforeAll(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'capstan-sim-etcd-'));
    runtime = new SimRuntime({
      options: { ...simMachineOptionsFromEnv({}), stateDir, clusterEtcd: 'per-cluster', workloads: false },
      logger: pino({ level: 'silent' }),
    });
    runtime.start();
  });

  afterAll(async () => {
    await runtime?.shutdown();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('runs a member per server, snapshots one, and restores it: the old data is back on every member', async () => {
    const cluster = await ClusterBlueprint.create(namespace, 'snap');
    const init = clusterApiSpecFrom(cluster.parsed('init-server'), cluster.ref);
    const join_ = clusterApiSpecFrom(cluster.parsed('join-server'), cluster.ref);
    const { api } = await runtime.ensureClusterApi(init, { fresh: true, member: 'server-a' });
    await runtime.ensureClusterApi(join_, { fresh: false, member: 'server-b' });
    await runtime.ensureClusterApi(join_, { fresh: false, member: 'server-c' });
    const etcdDir = join(stateDir, 'clusters', namespace, 'snap', 'etcd');
    const urlOf = (member: string) => clientUrlOf(recordedPorts(join(etcdDir, member))!);
    const voters = async (member: string) =>
      (await listMembers(urlOf(member)))
        .filter((m) => !m.isLearner)
        .map((m) => m.name)
        .sort();
    // The joined servers were learners until they caught up; now all three vote.
    expect(await voters('server-a')).toEqual(['server-a', 'server-b', 'server-c']);

    const kc = new KubeConfig();
    kc.loadFromString(await cluster.adminKubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'orders' }, data: { state: 'before' } },
    });

    // The snapshot is of the member of the server that takes it (not the first one).
    const snapshot = join(stateDir, 'snap-1.db');
    const size = await runtime.saveEtcdSnapshot(api.key, snapshot, 'server-b');
    expect(size).toBe(statSync(snapshot).size);
    expect(size).toBeGreaterThan(16 * 1024);
    await expect(runtime.saveEtcdSnapshot(api.key, join(stateDir, 'x.db'), 'server-z')).rejects.toThrow(
      'the etcd member of server-z is not running',
    );

    await core.patchNamespacedConfigMap({
      name: 'orders',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/state', value: 'after' }],
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'later' }, data: { x: '1' } },
    });

    await runtime.restoreEtcdSnapshot(api.key, snapshot, 'server-b');
    expect(await api.healthy()).toBe(true);
    // A cluster of one: the others' data went (K3s's tombstone).
    expect(await voters('server-b')).toEqual(['server-b']);
    expect(existsSync(join(etcdDir, 'server-a'))).toBe(false);
    // A fresh client: the restored server is another process.
    const restored = new KubeConfig();
    restored.loadFromString(await cluster.adminKubeconfig());
    const after = restored.makeApiClient(CoreV1Api);
    expect(
      (await after.readNamespacedConfigMap({ name: 'orders', namespace: 'default' })).data?.['state'],
    ).toBe('before');
    await expect(
      after.readNamespacedConfigMap({ name: 'later', namespace: 'default' }),
    ).rejects.toMatchObject({ code: 404 });

    // The other servers start again and join, empty: each member then holds the restored data.
    await runtime.ensureClusterApi(init, { fresh: false, member: 'server-a' });
    await runtime.ensureClusterApi(join_, { fresh: false, member: 'server-c' });
    expect(await voters('server-c')).toEqual(['server-a', 'server-b', 'server-c']);
    for (const member of ['server-a', 'server-b', 'server-c']) {
      expect(await serializableValue(urlOf(member), '/registry/configmaps/default/orders')).toContain(
        'before',
      );
    }

    // A truncated snapshot is refused by its checksum; the cluster keeps serving what it had, on every member.
    await after.patchNamespacedConfigMap({
      name: 'orders',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/state', value: 'kept' }],
    });
    const truncated = join(stateDir, 'truncated.db');
    writeFileSync(truncated, readFileSync(snapshot).subarray(0, Math.floor(size / 2)));
    const refused = await runtime
      .restoreEtcdSnapshot(api.key, truncated, 'server-a')
      .catch((error: unknown) => error);
    expect(isSimError(refused, 'EtcdRestoreFailed')).toBe(true);
    expect((refused as Error).message).toContain('restoring the etcd snapshot failed');
    expect(await api.healthy()).toBe(true);
    expect(await voters('server-a')).toEqual(['server-a', 'server-b', 'server-c']);
    const again = new KubeConfig();
    again.loadFromString(await cluster.adminKubeconfig());
    const read = async () =>
      (await again.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'orders', namespace: 'default' }))
        .data?.['state'];
    expect(await read()).toBe('kept');

    // A server goes: its member leaves. The API server was given only server-b's member after the reset; with it
    // gone, it restarts on the others and keeps the data.
    await runtime.removeEtcdMember(api.key, 'server-b');
    expect(await voters('server-a')).toEqual(['server-a', 'server-c']);
    expect(existsSync(join(etcdDir, 'server-b'))).toBe(false);
    expect(await api.healthy()).toBe(true);
    const fresh = new KubeConfig();
    fresh.loadFromString(await cluster.adminKubeconfig());
    expect(
      (await fresh.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'orders', namespace: 'default' }))
        .data?.['state'],
    ).toBe('kept');

    // The last server gone, the cluster's etcd stops and its data goes with it.
    await runtime.releaseClusterApi(api.key);
    expect(recordedProcessAlive(join(etcdDir, 'server-a'), 'etcd')).toBeFalsy();
    expect(existsSync(etcdDir)).toBe(false);
  }, 240_000);
});

/** A key as one member has it (a serializable read answers from that member's own data, not the leader's). */
async function serializableValue(url: string, key: string): Promise<string> {
  const response = await fetch(`${url}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64'), serializable: true }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { kvs?: { value?: string }[] };
  return Buffer.from(body.kvs?.[0]?.value ?? '', 'base64').toString('latin1');
}
