import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import {
  getCondition,
  RESOURCES,
  type Cluster,
  type EtcdSnapshot,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import { ObjectStore, votingMembersIn } from '@capstan/sim';
import {
  eventually,
  repoRoot,
  runBuiltCli,
  startCapstan,
  startS3Server,
  type CapstanUnderTest,
  type TestS3Server,
} from '@capstan/testing';
import {
  controlPlaneName,
  createObject,
  createSimK3sCluster,
  deleteClusterAndWait,
  FAST_SIM_ENV,
  waitForClusterAvailable,
} from './sim-cluster-fixture.js';

// etcd snapshots and restore with real parts (docs/day2.md): the five services, a dedicated sim cluster whose server
// keeps its data in an etcd of its own, node agents applying the snapshot and restore plans, and a real
// S3-compatible server that checks every request's signature.

const CLUSTER = 'snap';
const KCP = controlPlaneName(CLUSTER);
const BUCKET = 'capstan-snapshots';
const STEP_MS = 240_000;

describe('etcd snapshots and restore of a K3s cluster on sim machines', () => {
  let capstan: CapstanUnderTest;
  let client: KubeClient;
  let s3: TestS3Server;
  let namespace: string;
  let workload: CoreV1Api;

  const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
    eventually(probe, { message: what, timeoutMs: STEP_MS, intervalMs: 250 });
  const snapshots = () => client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot);
  const kcps = () => client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  const settled = (name: string) =>
    until(`EtcdSnapshot ${name} settled`, async () => {
      const s = await snapshots().get({ namespace, name });
      return (s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed') && s;
    });
  const takeSnapshot = async (name: string) => {
    await createObject(client, RESOURCES.EtcdSnapshot, {
      metadata: { name, namespace },
      spec: { clusterName: CLUSTER },
    });
    return settled(name);
  };
  const orders = async () =>
    (await workload.readNamespacedConfigMap({ name: 'orders', namespace: 'default' })).data?.['state'];
  const setOrders = (state: string) =>
    workload.patchNamespacedConfigMap({
      name: 'orders',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/state', value: state }],
    });
  /** Asks for a restore of `name` with the next generation, and waits for its outcome. */
  const restore = async (name: string) => {
    const generation =
      ((await kcps().get({ namespace, name: KCP })).spec.etcdSnapshotRestore?.generation ?? 0) + 1;
    await kcps().mergePatch(
      { namespace, name: KCP },
      { spec: { etcdSnapshotRestore: { name, generation } } },
    );
    return until(`restore ${generation} of ${name} settled`, async () => {
      const status = (await kcps().get({ namespace, name: KCP })).status?.etcdSnapshotRestore;
      return (
        status?.generation === generation &&
        status.name === name &&
        (status.phase === 'Finished' || status.phase === 'Failed') &&
        status
      );
    });
  };
  const machineUids = async () =>
    (await client.resource<Machine>(RESOURCES.Machine).list({ namespace })).items
      .map((m) => m.metadata.uid)
      .sort();

  beforeAll(async () => {
    // The CLI under test is the built one: compile what changed since the last build (incremental, seconds).
    execFileSync(process.execPath, ['scripts/build.mjs', 'cli'], { cwd: repoRoot(), stdio: 'ignore' });
    s3 = await startS3Server({ buckets: [BUCKET] });
    capstan = await startCapstan('etcd', { env: { ...FAST_SIM_ENV, CAPSTAN_SIM_NODE_AGENT: 'in-process' } });
    namespace = capstan.namespace.name;
    client = createKubeClient(capstan.namespace.kc);
    await client.resource<V1Secret>(SECRETS).create({
      metadata: { name: 's3-credentials', namespace },
      stringData: { accessKey: s3.accessKey, secretKey: s3.secretKey },
    });
    await createSimK3sCluster(client, {
      namespace,
      name: CLUSTER,
      version: 'v1.34.4',
      controlPlaneReplicas: 1,
      workers: 0,
    });
    await kcps().mergePatch(
      { namespace, name: KCP },
      {
        spec: {
          etcd: {
            s3: {
              endpoint: s3.endpoint,
              bucket: BUCKET,
              folder: `clusters/${CLUSTER}`,
              insecure: true,
              credentialsSecretName: 's3-credentials',
            },
          },
        },
      },
    );
    await waitForClusterAvailable(client, namespace, CLUSTER, STEP_MS);
    const secret = await client.resource<V1Secret>(SECRETS).get({ namespace, name: `${CLUSTER}-kubeconfig` });
    const kc = new KubeConfig();
    kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
    workload = kc.makeApiClient(CoreV1Api);
    await workload.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'orders' }, data: { state: 'before' } },
    });
  }, STEP_MS * 2);

  afterAll(async () => {
    try {
      if (client) await deleteClusterAndWait(client, namespace, CLUSTER);
    } finally {
      await client?.close();
      await capstan?.stop({ keepLogs: process.env['ETCD_KEEP_LOGS'] === '1' });
      await s3?.stop();
    }
  }, STEP_MS);

  it(
    'saves an on-demand snapshot to S3, and a restore brings the old data back without replacing a machine',
    async () => {
      const snapshot = await takeSnapshot('before-change');
      expect(snapshot.status).toMatchObject({ phase: 'Succeeded', kubernetesVersion: 'v1.34.4' });
      // What restoreConfig All puts back.
      const { k3sConfigSpec } = (await kcps().get({ namespace, name: KCP })).spec;
      expect(snapshot.status?.k3sConfigSpec).toEqual(k3sConfigSpec ?? {});
      expect(snapshot.status?.fileName).toMatch(/^on-demand-snap-control-plane-[a-z0-9]+-\d+$/);
      expect(snapshot.status?.location).toBe(
        `s3://${BUCKET}/clusters/${CLUSTER}/${snapshot.status?.fileName}`,
      );
      expect(getCondition(snapshot.status?.conditions, 'Ready')?.status).toBe('True');
      // The object is in the bucket, and as large as the status says (read with the store's own credentials).
      const store = new ObjectStore(
        { endpoint: s3.endpoint, bucket: BUCKET, folder: `clusters/${CLUSTER}`, insecure: true },
        s3,
      );
      const stored = await store.list();
      expect(stored.map((o) => [o.key, o.size])).toEqual([
        [`clusters/${CLUSTER}/${snapshot.status!.fileName}`, snapshot.status!.sizeBytes],
      ]);

      await setOrders('after');
      await workload.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'later' }, data: { x: '1' } },
      });
      const machinesBefore = await machineUids();

      const restored = await restore('before-change');
      expect(restored).toMatchObject({ phase: 'Finished', name: 'before-change' });
      await until('the old data back', async () => (await orders().catch(() => undefined)) === 'before');
      await expect(
        workload.readNamespacedConfigMap({ name: 'later', namespace: 'default' }),
      ).rejects.toMatchObject({ code: 404 });
      const cluster = await waitForClusterAvailable(client, namespace, CLUSTER, STEP_MS);
      expect(cluster.spec?.paused).not.toBe(true);
      expect(await machineUids()).toEqual(machinesBefore);
    },
    STEP_MS * 2,
  );

  it(
    'takes, lists and restores snapshots with the built CLI',
    async () => {
      const cli = (...args: string[]) =>
        runBuiltCli(...args, '-n', namespace, '--kubeconfig', process.env['CAPSTAN_TEST_KUBECONFIG']!);
      await setOrders('cli-before');
      const created = await cli('snapshot', 'create', CLUSTER, '--name', 'cli-snap');
      expect(created.stderr).toContain('etcdsnapshot/cli-snap saved');
      expect(created.status).toBe(0);
      const listed = await cli('snapshot', 'list', CLUSTER);
      expect(listed.status).toBe(0);
      expect(listed.stdout).toMatch(/^NAME\s+CLUSTER\s+TRIGGER\s+PHASE\s+SIZE\s+LOCATION/);
      expect(listed.stdout).toMatch(
        new RegExp(`cli-snap\\s+${CLUSTER}\\s+OnDemand\\s+Succeeded\\s+[0-9.]+ [KM]iB\\s+s3://${BUCKET}/`),
      );
      await setOrders('cli-after');
      // With the configuration it was saved with (restoreConfig All): the same as now, so nothing rolls out.
      const restored = await cli('snapshot', 'restore', CLUSTER, 'cli-snap', '--restore-config');
      expect(restored.status).toBe(0);
      expect(restored.stderr).toContain(`${CLUSTER} restored from cli-snap`);
      expect((await kcps().get({ namespace, name: KCP })).spec.etcdSnapshotRestore).toMatchObject({
        name: 'cli-snap',
        restoreConfig: 'All',
      });
      await until(
        'the CLI restore took effect',
        async () => (await orders().catch(() => undefined)) === 'cli-before',
      );
      const refused = await cli('snapshot', 'restore', CLUSTER, 'no-such-snapshot');
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain('EtcdSnapshot');
      expect(refused.stderr).toContain('not found');
    },
    STEP_MS,
  );

  it(
    'refuses restores that cannot be, naming why, and leaves the data as it is',
    async () => {
      await setOrders('kept');
      await createObject(client, RESOURCES.EtcdSnapshot, {
        metadata: { name: 'of-another-cluster', namespace },
        spec: { clusterName: 'elsewhere' },
      });
      const foreign = await restore('of-another-cluster');
      expect(foreign).toMatchObject({ phase: 'Failed' });
      expect(foreign.message).toContain('is a snapshot of cluster elsewhere, not of snap');
      const missing = await restore('no-such-snapshot');
      expect(missing.message).toContain('does not exist');
      expect(await orders()).toBe('kept');
      expect(
        (await client.resource<Cluster>(RESOURCES.Cluster).get({ namespace, name: CLUSTER })).spec,
      ).not.toMatchObject({ paused: true });
    },
    STEP_MS,
  );

  it(
    'fails a snapshot the store refuses, with a message that names the store and never the key',
    async () => {
      await client
        .resource<V1Secret>(SECRETS)
        .mergePatch(
          { namespace, name: 's3-credentials' },
          { stringData: { secretKey: 'a-wrong-secret-key-for-this-test' } },
        );
      const refused = await takeSnapshot('wrong-key');
      expect(refused.status?.phase).toBe('Failed');
      const message = getCondition(refused.status?.conditions, 'Ready')?.message ?? '';
      expect(message).toContain(s3.endpoint);
      expect(message).toMatch(/refused|SignatureDoesNotMatch|access key/i);
      expect(message).not.toContain('a-wrong-secret-key-for-this-test');
      expect(message).not.toContain(s3.secretKey);
      await client
        .resource<V1Secret>(SECRETS)
        .mergePatch({ namespace, name: 's3-credentials' }, { stringData: { secretKey: s3.secretKey } });
    },
    STEP_MS,
  );

  it(
    'deleting a snapshot deletes its file from the store',
    async () => {
      const store = new ObjectStore(
        { endpoint: s3.endpoint, bucket: BUCKET, folder: `clusters/${CLUSTER}`, insecure: true },
        s3,
      );
      const before = (await store.list()).length;
      await snapshots().delete({ namespace, name: 'before-change' });
      await until('the snapshot and its file gone', async () => {
        const gone = await snapshots()
          .get({ namespace, name: 'before-change' })
          .then(() => false)
          .catch(() => true);
        return gone && (await store.list()).length === before - 1;
      });
    },
    STEP_MS,
  );

  // The next two run side by side (Jest runs a block's concurrent tests together, where the first of them stands): the
  // schedule waits on the clock (a five-field cron ticks once a minute), and the three-server cluster is another
  // cluster of its own, whose snapshots are local and on demand, so neither sees the other's snapshots or machines.
  it.concurrent(
    'takes scheduled snapshots on the cron schedule and keeps as many as the retention says, files included',
    async () => {
      const store = new ObjectStore(
        { endpoint: s3.endpoint, bucket: BUCKET, folder: `clusters/${CLUSTER}`, insecure: true },
        s3,
      );
      await kcps().mergePatch(
        { namespace, name: KCP },
        { spec: { etcd: { snapshotScheduleCron: '* * * * *', snapshotRetention: 1 } } },
      );
      const scheduled = async () =>
        (await snapshots().list({ namespace })).items.filter(
          (s) => s.spec.trigger === 'Scheduled' && !s.metadata.deletionTimestamp,
        );
      // The first within a minute, the second a minute later; then the first is pruned, with its object.
      const first = await until('a first scheduled snapshot saved', async () =>
        (await scheduled()).find((s) => s.status?.phase === 'Succeeded'),
      );
      expect(first.metadata.name).toMatch(new RegExp(`^${CLUSTER}-etcd-snapshot-\\d+$`));
      expect(first.status?.fileName).toMatch(/^etcd-snapshot-/);
      await until('a second scheduled snapshot saved and the first pruned with its file', async () => {
        const now = await scheduled();
        const objects = (await store.list()).map((o) => o.key);
        return (
          now.length >= 1 &&
          !now.some((s) => s.metadata.name === first.metadata.name) &&
          now.some((s) => s.status?.phase === 'Succeeded') &&
          !objects.some((key) => key.endsWith(first.status!.fileName!))
        );
      });
      const condition = getCondition(
        (await kcps().get({ namespace, name: KCP })).status?.conditions,
        'EtcdSnapshotsScheduled',
      );
      expect(condition).toMatchObject({ status: 'True', reason: 'Scheduled' });
      await kcps().mergePatch({ namespace, name: KCP }, { spec: { etcd: { snapshotScheduleCron: null } } });
    },
    STEP_MS,
  );

  it.concurrent(
    'restores a local snapshot of a three-server cluster on the server that keeps it',
    async () => {
      const trio = 'trio';
      await createSimK3sCluster(client, {
        namespace,
        name: trio,
        version: 'v1.34.4',
        controlPlaneReplicas: 3,
        workers: 0,
      });
      try {
        await waitForClusterAvailable(client, namespace, trio, STEP_MS);
        await until(
          'three servers ready',
          async () =>
            (await kcps().get({ namespace, name: controlPlaneName(trio) })).status?.readyReplicas === 3,
        );
        const secret = await client
          .resource<V1Secret>(SECRETS)
          .get({ namespace, name: `${trio}-kubeconfig` });
        const kc = new KubeConfig();
        kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
        const api = kc.makeApiClient(CoreV1Api);
        await api.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: 'ledger' }, data: { v: '1' } },
        });
        const machinesBefore = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace })).items
          .filter((m) => m.spec.clusterName === trio)
          .map((m) => m.metadata.uid)
          .sort();
        expect(machinesBefore).toHaveLength(3);

        await createObject(client, RESOURCES.EtcdSnapshot, {
          metadata: { name: 'trio-local', namespace },
          spec: { clusterName: trio },
        });
        const saved = await settled('trio-local');
        expect(saved.status?.phase).toBe('Succeeded');
        expect(saved.status?.location).toBe(
          `file:///var/lib/rancher/k3s/server/db/snapshots/${saved.status?.fileName}`,
        );

        await api.patchNamespacedConfigMap({
          name: 'ledger',
          namespace: 'default',
          body: [{ op: 'replace', path: '/data/v', value: '2' }],
        });
        const trioKcp = controlPlaneName(trio);
        await kcps().mergePatch(
          { namespace, name: trioKcp },
          { spec: { etcdSnapshotRestore: { name: 'trio-local', generation: 1 } } },
        );
        const status = await until('the three-server restore settled', async () => {
          const s = (await kcps().get({ namespace, name: trioKcp })).status?.etcdSnapshotRestore;
          return (s?.phase === 'Finished' || s?.phase === 'Failed') && s;
        });
        expect(status).toMatchObject({ phase: 'Finished', machineName: saved.status?.machineName });
        await until('the three-server cluster has the old data', async () => {
          const fresh = new KubeConfig();
          fresh.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
          const v = await fresh
            .makeApiClient(CoreV1Api)
            .readNamespacedConfigMap({ name: 'ledger', namespace: 'default' })
            .then((cm) => cm.data?.['v'])
            .catch(() => undefined);
          return v === '1';
        });
        await waitForClusterAvailable(client, namespace, trio, STEP_MS);
        // Each server runs an etcd member; the reset left the restoring server's alone, and the other two join
        // again, empty, when their servers next start: three voters, each holding the restored data.
        const etcdDir = join(capstan.simStateDir, 'clusters', namespace, trio, 'etcd');
        const memberUrl = (member: string) =>
          `http://127.0.0.1:${(JSON.parse(readFileSync(join(etcdDir, member, 'ports.json'), 'utf8')) as { client: number }).client}`;
        const voters = await until('the other servers rejoined the etcd cluster', async () => {
          const names = await votingMembersIn(etcdDir);
          return names.length === 3 && names;
        });
        expect(voters).toContain(status.machineName);
        // Every member holds the ConfigMap as the restored server's member does (which the API read as v=1).
        const stored = new Set<string>();
        for (const member of voters) {
          const response = await fetch(`${memberUrl(member)}/v3/kv/range`, {
            method: 'POST',
            body: JSON.stringify({
              key: Buffer.from('/registry/configmaps/default/ledger').toString('base64'),
              serializable: true,
            }),
          });
          const kvs = ((await response.json()) as { kvs?: { value: string }[] }).kvs ?? [];
          expect(kvs).toHaveLength(1);
          stored.add(kvs[0]!.value);
        }
        expect(stored.size).toBe(1);
        const machinesAfter = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace })).items
          .filter((m) => m.spec.clusterName === trio)
          .map((m) => m.metadata.uid)
          .sort();
        expect(machinesAfter).toEqual(machinesBefore);
      } finally {
        await deleteClusterAndWait(client, namespace, trio);
      }
    },
    STEP_MS * 2,
  );

  it(
    'rolls an upgrade that fails its health gate back to the old version and the snapshot taken before it',
    async () => {
      // A workload the user names as the gate; its pod never becomes ready (the sim's ready-seconds), so the gate fails.
      const apps = new KubeConfig();
      const secret = await client
        .resource<V1Secret>(SECRETS)
        .get({ namespace, name: `${CLUSTER}-kubeconfig` });
      apps.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
      await apps.makeApiClient(AppsV1Api).createNamespacedDeployment({
        namespace: 'default',
        body: {
          metadata: { name: 'canary' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'canary' } },
            template: {
              metadata: {
                labels: { app: 'canary' },
                annotations: { 'sim.capstan.dev/ready-seconds': '86400' },
              },
              spec: {
                containers: [
                  { name: 'canary', image: 'canary:1', readinessProbe: { httpGet: { path: '/', port: 80 } } },
                ],
              },
            },
          },
        },
      });
      await setOrders('before-upgrade');
      // A short failure tolerance (the CLI leaves it alone), then the guarded upgrade as a user starts it.
      await kcps().mergePatch(
        { namespace, name: KCP },
        { spec: { upgradePolicy: { failureToleranceSeconds: 5 } } },
      );
      const cli = runBuiltCli(
        'upgrade',
        'cluster',
        CLUSTER,
        '--kubernetes-version',
        'v1.35.4',
        '--snapshot',
        '--rollback-on-failure',
        '--healthy-for',
        '20s',
        '--check',
        'Deployment/default/canary',
        '--wait',
        '-n',
        namespace,
        '--kubeconfig',
        process.env['CAPSTAN_TEST_KUBECONFIG']!,
      );
      const upgrade = () =>
        kcps()
          .get({ namespace, name: KCP })
          .then((k) => k.status?.upgrade);
      // The machines wait for the snapshot; data written after it is what the rollback takes back.
      const started = await until('the pre-upgrade snapshot saved', async () => {
        const u = await upgrade();
        return u?.toVersion === 'v1.35.4' && u.phase !== 'SavingSnapshot' && u;
      });
      expect(started.fromVersion).toBe('v1.34.4');
      const pre = await snapshots().get({ namespace, name: started.snapshotName! });
      expect(pre.status).toMatchObject({ phase: 'Succeeded', kubernetesVersion: 'v1.34.4' });
      await setOrders('written-during-upgrade');

      const settledUpgrade = await until('the upgrade settled', async () => {
        const u = await upgrade();
        return (u?.phase === 'RolledBack' || u?.phase === 'Succeeded' || u?.phase === 'Failed') && u;
      });
      expect(settledUpgrade.phase).toBe('RolledBack');
      const waited = await cli;
      expect(waited.status).toBe(1);
      expect(waited.stderr).toContain('the upgrade to v1.35.4 was rolled back');
      expect(waited.stderr).toContain('Deployment default/canary has 0 of 1 replicas available');
      expect(settledUpgrade.message).toContain('Deployment default/canary has 0 of 1 replicas available');
      expect(settledUpgrade.message).toContain(
        `rolled back to v1.34.4 with the data of snapshot ${started.snapshotName}`,
      );
      const kcp = await kcps().get({ namespace, name: KCP });
      expect(kcp.spec.version).toBe('v1.34.4');
      expect(getCondition(kcp.status?.conditions, 'UpgradeHealthy')).toMatchObject({
        status: 'False',
        reason: 'RolledBack',
      });
      const machines = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace })).items.filter(
        (m) => m.spec.clusterName === CLUSTER && !m.metadata.deletionTimestamp,
      );
      expect(machines.map((m) => m.spec.version)).toEqual(['v1.34.4']);
      await until(
        'the data of the snapshot back',
        async () => (await orders().catch(() => undefined)) === 'before-upgrade',
      );
      await waitForClusterAvailable(client, namespace, CLUSTER, STEP_MS);
    },
    STEP_MS * 2,
  );
});
