// The chaos run's report: what was injected, how often, how long convergence took after each (p50/p99), the
// invariants, the secret scan, the dead letters and the malformed inputs; a pass/fail list whose failures make the
// exit code non-zero. report.json holds everything; the summary is printed; the markdown goes into docs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentFaultsReport } from './agent-faults.js';
import type { DeadLetterAnalysis } from './dead-letters.js';
import type { KillRecord, UnexpectedExit } from './faults.js';
import type { InvariantReport } from './invariants.js';
import type { ManifestCategory } from './malformed-manifests.js';
import type { LeakHit } from './secret-scan.js';
import type { StartupHandovers } from './startup-handovers.js';
import { seconds, summarize, type DurationSummary } from './stats.js';

export type FaultKind = 'kill' | 'nats-outage' | 'apiserver-restart' | 'workload-freeze';

export interface FaultRecord {
  kind: FaultKind;
  index: number;
  detail: string;
  /** The worker Machine deleted just before, so work was in flight. */
  churned?: string;
  /** Milliseconds from the round's start to the injection (the random moment). */
  delayMs?: number;
  injectedAt: string;
  /** Fault injected -> converged. */
  sinceInjectMs: number;
  /** Fault lifted (NATS up, API server ready, SIGCONT) -> converged; for kills, the replica ready again -> converged. */
  sinceLiftMs?: number;
  converged: boolean;
  checks: number;
  /** What was still wrong at the last failed check. */
  lastReasons: string[];
  stagesSeen: Record<string, number>;
  kill?: KillRecord;
  /** The extra kill while the fleet was first provisioned (not in the kill percentiles: it includes provisioning). */
  duringInitialProvisioning?: boolean;
  /** During an outage: when the Clusters, Machines and invariants (not the services' readiness) first held. */
  objectsConvergedDuringOutageMs?: number;
}

export interface ManifestResult {
  index: number;
  category: ManifestCategory;
  label: string;
  name: string;
  outcome: 'refused' | 'refused-unclear' | 'condition' | 'condition-on-child' | 'silent' | 'harness-error';
  /** The API server's message, or the condition (type/reason/message) that said what is wrong. */
  evidence: string;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ChaosReport {
  startedAt: string;
  finishedAt?: string;
  durationSeconds?: number;
  seed: number;
  replay: string;
  options: Record<string, unknown>;
  host: { cores: number; memoryGiB: number; node: string };
  environment: {
    namespace: string;
    subjectRoot: string;
    stream: string;
    replicasPerService: number;
    services: string[];
  };
  provisioning?: {
    clusters: number;
    machines: number;
    converged: boolean;
    elapsedMs: number;
    lastReasons: string[];
  };
  faults: FaultRecord[];
  convergence: Partial<
    Record<FaultKind, { sinceInject: DurationSummary; sinceLift: DurationSummary; failed: number }>
  >;
  invariants?: InvariantReport;
  /** Shard hand-overs while the services started together (up to the first fault). */
  startupHandovers?: StartupHandovers;
  secretScan?: {
    secrets: number;
    needles: number;
    logFiles: number;
    logLines: number;
    events: number;
    hits: number;
    hitsByKind: Record<string, number>;
    samples: LeakHit[];
  };
  deadLettersBeforeMalformedInput?: { count: number; samples: DeadLetterAnalysis['notFromMalformedInput'] };
  malformedEvents?: DeadLetterAnalysis & {
    perSubject: number;
    subjects: number;
    publishSeconds: number;
    drainSeconds: number;
    drained: boolean;
  };
  malformedManifests?: {
    total: number;
    byOutcome: Record<string, number>;
    byCategory: Record<string, Record<string, number>>;
    results: ManifestResult[];
    cleanup: { deleted: number; stuck: string[] };
  };
  /** The agent phase (agent-faults.ts). */
  agentFaults?: AgentFaultsReport;
  /** Nodes that deleted clusters left in the shared workload API server (shared mode keeps them until no shared cluster is left). */
  nodesOfDeletedClusters?: string[];
  crashes: UnexpectedExit[];
  /** pino error-level (50+) lines per replica log. */
  errorLogLines: Record<string, number>;
  processesAfterMalformedInput?: { restarted: string[]; sharedApiServerPidChanged: boolean };
  checks: Check[];
  passed?: boolean;
  aborted?: string;
}

export function summarizeFaults(faults: FaultRecord[]): ChaosReport['convergence'] {
  const result: ChaosReport['convergence'] = {};
  for (const kind of ['kill', 'nats-outage', 'apiserver-restart', 'workload-freeze'] as const) {
    const of = faults.filter((f) => f.kind === kind && !f.duringInitialProvisioning);
    if (of.length === 0) continue;
    const ok = of.filter((f) => f.converged);
    result[kind] = {
      sinceInject: summarize(ok.map((f) => f.sinceInjectMs)),
      sinceLift: summarize(ok.flatMap((f) => (f.sinceLiftMs === undefined ? [] : [f.sinceLiftMs]))),
      failed: of.length - ok.length,
    };
  }
  return result;
}

const FAULT_NAMES: Record<FaultKind, string> = {
  kill: 'SIGKILL of a random replica of a random service',
  'nats-outage': 'NATS stopped',
  'apiserver-restart': 'management kube-apiserver restarted',
  'workload-freeze': 'workload kube-apiserver SIGSTOPped',
};

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The convergence table: fault, count, p50/p99/max from injection and from lifting. */
export function convergenceTable(report: ChaosReport): string {
  const rows = (
    Object.entries(report.convergence) as [FaultKind, NonNullable<ChaosReport['convergence'][FaultKind]>][]
  ).map(([kind, s]) => [
    FAULT_NAMES[kind],
    String(s.sinceInject.count + s.failed),
    s.failed === 0 ? 'all' : `${s.sinceInject.count} (${s.failed} did not)`,
    `${seconds(s.sinceInject.p50)} / ${seconds(s.sinceInject.p99)} / ${seconds(s.sinceInject.max)}`,
    s.sinceLift.count > 0
      ? `${seconds(s.sinceLift.p50)} / ${seconds(s.sinceLift.p99)} / ${seconds(s.sinceLift.max)}`
      : '-',
  ]);
  return table(
    [
      'fault',
      'injected',
      'converged',
      'converge after injection p50 / p99 / max',
      'after the fault was lifted (replica ready, server back) p50 / p99 / max',
    ],
    rows,
  );
}

export function checksTable(report: ChaosReport): string {
  return table(
    ['check', 'result', 'detail'],
    report.checks.map((c) => [
      c.name,
      c.ok ? 'PASS' : '**FAIL**',
      c.detail.replaceAll('|', '\\|').replaceAll('\n', ' '),
    ]),
  );
}

export function killTable(report: ChaosReport): string {
  const kills = report.faults.filter((f) => f.kind === 'kill');
  const byService = new Map<string, FaultRecord[]>();
  for (const k of kills) byService.set(k.kill!.service, [...(byService.get(k.kill!.service) ?? []), k]);
  const rows = [...byService.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([service, list]) => {
      const ok = list.filter((k) => k.converged).map((k) => k.sinceInjectMs);
      const restart = summarize(
        list.flatMap((k) => (k.kill?.restartMs === undefined ? [] : [k.kill.restartMs])),
      );
      const s = summarize(ok);
      return [
        service,
        String(list.length),
        `${seconds(restart.p50)}`,
        `${seconds(s.p50)} / ${seconds(s.p99)}`,
        String(list.length - ok.length),
      ];
    });
  return table(
    ['service', 'kills', 'replica ready again p50', 'converged p50 / p99', 'did not converge'],
    rows,
  );
}

export function manifestTable(report: ChaosReport): string {
  const m = report.malformedManifests;
  if (!m) return '';
  const outcomes = [
    'refused',
    'refused-unclear',
    'condition',
    'condition-on-child',
    'silent',
    'harness-error',
  ];
  return table(
    ['category', ...outcomes],
    Object.entries(m.byCategory)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([category, counts]) => [category, ...outcomes.map((o) => String(counts[o] ?? 0))]),
  );
}

export function eventOutcomeTable(report: ChaosReport): string {
  const e = report.malformedEvents;
  if (!e) return '';
  const byCategory = new Map<string, Record<string, number>>();
  for (const row of e.rows) {
    const counts = byCategory.get(row.category) ?? {};
    const key =
      row.outcome === 'dead-lettered-other-reason'
        ? `dead-lettered as ${Object.keys(row.got).join('/')}`
        : row.outcome;
    counts[key] = (counts[key] ?? 0) + row.count;
    byCategory.set(row.category, counts);
  }
  return table(
    ['category', 'what became of them'],
    [...byCategory.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([category, counts]) => [
        category,
        Object.entries(counts)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', '),
      ]),
  );
}

/** What `npm run chaos` prints at the end. */
export function renderSummary(report: ChaosReport): string {
  return [
    '',
    `Chaos run, seed ${report.seed} (replay: ${report.replay})`,
    '',
    convergenceTable(report),
    '',
    checksTable(report),
    '',
    report.passed ? 'PASSED' : `FAILED${report.aborted ? ` (aborted: ${report.aborted})` : ''}`,
  ].join('\n');
}

export function writeReport(dir: string, report: ChaosReport): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'report.json');
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    join(dir, 'summary.md'),
    [
      renderSummary(report),
      '',
      killTable(report),
      '',
      eventOutcomeTable(report),
      '',
      manifestTable(report),
      '',
    ].join('\n'),
  );
  return file;
}
