import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ClusterBlueprint } from './cluster-blueprint.js';
import { clusterApiSpecFrom } from './host-plan.js';
import { simMachineOptionsFromEnv } from './options.js';
import { isSimError } from './errors.js';
import { recordedProcessAlive } from './owned-process.js';
import { SimRuntime } from './sim-runtime.js';

// A dedicated cluster's own etcd (K3s's embedded etcd): what it keeps, a snapshot of it, and a cluster reset from
// that snapshot, against the real etcd, etcdutl and kube-apiserver.
describe('a dedicated cluster with an etcd of its own', () => {
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

  it('keeps the cluster in its own etcd, snapshots it, and restores it: the old data is back', async () => {
    const cluster = await ClusterBlueprint.create(namespace, 'snap');
    const { api } = await runtime.ensureClusterApi(
      clusterApiSpecFrom(cluster.parsed('init-server'), cluster.ref),
      { fresh: true },
    );
    const clusterDir = join(stateDir, 'clusters', namespace, 'snap');
    expect(recordedProcessAlive(join(clusterDir, 'etcd'), 'etcd')).toBeTruthy();

    const kc = new KubeConfig();
    kc.loadFromString(await cluster.adminKubeconfig());
    const core = kc.makeApiClient(CoreV1Api);
    const read = async () =>
      (await core.readNamespacedConfigMap({ name: 'orders', namespace: 'default' })).data?.['state'];
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'orders' }, data: { state: 'before' } },
    });

    const snapshot = join(stateDir, 'snap-1.db');
    const size = await runtime.saveEtcdSnapshot(api.key, snapshot);
    expect(size).toBe(statSync(snapshot).size);
    expect(size).toBeGreaterThan(16 * 1024);

    await core.patchNamespacedConfigMap({
      name: 'orders',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/state', value: 'after' }],
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'later' }, data: { x: '1' } },
    });
    expect(await read()).toBe('after');

    await runtime.restoreEtcdSnapshot(api.key, snapshot);
    expect(await api.healthy()).toBe(true);
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

    // A truncated snapshot is refused by its checksum; the cluster keeps serving what it had.
    await after.patchNamespacedConfigMap({
      name: 'orders',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/state', value: 'kept' }],
    });
    const truncated = join(stateDir, 'truncated.db');
    writeFileSync(truncated, readFileSync(snapshot).subarray(0, Math.floor(size / 2)));
    const refused = await runtime.restoreEtcdSnapshot(api.key, truncated).catch((error: unknown) => error);
    expect(isSimError(refused, 'EtcdRestoreFailed')).toBe(true);
    expect((refused as Error).message).toContain('restoring the etcd snapshot failed');
    expect(await api.healthy()).toBe(true);
    const again = new KubeConfig();
    again.loadFromString(await cluster.adminKubeconfig());
    expect(
      (await again.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'orders', namespace: 'default' }))
        .data?.['state'],
    ).toBe('kept');

    // The last server gone, the cluster's etcd stops and its data goes with it.
    await runtime.releaseClusterApi(api.key);
    expect(recordedProcessAlive(join(clusterDir, 'etcd'), 'etcd')).toBeFalsy();
  }, 180_000);
});
