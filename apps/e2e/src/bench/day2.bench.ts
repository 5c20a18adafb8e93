// `npm run bench:day2`: the day-2 operations of docs/day2.md timed end to end, with the five services as processes,
// sim machines with real node agents, a dedicated workload API server and an etcd member per server, and the test S3
// server.
// For clusters of 1 and 3 servers holding CONFIGMAPS ConfigMaps of 2 KiB: an on-demand snapshot kept on the server,
// one uploaded to S3 (from the EtcdSnapshot's creation to Succeeded), a restore from S3 (from the restore's generation
// to Finished, to the Cluster Available again, and to every etcd member voting again); then a guarded upgrade whose gate fails, from the version change
// to RolledBack. Each snapshot is taken RUNS times (median and max). Writes the table into docs/day2.md.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { RESOURCES, type EtcdSnapshot, type K3sControlPlane } from '@capstan/api';
import { createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import { votingMembersIn } from '@capstan/sim';
import {
  eventually,
  repoRoot,
  startCapstan,
  startS3Server,
  startTestEnvironment,
  type TestS3Server,
} from '@capstan/testing';
import {
  controlPlaneName,
  createObject,
  createSimK3sCluster,
  deleteClusterAndWait,
  FAST_SIM_ENV,
  waitForClusterAvailable,
} from '../sim-cluster-fixture.js';

const CONFIGMAPS = Number(process.env['BENCH_CONFIGMAPS'] ?? 1000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
/** Secrets in each cluster: what an encryption key rotation writes again. */
const SECRETS_COUNT = Number(process.env['BENCH_SECRETS'] ?? 200);
const BUCKET = 'bench-snapshots';
const TIMEOUT_MS = 10 * 60 * 1000;

interface Row {
  what: string;
  servers: number;
  seconds: number[];
  detail: string;
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (since: number) => (Date.now() - since) / 1000;
const until = <T>(what: string, probe: () => Promise<T | undefined | false>) =>
  eventually(probe, { message: what, timeoutMs: TIMEOUT_MS, intervalMs: 100 });

async function workloadApi(client: KubeClient, namespace: string, cluster: string): Promise<CoreV1Api> {
  const secret = await client.resource<V1Secret>(SECRETS).get({ namespace, name: `${cluster}-kubeconfig` });
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data!['value']!, 'base64').toString('utf8'));
  return kc.makeApiClient(CoreV1Api);
}

async function snapshotOnce(
  client: KubeClient,
  namespace: string,
  cluster: string,
  name: string,
): Promise<{ seconds: number; snapshot: EtcdSnapshot }> {
  const started = Date.now();
  await createObject(client, RESOURCES.EtcdSnapshot, {
    metadata: { name, namespace },
    spec: { clusterName: cluster },
  });
  const snapshot = await until(`snapshot ${name}`, async () => {
    const s = await client.resource<EtcdSnapshot>(RESOURCES.EtcdSnapshot).get({ namespace, name });
    if (s.status?.phase === 'Failed')
      throw new Error(`snapshot ${name} failed: ${JSON.stringify(s.status.conditions)}`);
    return s.status?.phase === 'Succeeded' && s;
  });
  return { seconds: seconds(started), snapshot };
}

async function benchCluster(
  client: KubeClient,
  namespace: string,
  s3: TestS3Server,
  servers: number,
  simStateDir: string,
): Promise<Row[]> {
  const cluster = `bench-${servers}`;
  const kcpName = controlPlaneName(cluster);
  const kcps = client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  await createSimK3sCluster(client, {
    namespace,
    name: cluster,
    version: 'v1.34.4',
    controlPlaneReplicas: servers,
    workers: 0,
    k3sConfigSpec: { serverConfig: { secretsEncryption: true } },
  });
  await waitForClusterAvailable(client, namespace, cluster, TIMEOUT_MS);
  await until(
    `${servers} servers ready`,
    async () => (await kcps.get({ namespace, name: kcpName })).status?.readyReplicas === servers,
  );
  const api = await workloadApi(client, namespace, cluster);
  const payload = 'x'.repeat(2048);
  for (let i = 0; i < CONFIGMAPS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, CONFIGMAPS - i) }, (_, j) =>
        api.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: `data-${i + j}` }, data: { payload } },
        }),
      ),
    );
  }
  for (let i = 0; i < SECRETS_COUNT; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, SECRETS_COUNT - i) }, (_, j) =>
        api.createNamespacedSecret({
          namespace: 'default',
          body: { metadata: { name: `secret-${i + j}` }, stringData: { token: payload.slice(0, 256) } },
        }),
      ),
    );
  }
  const rows: Row[] = [];
  const local: number[] = [];
  let size = 0;
  for (let run = 0; run < RUNS; run++) {
    const { seconds: took, snapshot } = await snapshotOnce(
      client,
      namespace,
      cluster,
      `${cluster}-local-${run}`,
    );
    local.push(took);
    size = snapshot.status?.sizeBytes ?? 0;
  }
  rows.push({
    what: 'snapshot kept on the server',
    servers,
    seconds: local,
    detail: `${(size / 1024 ** 2).toFixed(1)} MiB`,
  });

  await kcps.mergePatch(
    { namespace, name: kcpName },
    {
      spec: {
        etcd: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            folder: cluster,
            insecure: true,
            credentialsSecretName: 's3-credentials',
          },
        },
      },
    },
  );
  const uploaded: number[] = [];
  let last = '';
  for (let run = 0; run < RUNS; run++) {
    const { seconds: took, snapshot } = await snapshotOnce(
      client,
      namespace,
      cluster,
      `${cluster}-s3-${run}`,
    );
    uploaded.push(took);
    last = snapshot.metadata.name!;
  }
  rows.push({
    what: 'snapshot uploaded to S3',
    servers,
    seconds: uploaded,
    detail: `${(size / 1024 ** 2).toFixed(1)} MiB`,
  });

  await api.deleteNamespacedConfigMap({ name: 'data-0', namespace: 'default' });
  const restoreStarted = Date.now();
  await kcps.mergePatch(
    { namespace, name: kcpName },
    { spec: { etcdSnapshotRestore: { name: last, generation: 1 } } },
  );
  const finished = await until('restore finished', async () => {
    const status = (await kcps.get({ namespace, name: kcpName })).status?.etcdSnapshotRestore;
    if (status?.phase === 'Failed') throw new Error(`restore failed: ${status.message}`);
    return status?.phase === 'Finished' && seconds(restoreStarted);
  });
  await waitForClusterAvailable(client, namespace, cluster, TIMEOUT_MS);
  const available = seconds(restoreStarted);
  const back = await workloadApi(client, namespace, cluster);
  await back.readNamespacedConfigMap({ name: 'data-0', namespace: 'default' });
  // The other servers' etcd members join again, empty, at their servers' next health check.
  const etcdDir = join(simStateDir, 'clusters', namespace, cluster, 'etcd');
  const rejoined = await until(
    'every etcd member voting again',
    async () => (await votingMembersIn(etcdDir)).length === servers && seconds(restoreStarted),
  );
  rows.push({
    what: 'restore from S3 (to Finished)',
    servers,
    seconds: [finished],
    detail: 'download, etcdutl restore, server restart',
  });
  rows.push({
    what: 'restore from S3 (to Cluster Available)',
    servers,
    seconds: [available],
    detail: 'the deleted ConfigMap back',
  });
  rows.push({
    what: 'restore from S3 (to every etcd member voting)',
    servers,
    seconds: [rejoined],
    detail: `${servers} member(s); the others rejoin at their next health check`,
  });
  rows.push(await benchRotation(client, namespace, cluster, servers));
  rows.push(await benchEncryptionKeys(client, namespace, cluster, servers));
  await deleteClusterAndWait(client, namespace, cluster);
  return rows;
}

/**
 * Asks the control plane for a day-2 operation (generation 1 of `spec`) and times it until `statusOf` shows it
 * `done`; a Failed phase ends the wait with its message.
 */
async function timeOperation<S extends { generation?: number; phase: string; message?: string }>(
  client: KubeClient,
  namespace: string,
  cluster: string,
  spec: Record<string, unknown>,
  statusOf: (kcp: K3sControlPlane) => S | undefined,
  done: S['phase'],
): Promise<{ seconds: number; status: S }> {
  const kcps = client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  const name = controlPlaneName(cluster);
  const started = Date.now();
  await kcps.mergePatch({ namespace, name }, { spec });
  const status = await until(`${Object.keys(spec).join(', ')} ${done}`, async () => {
    const current = statusOf(await kcps.get({ namespace, name }));
    if (current?.generation === 1 && current.phase === 'Failed') throw new Error(current.message);
    return current?.generation === 1 && current.phase === done && current;
  });
  return { seconds: seconds(started), status };
}

/** `spec.rotateCertificates`: every server's certificates in turn, through its plan, until the rotation finished. */
async function benchRotation(
  client: KubeClient,
  namespace: string,
  cluster: string,
  servers: number,
): Promise<Row> {
  const { seconds: took, status } = await timeOperation(
    client,
    namespace,
    cluster,
    { rotateCertificates: { generation: 1 } },
    (kcp) => kcp.status?.certificateRotation,
    'Finished',
  );
  return {
    what: 'certificate rotation (to Finished)',
    servers,
    seconds: [took],
    detail: `${status.rotated?.length ?? 0} server(s), one at a time; no Machine replaced`,
  };
}

/** `spec.rotateEncryptionKeys`: Rancher's six phases, until Done (every Secret of the cluster written again). */
async function benchEncryptionKeys(
  client: KubeClient,
  namespace: string,
  cluster: string,
  servers: number,
): Promise<Row> {
  const { seconds: took } = await timeOperation(
    client,
    namespace,
    cluster,
    { rotateEncryptionKeys: { generation: 1 } },
    (kcp) => kcp.status?.rotateEncryptionKeys,
    'Done',
  );
  const secrets = (await (await workloadApi(client, namespace, cluster)).listSecretForAllNamespaces()).items
    .length;
  return {
    what: 'encryption key rotation (to Done)',
    servers,
    seconds: [took],
    detail: `prepare, rotate, reencrypt (${secrets} Secret(s)), each with ${servers - 1} server restart(s)`,
  };
}

async function benchRollback(client: KubeClient, namespace: string, s3: TestS3Server): Promise<Row> {
  const cluster = 'bench-rollback';
  const kcpName = controlPlaneName(cluster);
  const kcps = client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
  await createSimK3sCluster(client, {
    namespace,
    name: cluster,
    version: 'v1.34.4',
    controlPlaneReplicas: 1,
    workers: 0,
  });
  await waitForClusterAvailable(client, namespace, cluster, TIMEOUT_MS);
  const started = Date.now();
  await kcps.mergePatch(
    { namespace, name: kcpName },
    {
      spec: {
        version: 'v1.35.4',
        // The upgrade replaces the server: the pre-upgrade snapshot must outlive it (S3).
        etcd: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            folder: cluster,
            insecure: true,
            credentialsSecretName: 's3-credentials',
          },
        },
        upgradePolicy: {
          snapshotBefore: true,
          rollbackOnFailure: true,
          healthySeconds: 10,
          failureToleranceSeconds: 0,
          workloadChecks: [{ kind: 'Deployment', namespace: 'default', name: 'missing' }],
        },
      },
    },
  );
  const phases: string[] = [];
  await until('the upgrade rolled back', async () => {
    const upgrade = (await kcps.get({ namespace, name: kcpName })).status?.upgrade;
    if (upgrade && !phases.at(-1)?.startsWith(`${upgrade.phase} `))
      phases.push(`${upgrade.phase} ${seconds(started).toFixed(1)}s`);
    if (upgrade?.phase === 'Failed')
      throw new Error(`the upgrade failed instead of rolling back: ${upgrade.message}`);
    return upgrade?.phase === 'RolledBack';
  });
  const took = seconds(started);
  await deleteClusterAndWait(client, namespace, cluster);
  return {
    what: 'guarded upgrade, gate fails, rolled back',
    servers: 1,
    seconds: [took],
    detail: phases.join(' → '),
  };
}

function table(rows: readonly Row[]): string {
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:day2\` on ${cpus().length} cores: clusters holding ${CONFIGMAPS} ConfigMaps of 2 KiB and ${SECRETS_COUNT} Secrets (encrypted at rest), snapshots taken ${RUNS} times each (median, max).`,
    '',
    '| operation | servers | seconds (median) | max | notes |',
    '|---|---|---|---|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.what} | ${row.servers} | ${median(row.seconds).toFixed(1)} | ${Math.max(...row.seconds).toFixed(1)} | ${row.detail} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const env = await startTestEnvironment({ noContainers: true });
  process.env['CAPSTAN_TEST_KUBECONFIG'] = env.kubeconfigPath;
  process.env['CAPSTAN_TEST_NATS_URL'] = env.natsUrl;
  if (env.etcdUrl) process.env['CAPSTAN_TEST_ETCD_URL'] = env.etcdUrl;
  const s3 = await startS3Server({ buckets: [BUCKET] });
  const rows: Row[] = [];
  try {
    const capstan = await startCapstan('day2', {
      env: { ...FAST_SIM_ENV, CAPSTAN_SIM_NODE_AGENT: 'in-process' },
    });
    const namespace = capstan.namespace.name;
    const client = createKubeClient(capstan.namespace.kc);
    try {
      await client.resource<V1Secret>(SECRETS).create({
        metadata: { name: 's3-credentials', namespace },
        stringData: { accessKey: s3.accessKey, secretKey: s3.secretKey },
      });
      for (const servers of [1, 3]) {
        rows.push(...(await benchCluster(client, namespace, s3, servers, capstan.simStateDir)));
        process.stdout.write(`${JSON.stringify(rows.slice(-4))}\n`);
      }
      rows.push(await benchRollback(client, namespace, s3));
    } finally {
      await client.close();
      await capstan.stop();
    }
  } finally {
    await s3.stop();
    await env.stop();
  }
  const text = table(rows);
  process.stdout.write(`${text}\n`);
  const doc = join(repoRoot(), 'docs/day2.md');
  const begin = '<!-- bench:day2 begin -->';
  const end = '<!-- bench:day2 end -->';
  const current = readFileSync(doc, 'utf8');
  const i = current.indexOf(begin);
  const j = current.indexOf(end);
  if (i >= 0 && j > i)
    writeFileSync(doc, `${current.slice(0, i + begin.length)}\n${text}\n${current.slice(j)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
