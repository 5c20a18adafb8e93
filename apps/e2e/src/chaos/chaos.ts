// `npm run chaos`: proves the system converges under faults, with real parts only: the management kube-apiserver,
// etcd and NATS of the local test environment, the five Capstan services as processes with 2 sharded replicas each,
// and sim clusters in shared mode (one shared workload kube-apiserver behind a front proxy per cluster, node agents
// in the machine-provider's process). Faults: SIGKILLs of random replicas at random moments (while Machines are
// being replaced), NATS stopped, the management kube-apiserver restarted, the workload kube-apiserver frozen.
// After each: time until everything converged (convergence.ts). Then malformed events on every subject and
// malformed manifests, a secret scan of every log line and Event, and a pass/fail list (report.ts). Not part of
// `npm test`; see docs/reliability.md.
import 'reflect-metadata';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createKubeClient, type KubeClient, HttpMethod } from '@capstan/kube';
import { ADMIN_API_AUDIENCE } from '@capstan/observability';
import {
  clusterAdminToken,
  createTestNamespace,
  installCapstanDefinitions,
  LOCAL_SERVICES,
  repoRoot,
  startLocalEnvironment,
  startLocalServices,
  stopLocalServices,
  type LocalEnvironment,
  type LocalService,
  type StartLocalServicesOptions,
  type TestNamespace,
} from '@capstan/testing';
import { deadLettersSoFar, runMalformedEvents } from './event-phase.js';
import {
  ProcessWatch,
  freezeWorkloadApiServer,
  killReplica,
  natsOutage,
  restartManagementApiServer,
  sharedApiServerPid,
  type During,
  type OutageRecord,
} from './faults.js';
import { runAgentFaults } from './agent-faults.js';
import { createCluster, deleteRandomWorker, type ClusterShape } from './fleet.js';
import { checkInvariants } from './invariants.js';
import { runMalformedManifests } from './manifest-phase.js';
import { OptionsError, parseOptions, USAGE, type ChaosOptions } from './options.js';
import { Observer } from './observer.js';
import { createRandom, randomSeed, type Random } from './random.js';
import {
  renderSummary,
  summarizeFaults,
  writeReport,
  type ChaosReport,
  type FaultKind,
  type FaultRecord,
} from './report.js';
import { NeedleIndex, scanFile, scanTexts, secretNeedles, type LeakHit } from './secret-scan.js';
import { countStartupHandovers } from './startup-handovers.js';

const REPLICAS = 2;
const FAST_LEASE_TIMINGS = { leaseDuration: '4s', renewDeadline: '3s', retryPeriod: '500ms' };
/** The kill during the initial provisioning lands within this of the clusters being created. */
const FIRST_KILL_WINDOW_MS = 30_000;
const PROVISIONING_TIMEOUT_MS = 10 * 60_000;

class Aborted extends Error {}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

interface Run {
  options: ChaosOptions;
  seed: number;
  outDir: string;
  report: ChaosReport;
  log: (line: string) => void;
  env?: LocalEnvironment;
  namespace?: TestNamespace;
  services: LocalService[];
  serviceOptions?: StartLocalServicesOptions;
  client?: KubeClient;
  observer?: Observer;
  watch: ProcessWatch;
  clusters: string[];
  shape?: ClusterShape;
  fakeSecretPem: string;
  /** The node agent tokens of the agent phase: needles for the secret scan. */
  agentTokens: string[];
  /** The observer's admin API token (audience capstan-admin): a needle too. */
  adminApiToken?: string;
  /** When the first fault was injected (epoch ms): the start-up window of the hand-over count ends there. */
  firstFaultAt?: number;
  streams?: { root: string; stream: string; deadLetterStream: string };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace(/Z$/, 'Z');
}

function faultRecord(
  kind: FaultKind,
  index: number,
  detail: string,
  injectedAt: number,
  result: Awaited<ReturnType<Observer['waitForConvergence']>>,
  extra: Partial<FaultRecord> = {},
): FaultRecord {
  return {
    kind,
    index,
    detail,
    injectedAt: new Date(Date.now() - (performance.now() - injectedAt)).toISOString(),
    sinceInjectMs: result.elapsedMs,
    converged: result.converged,
    checks: result.checks,
    lastReasons: result.lastReasons.slice(0, 20),
    stagesSeen: result.stagesSeen,
    ...extra,
  };
}

/** After a fault: stop unless told to keep going; the rest would be measured on a broken system. */
function afterFault(run: Run, record: FaultRecord): void {
  run.report.faults.push(record);
  const took = `${(record.sinceInjectMs / 1000).toFixed(1)} s${record.sinceLiftMs !== undefined ? ` (${(record.sinceLiftMs / 1000).toFixed(1)} s after it was lifted)` : ''}`;
  run.log(
    `  ${record.converged ? 'converged' : 'DID NOT CONVERGE'} ${took}${record.converged ? '' : `: ${record.lastReasons.slice(0, 5).join('; ')}`}`,
  );
  if (run.watch.unexpectedExits.length > 0) {
    const exit = run.watch.unexpectedExits[0]!;
    throw new Aborted(
      `${exit.identity} (pid ${exit.pid}) exited on its own (code ${exit.code}, signal ${exit.signal})`,
    );
  }
  if (!record.converged && !run.options.keepGoing)
    throw new Aborted(
      `${record.kind} #${record.index} did not converge within ${run.options.convergeTimeoutSeconds} s`,
    );
}

async function setUp(run: Run): Promise<void> {
  const { options, log } = run;
  log('starting the management environment (etcd, kube-apiserver, kube-controller-manager, nats-server)');
  const env = await startLocalEnvironment({ log });
  run.env = env;
  log(`  environment in ${env.workDir} (kubeconfig ${env.kubeconfigPath}, NATS ${env.natsUrl})`);
  process.env['CAPSTAN_TEST_KUBECONFIG'] = env.kubeconfigPath;
  process.env['CAPSTAN_TEST_NATS_URL'] = env.natsUrl;
  const namespace = await createTestNamespace('chaos');
  run.namespace = namespace;
  await installCapstanDefinitions(namespace.kc);
  const id = randomBytes(3).toString('hex');
  run.streams = {
    root: `chaos${id}`,
    stream: `CHAOS_${id.toUpperCase()}`,
    deadLetterStream: `CHAOS_${id.toUpperCase()}_DLQ`,
  };
  const serviceOptions: StartLocalServicesOptions = {
    kubeconfigPath: env.kubeconfigPath,
    natsUrl: env.natsUrl,
    logDir: join(run.outDir, 'logs'),
    simStateDir: env.simStateDir,
    env: { CAPSTAN_SIM_ETCD_URL: env.etcdUrl, CAPSTAN_SIM_NODE_AGENT: 'in-process' },
    namespace: namespace.name,
    subjectRoot: run.streams.root,
    streamName: run.streams.stream,
    syncPeriodSeconds: 30,
    replicas: REPLICAS,
    ...(options.leaseTimings === 'fast' ? { leaseTimings: FAST_LEASE_TIMINGS } : {}),
    readyTimeoutMs: 120_000,
    onProgress: (service, state) => state === 'ready' && log(`  ${service}: ${REPLICAS} replicas ready`),
  };
  run.serviceOptions = serviceOptions;
  log(
    `starting ${LOCAL_SERVICES.length} services x ${REPLICAS} replicas (--sharding) in namespace ${namespace.name}`,
  );
  run.services = await startLocalServices(serviceOptions);
  for (const s of run.services) run.watch.watch(s);
  run.client = createKubeClient({ kubeconfigPath: env.kubeconfigPath }, { requestTimeoutMs: 10_000 });
  run.clusters = Array.from({ length: options.clusters }, (_, i) => `fleet-${i}`);
  run.shape = {
    namespace: namespace.name,
    kubernetesVersion: options.kubernetesVersion,
    controlPlanes: options.controlPlanes,
    workers: options.workers,
  };
  run.adminApiToken = await clusterAdminToken(namespace.kc, ADMIN_API_AUDIENCE);
  run.observer = new Observer({
    client: run.client,
    namespace: namespace.name,
    services: () => run.services,
    adminToken: run.adminApiToken,
    expected: { clusters: run.clusters, controlPlanes: options.controlPlanes, workers: options.workers },
    progress: log,
    abortWhen: () => {
      const exit = run.watch.unexpectedExits[0];
      return (
        exit &&
        `${exit.identity} (pid ${exit.pid}) exited on its own (code ${exit.code}, signal ${exit.signal})`
      );
    },
  });
  run.report.environment = {
    namespace: namespace.name,
    subjectRoot: run.streams.root,
    stream: run.streams.stream,
    replicasPerService: REPLICAS,
    services: run.services.map((s) => `${s.name}-${s.replica}`),
  };
}

/** The fleet comes up while one replica is killed at a random moment of it. */
async function provision(run: Run, random: Random): Promise<void> {
  const { client, observer, shape, options, log } = run as Required<Run>;
  log(
    `creating ${options.clusters} clusters (${options.controlPlanes} control plane + ${options.workers} workers, shared mode) with \`capstan generate cluster\``,
  );
  const started = performance.now();
  const queue = [...run.clusters];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift())
        await createCluster(client, name, shape);
    }),
  );
  const delay = random.int(0, FIRST_KILL_WINDOW_MS);
  await sleep(started + delay - performance.now());
  const service = random.pick(LOCAL_SERVICES);
  const replica = random.int(0, REPLICAS - 1);
  log(
    `kill during the initial provisioning: ${service}-${replica}, ${(delay / 1000).toFixed(1)} s after the clusters were created`,
  );
  const injected = performance.now();
  run.firstFaultAt = Date.now();
  const kill = await killReplica(run.services, run.serviceOptions!, run.watch, service, replica);
  const lifted = performance.now();
  const result = await observer.waitForConvergence(started, PROVISIONING_TIMEOUT_MS, {
    intervalMs: 2_000,
  });
  run.report.provisioning = {
    clusters: options.clusters,
    machines: options.clusters * (options.controlPlanes + options.workers),
    converged: result.converged,
    elapsedMs: result.elapsedMs,
    lastReasons: result.lastReasons.slice(0, 20),
  };
  log(
    `provisioning ${result.converged ? 'converged' : 'DID NOT CONVERGE'} after ${(result.elapsedMs / 1000).toFixed(1)} s`,
  );
  afterFault(
    run,
    faultRecord(
      'kill',
      0,
      `SIGKILL ${service}-${replica} during the initial provisioning`,
      injected,
      { ...result, elapsedMs: result.elapsedMs - (injected - started) },
      {
        kill,
        delayMs: delay,
        sinceLiftMs: result.elapsedMs - (lifted - started),
        duringInitialProvisioning: true,
      },
    ),
  );
}

async function kills(run: Run, random: Random): Promise<void> {
  const { client, observer, options, log } = run as Required<Run>;
  for (let round = 1; round <= options.kills; round++) {
    const roundStart = performance.now();
    const churned = options.churn
      ? await deleteRandomWorker(client, run.namespace!.name, run.clusters, random)
      : undefined;
    const delay = random.int(0, options.killWindowSeconds * 1000);
    const service = random.pick(LOCAL_SERVICES);
    const replica = random.int(0, REPLICAS - 1);
    await sleep(roundStart + delay - performance.now());
    log(
      `kill ${round}/${options.kills}: ${service}-${replica} ${(delay / 1000).toFixed(1)} s into the round${churned ? ` (replacing Machine ${churned})` : ''}`,
    );
    const injected = performance.now();
    const kill = await killReplica(run.services, run.serviceOptions!, run.watch, service, replica);
    const lifted = performance.now();
    if (kill.restartError) log(`  ${service}-${replica} did not come back: ${kill.restartError}`);
    const result = kill.restartError
      ? {
          converged: false,
          elapsedMs: lifted - injected,
          checks: 0,
          lastReasons: [`restart failed: ${kill.restartError}`],
          stagesSeen: {},
        }
      : await observer.waitForConvergence(injected, options.convergeTimeoutSeconds * 1000);
    afterFault(
      run,
      faultRecord('kill', round, `SIGKILL ${service}-${replica}`, injected, result, {
        kill,
        churned,
        delayMs: delay,
        sinceLiftMs: result.elapsedMs - (lifted - injected),
      }),
    );
  }
}

/** Polls the objects (not the services' readiness) during an outage: do they converge without the faulted part? */
async function watchObjectsDuring(
  run: Run,
  injectedAt: number,
  lifted: () => boolean,
  into: { ms?: number },
): Promise<void> {
  while (!lifted() && into.ms === undefined) {
    const check = await run.observer!.check({ services: false });
    if (check.ok && !lifted()) into.ms = performance.now() - injectedAt;
    for (let i = 0; i < 4 && !lifted(); i++) await sleep(500);
  }
}

async function outage(
  run: Run,
  kind: Exclude<FaultKind, 'kill'>,
  random: Random,
  inject: (during: During) => Promise<OutageRecord>,
  measureObjectsDuring = false,
): Promise<void> {
  const { client, observer, options, log } = run as Required<Run>;
  const churned = options.churn
    ? await deleteRandomWorker(client, run.namespace!.name, run.clusters, random)
    : undefined;
  log(`${kind}${churned ? ` (replacing Machine ${churned})` : ''}`);
  const during: { ms?: number } = {};
  const injectedAt = performance.now();
  const record = await inject(async (lifted) => {
    if (measureObjectsDuring) await watchObjectsDuring(run, injectedAt, lifted, during);
  });
  log(`  ${record.detail}; lifted after ${((record.liftedAt - record.injectedAt) / 1000).toFixed(1)} s`);
  const result = await observer.waitForConvergence(
    record.injectedAt,
    (options.convergeTimeoutSeconds + (record.liftedAt - record.injectedAt) / 1000) * 1000,
  );
  afterFault(
    run,
    faultRecord(kind, 1, record.detail, record.injectedAt, result, {
      churned,
      sinceLiftMs: result.elapsedMs - (record.liftedAt - record.injectedAt),
      ...(measureObjectsDuring ? { objectsConvergedDuringOutageMs: during.ms } : {}),
    }),
  );
  if (measureObjectsDuring)
    log(
      `  objects ${during.ms === undefined ? 'did not converge' : `converged ${(during.ms / 1000).toFixed(1)} s`} while it was down`,
    );
}

/** Liveness of every replica (pid unchanged, process start time unchanged) and of the shared workload API server. */
function processSnapshot(run: Run): { pids: Record<string, number>; shared?: number } {
  return {
    pids: Object.fromEntries(run.services.map((s) => [`${s.name}-${s.replica}`, s.pid])),
    shared: sharedApiServerPid(run.env!.simStateDir),
  };
}

function compareProcesses(
  run: Run,
  before: ReturnType<typeof processSnapshot>,
): { restarted: string[]; sharedApiServerPidChanged: boolean } {
  const after = processSnapshot(run);
  const restarted = Object.entries(before.pids)
    .filter(([identity, pid]) => {
      // A process killed by a signal (the OOM killer's SIGKILL) has no exit code, only a signal code.
      const child = run.services.find((s) => `${s.name}-${s.replica}` === identity)?.child;
      return after.pids[identity] !== pid || child?.exitCode !== null || child?.signalCode !== null;
    })
    .map(([identity]) => identity);
  return { restarted, sharedApiServerPidChanged: before.shared !== after.shared };
}

async function malformedEventPhase(run: Run, random: Random): Promise<void> {
  const { options, log } = run;
  const before = processSnapshot(run);
  const result = await runMalformedEvents({
    natsUrl: run.env!.natsUrl,
    stream: run.streams!.stream,
    deadLetterStream: run.streams!.deadLetterStream,
    root: run.streams!.root,
    namespace: run.namespace!.name,
    perSubject: options.malformedEventsPerSubject,
    fakeSecretPem: run.fakeSecretPem,
    random,
    log,
  });
  run.report.malformedEvents = {
    ...result.analysis,
    perSubject: options.malformedEventsPerSubject,
    subjects: result.subjects,
    publishSeconds: result.publishSeconds,
    drainSeconds: result.drainSeconds,
    drained: result.drained,
  };
  const a = result.analysis;
  log(
    `malformed events: ${a.published} published; ${a.delivered} reached a consumer, ${a.deadLettered} dead-lettered (${a.deadLetteredWithExpectedReason} with the expected reason), ${a.notDeadLettered} not dead-lettered; ${a.refusedByServer} refused by the server; ${a.storedUnconsumed} stored with no consumer; ${a.notFromMalformedInput.length} dead letters not from malformed input`,
  );
  run.report.processesAfterMalformedInput = compareProcesses(run, before);
  await checkFleetConvergedAfter(run, options, log, 'malformed events');
}

async function malformedManifestPhase(run: Run, random: Random): Promise<void> {
  const { options, log } = run;
  const before = processSnapshot(run);
  const result = await runMalformedManifests({
    client: run.client!,
    shape: run.shape!,
    count: options.malformedManifests,
    random,
    log,
  });
  const byOutcome: Record<string, number> = {};
  const byCategory: Record<string, Record<string, number>> = {};
  for (const r of result.results) {
    byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    byCategory[r.category] = {
      ...byCategory[r.category],
      [r.outcome]: (byCategory[r.category]?.[r.outcome] ?? 0) + 1,
    };
  }
  run.report.malformedManifests = {
    total: result.results.length,
    byOutcome,
    byCategory,
    results: result.results,
    cleanup: result.cleanup,
  };
  if (result.baselineProblems.length > 0)
    run.report.checks.push({
      name: 'malformed manifests: baselines valid (harness)',
      ok: false,
      detail: result.baselineProblems.join('; '),
    });
  if (!result.targetAvailable)
    run.report.checks.push({
      name: 'malformed manifests: target cluster Available',
      ok: false,
      detail: 'chaos-target did not become Available within 300 s',
    });
  log(
    `malformed manifests: ${Object.entries(byOutcome)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  const after = compareProcesses(run, before);
  const previous = run.report.processesAfterMalformedInput;
  run.report.processesAfterMalformedInput = {
    restarted: [...new Set([...(previous?.restarted ?? []), ...after.restarted])],
    sharedApiServerPidChanged:
      (previous?.sharedApiServerPidChanged ?? false) || after.sharedApiServerPidChanged,
  };
  await checkFleetConvergedAfter(run, options, log, 'malformed manifests');
}

/**
 * Node agent processes under agent faults (agent-faults.ts); the fleet's services keep running (the API server
 * outage of this phase is theirs too, and the invariants at the end are checked after it).
 */
async function agentPhase(run: Run, random: Random): Promise<void> {
  const { options, log } = run;
  const { report, tokens } = await runAgentFaults({
    env: run.env!,
    admin: run.client!,
    namespace: run.namespace!.name,
    dir: join(run.outDir, 'agents'),
    logDir: join(run.outDir, 'logs'),
    random,
    log,
    agents: options.agents,
    rounds: options.agentPlans,
    apiOutageSeconds: options.agentApiOutageSeconds,
  });
  run.report.agentFaults = report;
  run.agentTokens = tokens;
  log(
    `  agent phase: ${report.applied}/${report.plans} plans applied; faults ${JSON.stringify(report.faults)}; ${report.runs} runs, ${report.resumesAfterKill} resumes after kills, ${report.doubleApplications} double applications`,
  );
}

async function secretScan(run: Run): Promise<void> {
  const { observer, client, env, log } = run as Required<Run>;
  await observer.listObjects(true).catch(() => undefined);
  const needles = secretNeedles(
    [...observer.secretsSeen.values()],
    [
      { source: 'the management admin token', value: env.adminToken },
      ...(run.adminApiToken ? [{ source: 'the admin API token', value: run.adminApiToken }] : []),
      { source: 'the private key in the secret-like malformed events', value: run.fakeSecretPem },
      ...run.agentTokens.map((value) => ({ source: 'a node agent token of the agent phase', value })),
    ],
  );
  const index = new NeedleIndex(needles);
  const logDir = join(run.outDir, 'logs');
  const files = existsSync(logDir) ? readdirSync(logDir).filter((f) => f.endsWith('.log')) : [];
  const hits: LeakHit[] = [];
  let lines = 0;
  for (const file of files) {
    const result = await scanFile(join(logDir, file), index, file);
    lines += result.scanned;
    hits.push(...result.hits);
  }
  const events = await client
    .request<{ items: { metadata?: { name?: string }; reason?: string; message?: string; note?: string }[] }>(
      { method: HttpMethod.GET, path: `/api/v1/namespaces/${run.namespace!.name}/events` },
    )
    .then((list) => list.items)
    .catch(() => []);
  const eventScan = scanTexts(
    events.map((e) => ({
      where: `Event ${e.metadata?.name}`,
      text: `${e.reason ?? ''} ${e.message ?? ''} ${e.note ?? ''}`,
    })),
    index,
  );
  hits.push(...eventScan.hits);
  const hitsByKind: Record<string, number> = {};
  for (const h of hits) hitsByKind[h.kind] = (hitsByKind[h.kind] ?? 0) + 1;
  run.report.secretScan = {
    secrets: observer.secretsSeen.size,
    needles: needles.length,
    logFiles: files.length,
    logLines: lines,
    events: events.length,
    hits: hits.length,
    hitsByKind,
    samples: hits.slice(0, 20),
  };
  log(
    `secret scan: ${needles.length} needles from ${observer.secretsSeen.size} secret versions; ${lines} log lines in ${files.length} files and ${events.length} Events; ${hits.length} hits`,
  );
}

function countErrorLines(run: Run): Record<string, number> {
  const logDir = join(run.outDir, 'logs');
  const counts: Record<string, number> = {};
  if (!existsSync(logDir)) return counts;
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log'))) {
    counts[file.replace(/\.log$/, '')] = readFileSync(join(logDir, file), 'utf8')
      .split('\n')
      .filter((l) => /"level":(5|6)\d/.test(l)).length;
  }
  return counts;
}

function finalChecks(run: Run): void {
  const { report, options } = run;
  const checks = report.checks;
  const kills = report.faults.filter((f) => f.kind === 'kill');
  if (report.provisioning)
    checks.unshift({
      name: `${options.clusters} clusters provisioned`,
      ok: report.provisioning.converged,
      detail: `${(report.provisioning.elapsedMs / 1000).toFixed(1)} s, with one replica killed during it`,
    });
  if (options.phases.includes('kills')) {
    const done = kills.filter((k) => !k.duringInitialProvisioning);
    checks.push({
      name: `${options.kills} kills, each converged`,
      ok: done.length === options.kills && done.every((k) => k.converged),
      detail: `${done.filter((k) => k.converged).length}/${options.kills} converged${done.length < options.kills ? ` (${done.length} injected before the run stopped)` : ''}`,
    });
  }
  for (const [kind, phase] of [
    ['nats-outage', 'nats'],
    ['apiserver-restart', 'apiserver'],
    ['workload-freeze', 'freeze'],
  ] as const) {
    if (!options.phases.includes(phase)) continue;
    const f = report.faults.find((x) => x.kind === kind);
    checks.push({
      name: `${kind} converged`,
      ok: !!f?.converged,
      detail: f
        ? `${(f.sinceInjectMs / 1000).toFixed(1)} s after injection${f.sinceLiftMs !== undefined ? `, ${(f.sinceLiftMs / 1000).toFixed(1)} s after it was lifted` : ''}`
        : 'not run',
    });
  }
  const agents = report.agentFaults;
  if (options.phases.includes('agents')) {
    checks.push({
      name: 'agent faults: every plan applied, none applied twice without a crash between',
      ok: !!agents && agents.doubleApplications === 0 && agents.stuck === 0,
      detail: agents
        ? `${agents.applied}/${agents.plans} plans applied (${agents.faults['plan-secret-deleted']} had their Secret deleted mid-apply), ${agents.doubleApplications} double applications, ${agents.stuck} stuck; ${agents.faults['agent-kill']} agent SIGKILLs mid-instruction (${agents.resumesAfterKill} resumed runs), API down ${agents.apiOutageSeconds} s during ${agents.faults['api-refused']} apply round`
        : 'not run',
    });
  }
  if (report.invariants) {
    const { orphans, duplicates, awaitingGc, danglingRefs } = report.invariants;
    checks.push({
      name: 'no orphaned or duplicate objects at the end',
      ok: orphans.length + duplicates.length === 0,
      detail: `${orphans.length} orphaned, ${duplicates.length} duplicate; ${awaitingGc.length} Secrets awaiting the garbage collector`,
    });
    checks.push({
      name: 'no Machine references a missing bootstrap config or infrastructure machine at the end',
      ok: danglingRefs.length === 0,
      detail: `${danglingRefs.length} dangling references`,
    });
  }
  if (report.secretScan)
    checks.push({
      name: 'no secret value in any log line or Event',
      ok: report.secretScan.hits === 0,
      detail: `${report.secretScan.hits} hits in ${report.secretScan.logLines} log lines and ${report.secretScan.events} Events (${report.secretScan.needles} needles)`,
    });
  if (report.deadLettersBeforeMalformedInput)
    checks.push({
      name: 'no dead letters from the faults',
      ok: report.deadLettersBeforeMalformedInput.count === 0,
      detail: `${report.deadLettersBeforeMalformedInput.count} dead letters before any malformed input`,
    });
  const e = report.malformedEvents;
  if (e) {
    checks.push({
      name: 'malformed events: every one received is dead-lettered with a reason',
      ok: e.drained && e.notDeadLettered === 0 && e.withoutReason === 0,
      detail: `${e.deadLettered}/${e.delivered} dead-lettered (${e.deadLetteredWithExpectedReason} with the expected reason), ${e.notDeadLettered} not, ${e.withoutReason} without a reason${e.drained ? '' : '; consumers did not drain'}`,
    });
    checks.push({
      name: 'malformed events: 0 dead letters that are not malformed input',
      ok: e.notFromMalformedInput.length === 0,
      detail: `${e.notFromMalformedInput.length}`,
    });
    checks.push({
      name: 'malformed events: wrong subjects',
      ok: true,
      detail: `${e.refusedByServer} refused by the server (no stream or over max_payload), ${e.storedUnconsumed} stored with no consumer filtering them`,
    });
  }
  const m = report.malformedManifests;
  if (m) {
    const bad =
      (m.byOutcome['silent'] ?? 0) +
      (m.byOutcome['condition-on-child'] ?? 0) +
      (m.byOutcome['refused-unclear'] ?? 0) +
      (m.byOutcome['harness-error'] ?? 0);
    checks.push({
      name: 'malformed manifests: each refused with a clear message or given a condition',
      ok: bad === 0,
      detail: Object.entries(m.byOutcome)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    });
    checks.push({
      name: 'malformed manifests: cleaned up',
      ok: m.cleanup.stuck.length === 0,
      detail:
        m.cleanup.stuck.length === 0 ? 'all deleted' : `stuck: ${m.cleanup.stuck.slice(0, 5).join(', ')}`,
    });
  }
  if (report.processesAfterMalformedInput) {
    const p = report.processesAfterMalformedInput;
    checks.push({
      name: 'no process crashed or restarted on malformed input',
      ok: p.restarted.length === 0 && !p.sharedApiServerPidChanged,
      detail: p.restarted.length === 0 ? 'all pids unchanged' : `restarted: ${p.restarted.join(', ')}`,
    });
  }
  if (report.nodesOfDeletedClusters?.length) {
    checks.push({
      name: 'finding (not counted): Nodes of deleted clusters left in the shared workload API server',
      ok: true,
      detail: report.nodesOfDeletedClusters.slice(0, 5).join(', '),
    });
  }
  checks.push({
    name: 'no service exited on its own',
    ok: report.crashes.length === 0,
    detail: report.crashes.map((c) => `${c.identity} code ${c.code} signal ${c.signal}`).join('; ') || 'none',
  });
  if (report.aborted) checks.push({ name: 'run completed', ok: false, detail: report.aborted });
  report.passed = checks.every((c) => c.ok);
}

function copyEnvironmentLogs(run: Run): void {
  const env = run.env;
  if (!env) return;
  const target = join(run.outDir, 'environment');
  mkdirSync(target, { recursive: true });
  for (const file of readdirSync(env.workDir).filter((f) => f.endsWith('.log')))
    copyFileSync(join(env.workDir, file), join(target, file));
  const shared = join(env.simStateDir, 'shared');
  if (existsSync(shared))
    for (const file of readdirSync(shared).filter((f) => f.endsWith('.log')))
      copyFileSync(join(shared, file), join(target, `sim-shared-${file}`));
}

async function tearDown(run: Run): Promise<void> {
  run.watch.stopWatching(run.services);
  await run.observer?.close().catch(() => undefined);
  await stopLocalServices(run.services).catch((e: unknown) =>
    run.log(`stopping the services failed: ${(e as Error).message}`),
  );
  await run.client?.close().catch(() => undefined);
  await run.namespace?.delete().catch(() => undefined);
  try {
    copyEnvironmentLogs(run);
  } catch (error) {
    run.log(`copying the environment logs failed: ${(error as Error).message}`);
  }
  await run.env
    ?.stop()
    .catch((e: unknown) => run.log(`stopping the environment failed: ${(e as Error).message}`));
}

async function main(): Promise<number> {
  let options: ChaosOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (error instanceof OptionsError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const seed = options.seed ?? randomSeed();
  const outDir = resolve(options.out ?? join(repoRoot(), '.capstan', 'chaos', timestamp()));
  mkdirSync(join(outDir, 'logs'), { recursive: true });
  const began = performance.now();
  const log = (line: string) => {
    // Whole seconds first, so 59.6 s reads 01:00, not 00:60.
    const elapsed = Math.round((performance.now() - began) / 1000);
    const text = `[${String(Math.floor(elapsed / 60)).padStart(2, '0')}:${String(elapsed % 60).padStart(2, '0')}] ${line}`;
    process.stdout.write(`${text}\n`);
    appendFileSync(join(outDir, 'chaos.log'), `${text}\n`);
  };
  const args = process.argv
    .slice(2)
    .filter((a, i, all) => a !== '--seed' && all[i - 1] !== '--seed' && !a.startsWith('--seed='));
  const report: ChaosReport = {
    startedAt: new Date().toISOString(),
    seed,
    replay: `npm run chaos -- --seed ${seed}${args.length ? ` ${args.join(' ')}` : ''}`,
    options: { ...options, seed },
    host: {
      cores: cpus().length,
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      node: process.version,
    },
    environment: { namespace: '', subjectRoot: '', stream: '', replicasPerService: REPLICAS, services: [] },
    faults: [],
    convergence: {},
    crashes: [],
    errorLogLines: {},
    checks: [],
  };
  const run: Run = {
    options,
    seed,
    outDir,
    report,
    log,
    services: [],
    watch: new ProcessWatch(),
    clusters: [],
    agentTokens: [],
    fakeSecretPem: generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
  };
  log(`chaos run: seed ${seed}; output ${outDir}`);
  log(`phases: ${options.phases.join(', ')}; ${options.clusters} clusters, ${options.kills} kills`);
  // Separate streams per concern: changing one phase's size does not change another's draws.
  const root = createRandom(seed);
  const randoms = {
    provision: root.fork(),
    kills: root.fork(),
    outages: root.fork(),
    events: root.fork(),
    manifests: root.fork(),
    agents: root.fork(),
  };
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('interrupted: tearing down and writing the report (again to exit at once)');
    report.aborted = 'interrupted';
    void finish(run, began).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await setUp(run);
    await provision(run, randoms.provision);
    if (options.phases.includes('kills')) await kills(run, randoms.kills);
    if (options.phases.includes('nats'))
      await outage(
        run,
        'nats-outage',
        randoms.outages,
        (during) => natsOutage(run.env!, options.natsOutageSeconds, during),
        true,
      );
    if (options.phases.includes('apiserver'))
      await outage(run, 'apiserver-restart', randoms.outages, (during) =>
        restartManagementApiServer(run.env!, during),
      );
    if (options.phases.includes('freeze'))
      await outage(run, 'workload-freeze', randoms.outages, (during) =>
        freezeWorkloadApiServer(run.env!.simStateDir, options.freezeSeconds, during),
      );
    if (options.phases.includes('agents')) await agentPhase(run, randoms.agents);
    const objects = await run.observer!.listObjects(true);
    run.report.invariants = checkInvariants(objects);
    const earlier = await deadLettersSoFar(
      run.env!.natsUrl,
      run.streams!.stream,
      run.streams!.deadLetterStream,
    );
    report.deadLettersBeforeMalformedInput = { count: earlier.length, samples: earlier.slice(0, 20) };
    log(`dead letters after the faults: ${earlier.length}`);
    if (options.phases.includes('malformed-events')) await malformedEventPhase(run, randoms.events);
    if (options.phases.includes('malformed-manifests')) await malformedManifestPhase(run, randoms.manifests);
  } catch (error) {
    report.aborted = error instanceof Aborted ? error.message : `${(error as Error).stack ?? String(error)}`;
    log(`ABORTED: ${report.aborted}`);
  }
  return finish(run, began);
}

let finishing: Promise<number> | undefined;

/** Final scans, teardown, checks and the report; once, also when interrupted. */
function finish(run: Run, began: number): Promise<number> {
  finishing ??= (async () => {
    const { report, log } = run;
    try {
      if (run.observer && run.env) {
        if (!report.invariants) report.invariants = checkInvariants(await run.observer.listObjects(true));
        await secretScan(run);
      }
    } catch (error) {
      log(`final scans failed: ${(error as Error).message}`);
    }
    report.crashes = run.watch.unexpectedExits;
    report.nodesOfDeletedClusters = run.observer?.nodesOfDeletedClusters ?? [];
    report.errorLogLines = countErrorLines(run);
    report.startupHandovers = countStartupHandovers(join(run.outDir, 'logs'), run.firstFaultAt ?? Date.now());
    log(
      `start-up hand-overs (until the first fault): ${report.startupHandovers.viewChanges} view changes, ${report.startupHandovers.fences} fences, ${report.startupHandovers.reconcilesMoved} reconciles stopped by a move or a fence`,
    );
    report.convergence = summarizeFaults(report.faults);
    await tearDown(run);
    report.finishedAt = new Date().toISOString();
    report.durationSeconds = Math.round((performance.now() - began) / 1000);
    finalChecks(run);
    const file = writeReport(run.outDir, report);
    process.stdout.write(`${renderSummary(report)}\n\nreport: ${file}\n`);
    return report.passed ? 0 : 1;
  })();
  return finishing;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

/** After a malformed-input phase the fleet must converge again; a fleet that does not fails a check. */
async function checkFleetConvergedAfter(
  run: Run,
  options: ChaosOptions,
  log: (line: string) => void,
  phase: string,
): Promise<void> {
  const settled = await run.observer!.waitForConvergence(performance.now(), options.convergeTimeoutSeconds * 1000);
  const reasons = settled.lastReasons.slice(0, 5).join('; ');
  log(`after ${phase}: fleet ${settled.converged ? 'converged' : `NOT converged: ${reasons}`}`);
  if (!settled.converged) run.report.checks.push({ name: `fleet converged after ${phase}`, ok: false, detail: reasons });
}
