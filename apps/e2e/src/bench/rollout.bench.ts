// `npm run bench:rollout`: the same Kubernetes upgrade (v1.34.4 -> v1.35.4) of a cluster of 1 control plane + 10
// workers, rolled out in place (`rollout.inPlace: Preferred`) and by replacement (`Never`), with the five services as
// processes, sim machines with real node agents and a real workload API server per cluster. Both roll one machine
// at a time (maxSurge 0, maxUnavailable 1 for the workers; the control plane is one machine). Measures the time from
// the spec change to every Machine up to date and Available on the new version, and the management API server's
// requests during it per updated machine (apiserver_request_total: every client, the bench's own watch included).
// Writes the table into docs/in-place-updates.md.
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { text as streamText } from 'node:stream/consumers';
import {
  LABELS,
  RESOURCES,
  getCondition,
  type InPlacePolicy,
  type Machine,
} from '@capstan/api';
import { createKubeClient, Informer, type KubeClient, HttpMethod } from '@capstan/kube';
import { eventually, repoRoot, startCapstan, startTestEnvironment, type CapstanUnderTest } from '@capstan/testing';
import { controlPlaneName, createSimK3sCluster, deploymentName } from '../sim-cluster-fixture.js';

const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 10);
const FROM = 'v1.34.4';
const TO = 'v1.35.4';
const TIMEOUT_MS = 20 * 60 * 1000;

interface Result {
  policy: InPlacePolicy;
  seconds: number;
  requests: number;
  created: number;
  deleted: number;
}

const isTrueOn = (m: Machine, type: string) => getCondition(m.status?.conditions, type)?.status === 'True';

async function apiserverRequests(client: KubeClient): Promise<number> {
  const stream = await client.stream({ method: HttpMethod.GET, path: '/metrics' });
  const text = await streamText(stream);
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('apiserver_request_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function rollout(capstan: CapstanUnderTest, client: KubeClient, policy: InPlacePolicy): Promise<Result> {
  const ns = capstan.namespace.name;
  const name = `roll-${policy.toLowerCase()}`;
  const kcp = controlPlaneName(name);
  const md = deploymentName(name);
  const machines = new Informer<Machine>(client, RESOURCES.Machine, {
    namespace: ns,
    labelSelector: `${LABELS.clusterName}=${name}`,
  });
  machines.start();
  await machines.waitForSync();

  await createSimK3sCluster(client, {
    namespace: ns,
    name,
    version: FROM,
    controlPlaneReplicas: 1,
    workers: WORKERS,
    controlPlaneInPlace: policy,
    workerRollout: { inPlace: policy, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } },
  });
  const settled = (version: string) =>
    eventually(
      () => {
        const all = machines.list(ns).filter((m) => !m.metadata.deletionTimestamp);
        return (
          // Nothing still being deleted: a replacement is done when the old machine is gone.
          all.length === WORKERS + 1 &&
          machines.list(ns).length === all.length &&
          all.every((m) => m.spec.version === version && isTrueOn(m, 'Available') && isTrueOn(m, 'UpToDate') && isTrueOn(m, 'PlanApplied') && !isTrueOn(m, 'Updating'))
        );
      },
      { message: `${name} settled on ${version}`, timeoutMs: TIMEOUT_MS, intervalMs: 200 },
    );
  await settled(FROM);
  const before = new Set(machines.list(ns).map((m) => m.metadata.uid!));

  const requestsBefore = await apiserverRequests(client);
  const start = performance.now();
  await client.resource(RESOURCES.K3sControlPlane).mergePatch({ namespace: ns, name: kcp }, { spec: { version: TO } });
  await eventually(
    () => machines.list(ns).some((m) => LABELS.controlPlane in (m.metadata.labels ?? {}) && m.spec.version === TO && isTrueOn(m, 'UpToDate') && isTrueOn(m, 'Available')),
    { message: `${name} control plane on ${TO}`, timeoutMs: TIMEOUT_MS, intervalMs: 200 },
  );
  await client.resource(RESOURCES.MachineDeployment).mergePatch({ namespace: ns, name: md }, { spec: { template: { spec: { version: TO } } } });
  await settled(TO);
  const seconds = (performance.now() - start) / 1000;
  const requests = (await apiserverRequests(client)) - requestsBefore;
  const after = new Set(machines.list(ns).map((m) => m.metadata.uid!));
  await machines.stop();
  const created = [...after].filter((uid) => !before.has(uid)).length;
  const deleted = [...before].filter((uid) => !after.has(uid)).length;
  return { policy, seconds, requests, created, deleted };
}

function table(results: Result[]): string {
  const rows = results.map(
    (r) =>
      `| ${r.policy === 'Never' ? 'replace (`Never`)' : 'in place (`Preferred`)'} | ${r.seconds.toFixed(1)} s | ${(r.requests / (WORKERS + 1)).toFixed(0)} | ${r.created} / ${r.deleted} |`,
  );
  return [
    `Upgrade ${FROM} -> ${TO} of 1 control plane + ${WORKERS} workers, one machine at a time (${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}):`,
    '',
    '| rollout | spec change -> every Machine up to date | management API requests per updated machine | Machines created / deleted |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const env = await startTestEnvironment({ noContainers: true });
  process.env['CAPSTAN_TEST_KUBECONFIG'] = env.kubeconfigPath;
  process.env['CAPSTAN_TEST_NATS_URL'] = env.natsUrl;
  if (env.etcdUrl) process.env['CAPSTAN_TEST_ETCD_URL'] = env.etcdUrl;
  const results: Result[] = [];
  try {
    for (const policy of ['Preferred', 'Never'] as const) {
      const capstan = await startCapstan('bench', {
        env: { CAPSTAN_SIM_HEARTBEAT_SECONDS: '1', CAPSTAN_SIM_NODE_STATUS_SECONDS: '2', CAPSTAN_SIM_PROVISIONING_JITTER: '0', CAPSTAN_SIM_NODE_AGENT: 'in-process' },
      });
      const client = createKubeClient(capstan.namespace.kc);
      try {
        results.push(await rollout(capstan, client, policy));
        process.stdout.write(`${JSON.stringify(results.at(-1))}\n`);
      } finally {
        await client.close();
        await capstan.stop();
      }
    }
  } finally {
    await env.stop();
  }
  const text = table(results);
  process.stdout.write(`${text}\n`);
  const doc = join(repoRoot(), 'docs/in-place-updates.md');
  const begin = '<!-- bench:rollout begin -->';
  const end = '<!-- bench:rollout end -->';
  const current = readFileSync(doc, 'utf8');
  const i = current.indexOf(begin);
  const j = current.indexOf(end);
  if (i >= 0 && j > i) writeFileSync(doc, `${current.slice(0, i + begin.length)}\n${text}\n${current.slice(j)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
