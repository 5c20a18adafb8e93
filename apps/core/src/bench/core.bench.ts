// `npm run bench:core`: the core service (in process) takes BENCH_CLUSTERS clusters x BENCH_MACHINES machines of
// generic providers from created to Running; the bench plays the providers (status + hand-off event) and the
// workload cluster (one Node per machine, in the management API server). Reports the time of each stage,
// reconciles per second, API server requests per machine (apiserver_request_total, the bench's own requests
// taken off) and memory, and writes the figures into docs/core.md.
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { text as streamText } from 'node:stream/consumers';
import { KubeConfig, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { pino } from 'pino';
import {
  CLUSTER_SECRET_TYPE,
  MachinePhase,
  RESOURCES,
  isTrue,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
} from '@capstan/api';
import {
  EventBusConnection,
  EventPublisher,
  uniqueEventTopology,
  type EventDataInput,
  type HandoffEventName,
} from '@capstan/events';
import { KubeClient, type ResourceType, HttpMethod } from '@capstan/kube';
import { defaultServiceOptions, startService, type RunningService } from '@capstan/provider-kit';
import {
  apiserverRequestsByResource,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  startTestEnvironment,
} from '@capstan/testing';
import { createCoreService } from '../core-service.js';
import { NODES, SECRETS } from '../remote/resources.js';

const CLUSTERS = Number(process.env['BENCH_CLUSTERS'] ?? 100);
const MACHINES = Number(process.env['BENCH_MACHINES'] ?? 10);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 10);
const WRITERS = 16;
const TIMEOUT_MS = 15 * 60 * 1000;
const IDLE_MS = 15_000;
const SETTLE_MS = 5_000;

const logger = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' });
const gc = (globalThis as { gc?: () => void }).gc;

type Unstructured = KubernetesObject & Record<string, unknown>;

function memory(): { heapMiB: number; rssMiB: number } {
  for (let i = 0; i < 3; i++) gc?.();
  const m = process.memoryUsage();
  return { heapMiB: m.heapUsed / 2 ** 20, rssMiB: m.rss / 2 ** 20 };
}

async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function until(what: string, check: () => boolean): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > TIMEOUT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (performance.now() - start) / 1000;
}

/** Requests the bench itself sends, by `VERB resource[/subresource]`, to take them off the API server's counts. */
const own = new Map<string, number>();
function count(verb: string, resource: string): void {
  own.set(`${verb} ${resource}`, (own.get(`${verb} ${resource}`) ?? 0) + 1);
}

/** apiserver_request_total by `VERB resource[/subresource]` (watches count once, when they start). */
async function apiserverRequests(client: KubeClient): Promise<Map<string, number>> {
  count('GET', '');
  const stream = await client.stream({ method: HttpMethod.GET, path: '/metrics' });
  return new Map(Object.entries(apiserverRequestsByResource(await streamText(stream))));
}

function genericType(kind: string): ResourceType {
  const g = genericProviderKind(kind);
  return { group: g.group, version: g.version, plural: g.plural, kind: g.kind, namespaced: true };
}

interface Bench {
  client: KubeClient;
  namespace: string;
  service: RunningService;
  publisher: EventPublisher;
  kubeconfig: string;
}

const INFRA_CLUSTER = 'GenericInfrastructureCluster';
const CP = 'GenericControlPlane';
const INFRA = 'GenericInfrastructureMachine';
const BOOTSTRAP = 'GenericBootstrapConfig';
const ref = (kind: string, name: string): ContractVersionedObjectReference => ({
  apiGroup: genericProviderKind(kind).group,
  kind,
  name,
});
const clusterName = (c: number) => `c${c}`;
const machineName = (c: number, m: number) => `c${c}-m${m}`;

async function create(bench: Bench, type: ResourceType, obj: KubernetesObject): Promise<KubernetesObject> {
  count('POST', type.plural);
  return bench.client.resource(type).create(obj);
}

async function patchStatus(
  bench: Bench,
  type: ResourceType,
  name: string,
  status: Record<string, unknown>,
): Promise<Unstructured> {
  count('PATCH', `${type.plural}/status`);
  return bench.client
    .resource<Unstructured>(type)
    .patchStatus({ namespace: type.namespaced ? bench.namespace : undefined, name }, status);
}

async function handoff(
  bench: Bench,
  event: HandoffEventName,
  kind: string,
  obj: Unstructured,
  fields: Record<string, unknown>,
): Promise<void> {
  const data = {
    object: {
      apiGroup: genericProviderKind(kind).group,
      kind,
      namespace: bench.namespace,
      name: obj.metadata!.name!,
      uid: obj.metadata!.uid!,
    },
    generation: obj.metadata?.generation ?? 0,
    resourceVersion: obj.metadata!.resourceVersion!,
    ...fields,
  };
  await bench.publisher.publish(event, data as unknown as EventDataInput<typeof event>);
}

/** Stage 1: what a user applies (`capstan generate cluster | kubectl apply`), providers not done yet. */
async function createCluster(bench: Bench, c: number): Promise<void> {
  const name = clusterName(c);
  const ns = bench.namespace;
  await create(bench, genericType(INFRA_CLUSTER), {
    metadata: { name: `${name}-infra`, namespace: ns },
    spec: {},
  } as Unstructured);
  await create(bench, genericType(CP), {
    metadata: { name: `${name}-cp`, namespace: ns },
    spec: { replicas: 1 },
  } as Unstructured);
  await create(bench, RESOURCES.Cluster, {
    metadata: { name, namespace: ns },
    spec: { infrastructureRef: ref(INFRA_CLUSTER, `${name}-infra`), controlPlaneRef: ref(CP, `${name}-cp`) },
  } as Cluster);
  for (let m = 0; m < MACHINES; m++) {
    const machine = machineName(c, m);
    await create(bench, genericType(BOOTSTRAP), {
      metadata: { name: `${machine}-boot`, namespace: ns },
      spec: {},
    } as Unstructured);
    await create(bench, genericType(INFRA), {
      metadata: { name: `${machine}-infra`, namespace: ns },
      spec: {},
    } as Unstructured);
    await create(bench, RESOURCES.Machine, {
      metadata: { name: machine, namespace: ns },
      spec: {
        clusterName: name,
        bootstrap: { configRef: ref(BOOTSTRAP, `${machine}-boot`) },
        infrastructureRef: ref(INFRA, `${machine}-infra`),
      },
    } as Machine);
  }
}

/** Stage 2: every provider reports ready, as Capstan's providers do: contract fields, then a hand-off event. */
async function providersReport(bench: Bench, c: number): Promise<void> {
  const name = clusterName(c);
  const ns = bench.namespace;
  count('PATCH', genericType(INFRA_CLUSTER).plural);
  await bench.client
    .resource(genericType(INFRA_CLUSTER))
    .mergePatch(
      { namespace: ns, name: `${name}-infra` },
      { spec: { controlPlaneEndpoint: { host: `10.${c >> 8}.${c & 255}.1`, port: 6443 } } },
    );
  const infraCluster = await patchStatus(bench, genericType(INFRA_CLUSTER), `${name}-infra`, {
    initialization: { provisioned: true },
  });
  await handoff(bench, 'infrastructure-cluster.provisioned', INFRA_CLUSTER, infraCluster, {
    clusterName: name,
  });
  count('POST', 'secrets');
  await bench.client.resource(SECRETS).create({
    metadata: {
      name: `${name}-kubeconfig`,
      namespace: ns,
      labels: { 'cluster.x-k8s.io/cluster-name': name },
    },
    type: CLUSTER_SECRET_TYPE,
    data: { value: Buffer.from(bench.kubeconfig).toString('base64') },
  } as KubernetesObject);
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const available = {
    type: 'Available',
    status: 'True',
    reason: 'Available',
    message: '',
    lastTransitionTime: now,
  };
  const cp = await patchStatus(bench, genericType(CP), `${name}-cp`, {
    initialization: { controlPlaneInitialized: true },
    replicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    upToDateReplicas: 1,
    conditions: [available],
  });
  await handoff(bench, 'control-plane.initialized', CP, cp, { clusterName: name });

  for (let m = 0; m < MACHINES; m++) {
    const machine = machineName(c, m);
    const providerID = `bench://${ns}/${machine}`;
    const config = await patchStatus(bench, genericType(BOOTSTRAP), `${machine}-boot`, {
      initialization: { dataSecretCreated: true },
      dataSecretName: `${machine}-data`,
    });
    await handoff(bench, 'bootstrap.data-secret-created', BOOTSTRAP, config, {
      clusterName: name,
      machineName: machine,
      dataSecretName: `${machine}-data`,
    });
    count('PATCH', genericType(INFRA).plural);
    await bench.client
      .resource(genericType(INFRA))
      .mergePatch({ namespace: ns, name: `${machine}-infra` }, { spec: { providerID } });
    const infra = await patchStatus(bench, genericType(INFRA), `${machine}-infra`, {
      initialization: { provisioned: true },
      addresses: [{ type: 'InternalIP', address: `10.${c >> 8}.${c & 255}.${m + 10}` }],
    });
    await create(bench, NODES, { metadata: { name: `${ns}-${machine}` }, spec: { providerID } } as V1Node);
    const condition = (type: string, status: string) => ({
      type,
      status,
      reason: 'Bench',
      message: '',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    });
    await patchStatus(bench, NODES, `${ns}-${machine}`, {
      conditions: [
        condition('Ready', 'True'),
        condition('MemoryPressure', 'False'),
        condition('DiskPressure', 'False'),
        condition('PIDPressure', 'False'),
      ],
    });
    await handoff(bench, 'infrastructure-machine.provisioned', INFRA, infra, {
      clusterName: name,
      machineName: machine,
      providerID,
    });
  }
}

function reconciles(service: RunningService): number {
  return service.context.controllers
    .status()
    .filter((c) => c.name === 'cluster' || c.name === 'machine')
    .reduce((sum, c) => sum + c.reconciles, 0);
}

/** The API server's own housekeeping (its lease, the kubernetes Service endpoints): not the core's. */
const SERVER_HOUSEKEEPING = /^\w+ (leases|endpoints|endpointslices)$/;

function coreRequests(
  before: Map<string, number>,
  after: Map<string, number>,
  ownBefore: Map<string, number>,
  ownAfter: Map<string, number>,
): Map<string, number> {
  const core = new Map<string, number>();
  for (const [key, value] of after) {
    if (SERVER_HOUSEKEEPING.test(key)) continue;
    const delta = value - (before.get(key) ?? 0) - ((ownAfter.get(key) ?? 0) - (ownBefore.get(key) ?? 0));
    if (delta > 0) core.set(key, delta);
  }
  return core;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const env = await startTestEnvironment({ log: (line) => logger.info(line) });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(env.kubeconfig);
  const client = new KubeClient(kubeConfig, { fieldManager: 'core-bench' });
  const namespace = `core-bench-${randomBytes(3).toString('hex')}`;
  let service: RunningService | undefined;
  let bus: EventBusConnection | undefined;
  const machinesTotal = CLUSTERS * MACHINES;
  try {
    await installCapstanDefinitions(kubeConfig);
    await installGenericProviderCrds(kubeConfig);
    await client
      .resource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false })
      .create({ metadata: { name: namespace } });
    const topology = uniqueEventTopology('corebench');
    const baseline = memory();
    service = await startService(createCoreService({ watchExternalProviders: false }), {
      ...defaultServiceOptions('core', {}),
      kubeconfig: env.kubeconfigPath,
      natsUrl: env.natsUrl,
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: process.env['LOG_LEVEL'] ?? 'warn',
      concurrency: CONCURRENCY,
    });
    bus = await EventBusConnection.connect({ servers: env.natsUrl, name: 'core-bench' });
    const bench: Bench = {
      client,
      namespace,
      service,
      publisher: new EventPublisher(bus, { source: '/capstan/core-bench', topology }),
      kubeconfig: env.kubeconfig,
    };
    const machines = service.context.manager.informer<Machine>(RESOURCES.Machine);
    const clusters = service.context.manager.informer<Cluster>(RESOURCES.Cluster);
    const clusterIndexes = Array.from({ length: CLUSTERS }, (_, i) => i);
    const ownAt = () => new Map(own);

    // Stage 1: everything created, the core takes it in (finalizers, owner references, Pending/Provisioning).
    const requests0 = await apiserverRequests(client);
    const own0 = ownAt();
    const reconciles0 = reconciles(service);
    const started = performance.now();
    await inParallel(clusterIndexes, WRITERS, (c) => createCluster(bench, c));
    const createdSeconds = (performance.now() - started) / 1000;
    await until(
      'every machine taken in',
      () =>
        machines.list(namespace).filter((m) => m.status?.phase === MachinePhase.Pending).length ===
        machinesTotal,
    );
    await until(
      'every cluster taken in',
      () => clusters.list(namespace).filter((c) => c.status?.phase === 'Provisioning').length === CLUSTERS,
    );
    const intakeSeconds = (performance.now() - started) / 1000;
    const requests1 = await apiserverRequests(client);
    const own1 = ownAt();
    const reconciles1 = reconciles(service);

    // Stage 2: the providers report ready; the core copies, finds the Nodes, and the machines run.
    const readyAt = performance.now();
    await inParallel(clusterIndexes, WRITERS, (c) => providersReport(bench, c));
    const reportedSeconds = (performance.now() - readyAt) / 1000;
    await until(
      'every machine Running',
      () =>
        machines.list(namespace).filter((m) => m.status?.phase === MachinePhase.Running).length ===
        machinesTotal,
    );
    const runningSeconds = (performance.now() - readyAt) / 1000;
    await until(
      'every cluster Available',
      () =>
        clusters.list(namespace).filter((c) => isTrue(c.status?.conditions, 'Available')).length === CLUSTERS,
    );
    const availableSeconds = (performance.now() - readyAt) / 1000;
    await until('every cluster counting all its workers available', () =>
      clusters.list(namespace).every((c) => c.status?.workers?.availableReplicas === MACHINES),
    );
    const reconciles2 = reconciles(service);
    const converged = memory();
    // The API server counts a request once it has answered it: let the last answers of stage 2 be counted.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const requests2 = await apiserverRequests(client);
    const own2 = ownAt();

    // Stage 3: converged; nothing should be written, only reads of provider objects on resync (none in 15 s).
    const reconcilesIdle0 = reconciles(service);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idleReconciles = reconciles(service) - reconcilesIdle0;
    const requests3 = await apiserverRequests(client);
    const own3 = ownAt();

    const intake = coreRequests(requests0, requests1, own0, own1);
    const ready = coreRequests(requests1, requests2, own1, own2);
    const idle = coreRequests(requests2, requests3, own2, own3);
    const totalReconciles = reconciles2 - reconciles0;
    const stage2Reconciles = reconciles2 - reconciles1;
    const byVerb = new Map<string, number>();
    for (const [key, value] of [...intake, ...ready]) {
      const verb = key.split(' ')[0]!;
      byVerb.set(verb, (byVerb.get(verb) ?? 0) + value);
    }
    const rows: [string, string][] = [
      [
        'clusters x machines',
        `${CLUSTERS} x ${MACHINES} (${machinesTotal} machines), ${CONCURRENCY} workers per controller`,
      ],
      ['objects created by the bench (stage 1)', `${createdSeconds.toFixed(1)} s`],
      ['created -> all taken in (Pending / Provisioning)', `${intakeSeconds.toFixed(1)} s`],
      ['providers reported ready (bench writes + events)', `${reportedSeconds.toFixed(1)} s`],
      [
        'providers ready -> all machines Running',
        `${runningSeconds.toFixed(1)} s (${(runningSeconds - reportedSeconds).toFixed(1)} s after the last report)`,
      ],
      ['providers ready -> all clusters Available', `${availableSeconds.toFixed(1)} s`],
      ['created -> all Running (total)', `${(intakeSeconds + runningSeconds).toFixed(1)} s`],
      [
        'Cluster + Machine reconciles',
        `${totalReconciles} (${(totalReconciles / machinesTotal).toFixed(1)} per machine)`,
      ],
      ['reconciles per second (stage 2)', `${(stage2Reconciles / availableSeconds).toFixed(0)}`],
      [
        'core API requests per machine (stages 1+2)',
        `${((sum(intake) + sum(ready)) / machinesTotal).toFixed(1)}`,
      ],
      [
        '  by verb',
        [...byVerb.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([v, n]) => `${v} ${(n / machinesTotal).toFixed(1)}`)
          .join(', '),
      ],
      ['core API requests while converged, 15 s', `${sum(idle)} (${idleReconciles} reconciles)`],
      [
        'memory after convergence (heap / RSS)',
        `${converged.heapMiB.toFixed(0)} / ${converged.rssMiB.toFixed(0)} MiB (before the core started: ${baseline.heapMiB.toFixed(0)} / ${baseline.rssMiB.toFixed(0)} MiB)`,
      ],
    ];
    const width = Math.max(...rows.map(([k]) => k.length));
    for (const [k, v] of rows) process.stdout.write(`${k.padEnd(width)}  ${v}\n`);
    process.stdout.write('\ncore requests by verb and resource (stages 1+2):\n');
    const merged = new Map<string, number>();
    for (const [key, value] of [...intake, ...ready]) merged.set(key, (merged.get(key) ?? 0) + value);
    for (const [key, value] of [...merged.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
      process.stdout.write(`  ${key.padEnd(45)} ${value}\n`);
    }
    if (idle.size > 0) {
      process.stdout.write('\ncore requests while converged:\n');
      for (const [key, value] of [...idle.entries()].sort((a, b) => b[1] - a[1]))
        process.stdout.write(`  ${key.padEnd(45)} ${value}\n`);
    }
    writeDocs(rows, merged, machinesTotal);
  } finally {
    await service?.stop();
    await bus?.drain();
    const nodes = client.resource<V1Node>(NODES);
    const list = await nodes.list({}).catch(() => ({ items: [] as V1Node[] }));
    await inParallel(
      list.items.filter((n) => n.metadata?.name?.startsWith(`${namespace}-`)),
      WRITERS,
      (n) => nodes.delete({ name: n.metadata!.name! }).catch(() => undefined),
    );
    await client
      .resource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false })
      .delete({ name: namespace })
      .catch(() => undefined);
    await client.close();
    await env.stop();
  }
}

function writeDocs(rows: [string, string][], requests: Map<string, number>, machinesTotal: number): void {
  const docs = join(process.cwd(), 'docs', 'core.md');
  const table = [
    '<!-- bench:core:start -->',
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:core\` on ${cpus().length} cores (local etcd + kube-apiserver + nats-server on the same machine):`,
    '',
    '| figure | value |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k.trim()} | ${v} |`),
    '',
    '| core requests (stages 1+2) | total | per machine |',
    '| --- | --- | --- |',
    ...[...requests.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([key, value]) => `| ${key} | ${value} | ${(value / machinesTotal).toFixed(2)} |`),
    '<!-- bench:core:end -->',
  ].join('\n');
  try {
    const text = readFileSync(docs, 'utf8');
    if (!text.includes('<!-- bench:core:start -->')) {
      process.stdout.write('docs/core.md has no bench markers: figures not written\n');
      return;
    }
    writeFileSync(docs, text.replace(/<!-- bench:core:start -->[\s\S]*<!-- bench:core:end -->/, table));
    process.stdout.write('figures written to docs/core.md\n');
  } catch {
    process.stdout.write('docs/core.md not found: figures not written\n');
  }
}

await main();
