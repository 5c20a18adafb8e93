// Pure parts of `npm run bench:upstream`: its command line, the totals per side, the markdown table and the SVG chart.
import { parseArgs } from 'node:util';
import type { ClientRequests } from './audit-requests.js';

export type BenchSide = 'Capstan' | 'Capstan all-in-one' | 'upstream';

/** The sides in the order they are run by default and shown: Capstan's per-service deployment first. */
export const BENCH_SIDES: readonly BenchSide[] = ['Capstan', 'Capstan all-in-one', 'upstream'];
/** Controllers reconcile; the stand-in serves the workload clusters' API; management is the management cluster's servers. */
export type ProcessRole = 'controller' | 'stand-in' | 'management';

export interface SideProcessFigures {
  service: string;
  role: ProcessRole;
  /** From the first create until every Cluster was gone (NaN: never readable). */
  cpuSeconds: number;
  /** VmRSS before the run, once the processes had settled; absent for one that started during the run. */
  idleRssMiB?: number;
  /** The largest VmHWM read (management servers: not measured). */
  peakRssMiB?: number;
  /** Pss before the run and the largest sampled (each second) during it: shared pages divided among their processes. */
  idlePssMiB?: number;
  peakPssMiB?: number;
  /** Started during the run (the sim's shared kube-apiserver and etcd come with the first cluster). */
  startedDuringRun?: boolean;
}

export interface SideRun {
  side: BenchSide;
  clusters: number;
  /** 1-minute load when the quiet-machine wait ended, how long it waited, and what kept it from being quiet. */
  loadBefore: number;
  quietWaitSeconds: number;
  notQuiet?: string;
  /** 1-minute load at the first create: the side's own servers started and settled in between. */
  loadAtCreate: number;
  /** A chaos suite or jest seen running during the run. */
  overlapped?: string;
  machinesRunningSeconds?: number;
  clustersAvailableSeconds?: number;
  /** How far provisioning got (the figures above are undefined when it did not finish in time). */
  progress: string;
  machinesGoneSeconds?: number;
  clustersGoneSeconds?: number;
  deletionProgress?: string;
  /** apiserver_request_total of the management kube-apiserver by verb, from before the first create to the end. */
  requestsByVerb: Record<string, number>;
  /** The same requests per `VERB resource[/subresource]` (absent in runs recorded before it was measured). */
  requestsByResource?: Record<string, number>;
  /**
   * The requests from before the first create until every Cluster was Available, per `VERB resource[/subresource]`
   * (absent in runs recorded before it was measured, and when provisioning did not finish).
   */
  createRequestsByResource?: Record<string, number>;
  /**
   * controller_runtime_reconcile_total of the side's controllers by `controller` label, from the first create until
   * every Cluster was Available (absent in runs recorded before it was measured).
   */
  reconcilesByController?: Record<string, number>;
  /**
   * The requests of each client (user agent up to its first `/`: a Capstan service, an upstream manager, the node
   * agents, the bench, kube-controller-manager) from kube-apiserver's audit log: from the first create until every
   * Cluster was Available, and until the end (absent in runs recorded before it was measured).
   */
  createRequestsByClient?: Record<string, ClientRequests>;
  requestsByClient?: Record<string, ClientRequests>;
  /** Seconds the CPU figures cover: the first create until every Cluster was gone (or the timeouts). */
  windowSeconds: number;
  processes: SideProcessFigures[];
}

export interface UpstreamBenchMeta {
  workers: number;
  cores: number;
  memoryGiB: number;
  date: string;
  timeoutMinutes: number;
  upstreamVersion: string;
  kubernetesVersion: string;
  /** The management cluster's kube-apiserver and etcd (the same binaries and flags for both sides). */
  managementServers: string;
  commit?: string;
  /** Clusters from a ClusterClass (`--topology`): Capstan's capstan-k3s, upstream's in-memory. */
  topology?: boolean;
}

export interface UpstreamBenchArgs {
  clusters: number[];
  workers: number;
  timeoutMinutes: number;
  /** Which sides to run, in this order (both by default; one side for a before/after figure of that side). */
  sides: BenchSide[];
  /** Create every cluster from a ClusterClass (a Cluster with spec.topology) instead of its objects one by one. */
  topology: boolean;
}

const SIDE_NAMES: Record<string, BenchSide> = { capstan: 'Capstan', 'all-in-one': 'Capstan all-in-one', upstream: 'upstream' };

export function positiveInteger(value: string, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${option} wants positive whole numbers, not "${value}"`);
  return n;
}

/** `--clusters 10,30 --workers 3 --timeout-minutes 20 [--topology]`; the defaults are those, without --topology. */
export function parseUpstreamBenchArgs(argv: readonly string[]): UpstreamBenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      clusters: { type: 'string', default: '10,30' },
      workers: { type: 'string', default: '3' },
      'timeout-minutes': { type: 'string', default: '20' },
      sides: { type: 'string', default: 'capstan,all-in-one,upstream' },
      topology: { type: 'boolean', default: false },
    },
    strict: true,
  });
  return {
    clusters: values.clusters.split(',').map((s) => positiveInteger(s.trim(), 'clusters')),
    workers: positiveInteger(values.workers, 'workers'),
    timeoutMinutes: positiveInteger(values['timeout-minutes'], 'timeout-minutes'),
    sides: parseBenchSides(values.sides),
    topology: values.topology,
  };
}

/** The report's file name in .capstan/bench (.md, .svg, .json): the topology variant's apart from the flat one's. */
export function upstreamReportName(topology: boolean): string {
  return topology ? 'upstream-topology' : 'upstream';
}

/** `capstan,all-in-one,upstream` (any of them, in the order to run them). */
export function parseBenchSides(list: string): BenchSide[] {
  return list.split(',').map((name) => {
    const side = SIDE_NAMES[name.trim().toLowerCase()];
    if (!side) throw new TypeError(`--sides: "${name}" is not capstan, all-in-one or upstream`);
    return side;
  });
}

export interface SideTotals {
  controllerIdleMiB?: number;
  controllerPeakMiB?: number;
  controllerIdlePssMiB?: number;
  controllerPeakPssMiB?: number;
  standInIdleMiB?: number;
  standInPeakMiB?: number;
  controllerCpu: number;
  standInCpu: number;
  apiserverCpu?: number;
  etcdCpu?: number;
  requests: number;
  createRequests?: number;
}

/** The sum of one figure over the processes of a role; undefined when one that ran before the run lacks it. */
function sum(processes: SideProcessFigures[], pick: (p: SideProcessFigures) => number | undefined, zeroIfStartedDuringRun = false): number | undefined {
  let total = 0;
  for (const p of processes) {
    const value = pick(p);
    if (value === undefined && zeroIfStartedDuringRun && p.startedDuringRun) continue;
    if (value === undefined || Number.isNaN(value)) return undefined;
    total += value;
  }
  return total;
}

export function sideTotals(run: SideRun): SideTotals {
  const of = (role: ProcessRole) => run.processes.filter((p) => p.role === role);
  const management = (name: string) => run.processes.find((p) => p.role === 'management' && p.service === name)?.cpuSeconds;
  return {
    ...optional('controllerIdleMiB', sum(of('controller'), (p) => p.idleRssMiB)),
    ...optional('controllerPeakMiB', sum(of('controller'), (p) => p.peakRssMiB)),
    ...optional('controllerIdlePssMiB', sum(of('controller'), (p) => p.idlePssMiB)),
    ...optional('controllerPeakPssMiB', sum(of('controller'), (p) => p.peakPssMiB)),
    ...optional('standInIdleMiB', sum(of('stand-in'), (p) => p.idleRssMiB, true)),
    ...optional('standInPeakMiB', sum(of('stand-in'), (p) => p.peakRssMiB)),
    controllerCpu: sum(of('controller'), (p) => p.cpuSeconds) ?? Number.NaN,
    standInCpu: sum(of('stand-in'), (p) => p.cpuSeconds) ?? Number.NaN,
    ...optional('apiserverCpu', management('management kube-apiserver')),
    ...optional('etcdCpu', management('management etcd')),
    requests: Object.values(run.requestsByVerb).reduce((s, n) => s + n, 0),
    ...optional('createRequests', run.createRequestsByResource && Object.values(run.createRequestsByResource).reduce((s, n) => s + n, 0)),
  };
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '?' : n.toFixed(digits));

/** The order verbs are listed in: reads, then writes, then whatever else the server counted. */
const VERB_ORDER = ['GET', 'LIST', 'WATCH', 'POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION'];

function verbs(runs: SideRun[]): string[] {
  const all = new Set(runs.flatMap((r) => Object.keys(r.requestsByVerb)));
  const rank = (v: string) => (VERB_ORDER.includes(v) ? VERB_ORDER.indexOf(v) : VERB_ORDER.length);
  return [...all].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** Runs in column order: by N, Capstan before upstream. */
function ordered(runs: SideRun[]): SideRun[] {
  const sideRank = (s: BenchSide) => BENCH_SIDES.indexOf(s);
  return [...runs].sort((a, b) => a.clusters - b.clusters || sideRank(a.side) - sideRank(b.side));
}

function seconds(value: number | undefined, timeoutMinutes: number, progress: string | undefined): string {
  return value === undefined ? `**not within ${timeoutMinutes} min**${progress ? ` (${progress})` : ''}` : `${fmt(value)} s`;
}

function loadCell(run: SideRun): string {
  return (
    `${fmt(run.loadBefore, 2)}${run.quietWaitSeconds >= 1 ? ` (waited ${fmt(run.quietWaitSeconds, 0)} s)` : ''}, ${fmt(run.loadAtCreate, 2)} at the first create` +
    `${run.notQuiet ? ` **not quiet: ${run.notQuiet}**` : ''}${run.overlapped ? ` **then ran alongside: ${run.overlapped}**` : ''}`
  );
}

function standInIdleCell(run: SideRun, totals: SideTotals): string {
  const standIns = run.processes.filter((p) => p.role === 'stand-in');
  if (standIns.length > 0 && standIns.every((p) => p.startedDuringRun)) return '0 (starts with the first cluster)';
  return fmt(totals.standInIdleMiB, 0);
}

export function renderUpstreamBench(runs: SideRun[], meta: UpstreamBenchMeta): string {
  const cols = ordered(runs);
  const totals = cols.map(sideTotals);
  const row = (title: string, cell: (run: SideRun, t: SideTotals) => string) =>
    `| ${title} | ${cols.map((run, i) => cell(run, totals[i]!)).join(' | ')} |`;
  const perMachine = (run: SideRun, n: number) => `${n} (${fmt(n / (run.clusters * (meta.workers + 1)), 0)} per machine)`;
  const verbRows = verbs(cols).map((verb) => row(`&nbsp;&nbsp;${verb}`, (run) => String(run.requestsByVerb[verb] ?? 0)));
  const fromClass = meta.topology
    ? ' (clusters from a ClusterClass: each a Cluster with spec.topology naming the class, applied once before the run; ' +
      "Capstan's capstan-k3s with simMode shared and provisioningDelaySeconds 0, upstream's in-memory with its " +
      "DevMachineTemplates' startupDuration 0s and the core's ClusterTopology feature gate on)"
    : '';
  const lines = [
    `N clusters of 1 control plane machine + a MachineDeployment of ${meta.workers} workers${fromClass}, all created at once, then all deleted at once; ` +
      `each side on fresh management servers (${meta.managementServers}, the same for both) per N, one after the other in one run; ` +
      `Capstan: its five services, one process each (Capstan all-in-one: the five in one process), the sim in shared mode (node agents in-process, no boot delay or jitter); ` +
      `upstream Cluster API ${meta.upstreamVersion}: core, kubeadm bootstrap, kubeadm control plane and the docker provider's in-memory backend (no startup delay); ` +
      `workload Kubernetes ${meta.kubernetesVersion}; ${meta.cores} cores, ${fmt(meta.memoryGiB, 1)} GiB, ${meta.date}${meta.commit ? `, commit ${meta.commit}` : ''}.`,
    '',
    `| | ${cols.map((r) => `N=${r.clusters} ${r.side}`).join(' | ')} |`,
    `|---|${cols.map(() => '---|').join('')}`,
    row('create -> every Machine Running', (r) => seconds(r.machinesRunningSeconds, meta.timeoutMinutes, r.progress)),
    row('create -> every Cluster Available', (r) => seconds(r.clustersAvailableSeconds, meta.timeoutMinutes, r.machinesRunningSeconds === undefined ? undefined : r.progress)),
    row('delete -> no Machine left', (r) => seconds(r.machinesGoneSeconds, meta.timeoutMinutes, r.deletionProgress)),
    row('delete -> no Cluster left', (r) => seconds(r.clustersGoneSeconds, meta.timeoutMinutes, r.machinesGoneSeconds === undefined ? undefined : r.deletionProgress)),
    row('management API requests, create until every Cluster Available', (r, t) => (t.createRequests === undefined ? '?' : perMachine(r, t.createRequests))),
    row('management API requests, create and delete', (r, t) => perMachine(r, t.requests)),
    ...verbRows,
    row('controllers RSS idle (MiB)', (_, t) => fmt(t.controllerIdleMiB, 0)),
    row('controllers RSS peak (MiB)', (_, t) => fmt(t.controllerPeakMiB, 0)),
    row('controllers PSS idle (MiB)', (_, t) => fmt(t.controllerIdlePssMiB, 0)),
    row('controllers PSS peak, sampled each second (MiB)', (_, t) => fmt(t.controllerPeakPssMiB, 0)),
    row('stand-in RSS idle (MiB)', (r, t) => standInIdleCell(r, t)),
    row('stand-in RSS peak (MiB)', (_, t) => fmt(t.standInPeakMiB, 0)),
    row('controllers CPU s', (_, t) => fmt(t.controllerCpu)),
    row('stand-in CPU s', (_, t) => fmt(t.standInCpu)),
    row('management kube-apiserver CPU s', (_, t) => fmt(t.apiserverCpu)),
    row('management etcd CPU s', (_, t) => fmt(t.etcdCpu)),
    row('1-min load: quiet wait, first create', (r) => loadCell(r)),
    '',
    ...largestCountsTable(cols, 'Management API requests by verb and resource', (r) => r.requestsByResource),
    ...largestCountsTable(cols, 'Management API requests by client, first create until every Cluster Available', (r) => totalsOf(r.createRequestsByClient)),
    ...largestCountsTable(cols, 'Reconciles by controller, first create until every Cluster Available', (r) => r.reconcilesByController),
    'Per process: CPU seconds over the run (first create until every Cluster was gone), RSS idle before the run -> peak (VmHWM, MiB):',
    '',
    ...BENCH_SIDES.flatMap((side) => processTable(cols.filter((r) => r.side === side), side)),
  ];
  return lines.join('\n');
}

function totalsOf(byClient: Record<string, ClientRequests> | undefined): Record<string, number> | undefined {
  return byClient && Object.fromEntries(Object.entries(byClient).map(([client, requests]) => [client, requests.total]));
}

/** How many of each run's largest counts a breakdown lists (the union over the runs). */
const TOP_COUNTS = 10;

/** A breakdown of counts (requests by verb and resource, reconciles by controller): each run's largest, with every run's count for them. */
function largestCountsTable(cols: SideRun[], title: string, counts: (run: SideRun) => Record<string, number> | undefined): string[] {
  const measured = cols.filter((r) => counts(r) !== undefined);
  if (measured.length === 0) return [];
  const count = (run: SideRun, key: string) => counts(run)![key] ?? 0;
  const keys = new Set<string>();
  for (const run of measured) {
    const largest = Object.entries(counts(run)!).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    for (const [key] of largest.slice(0, TOP_COUNTS)) keys.add(key);
  }
  const most = (key: string) => Math.max(...measured.map((r) => count(r, key)));
  const rows = [...keys].sort((a, b) => most(b) - most(a) || a.localeCompare(b));
  return [
    `${title} (each run's ${TOP_COUNTS} largest):`,
    '',
    `| | ${measured.map((r) => `N=${r.clusters} ${r.side}`).join(' | ')} |`,
    `|---|${measured.map(() => '---|').join('')}`,
    ...rows.map((key) => `| ${key} | ${measured.map((r) => String(count(r, key))).join(' | ')} |`),
    '',
  ];
}

function processTable(runs: SideRun[], side: BenchSide): string[] {
  if (runs.length === 0) return [];
  const names: { service: string; role: ProcessRole }[] = [];
  for (const run of runs) for (const p of run.processes) if (!names.some((n) => n.service === p.service)) names.push(p);
  const cell = (run: SideRun, service: string) => {
    const p = run.processes.find((q) => q.service === service);
    if (!p) return '-';
    const memory =
      p.peakRssMiB === undefined ? '' : `, ${p.idleRssMiB === undefined ? (p.startedDuringRun ? 'started in the run' : '?') : fmt(p.idleRssMiB, 0)} -> ${fmt(p.peakRssMiB, 0)} MiB`;
    return `${fmt(p.cpuSeconds)} s${memory}`;
  };
  return [
    `| ${side} process (role) | ${runs.map((r) => `N=${r.clusters}`).join(' | ')} |`,
    `|---|${runs.map(() => '---|').join('')}`,
    ...names.map((n) => `| ${n.service} (${n.role}) | ${runs.map((run) => cell(run, n.service)).join(' | ')} |`),
    '',
  ];
}

/** A round step for about `count` ticks from 0 to max: 1, 2 or 5 times a power of ten. */
export function niceStep(max: number, count = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  return step;
}

const COLORS: Record<BenchSide, string> = { Capstan: '#1f6feb', 'Capstan all-in-one': '#2da44e', upstream: '#d1242f' };

interface Panel {
  title: string;
  unit: string;
  value: (run: SideRun) => number | undefined;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Two line charts side by side, both sides in each: time to every Machine Running and the controllers' peak RSS
 * against N. A run that did not finish has no point (the table says so).
 */
export function renderUpstreamSvg(runs: SideRun[], meta: Pick<UpstreamBenchMeta, 'workers' | 'upstreamVersion' | 'topology'>): string {
  const panels: Panel[] = [
    { title: 'create -> every Machine Running', unit: 's', value: (r) => r.machinesRunningSeconds },
    { title: 'controllers peak RSS (sum of VmHWM)', unit: 'MiB', value: (r) => sideTotals(r).controllerPeakMiB },
  ];
  const width = 860;
  const height = 340;
  const panelWidth = 400;
  const margin = { left: 56, right: 16, top: 48, bottom: 64 };
  const plotW = panelWidth - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const ns = [...new Set(runs.map((r) => r.clusters))].sort((a, b) => a - b);
  const maxN = Math.max(1, ...ns);
  const xStep = Math.max(1, niceStep(maxN, 5));
  const xMax = Math.ceil(maxN / xStep) * xStep;
  // Some room right of the last N for its point labels.
  const xDomain = xMax * 1.1;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
  ];
  panels.forEach((panel, index) => {
    const x0 = 20 + index * (panelWidth + 20) + margin.left;
    const y0 = margin.top;
    const values = runs.map(panel.value).filter((v): v is number => v !== undefined && !Number.isNaN(v));
    // Some room above the highest point for its label.
    const top = Math.max(1, ...values) * 1.1;
    const yStep = niceStep(top, 6);
    const yMax = Math.ceil(top / yStep) * yStep;
    const px = (n: number) => x0 + (n / xDomain) * plotW;
    const py = (v: number) => y0 + plotH - (v / yMax) * plotH;
    parts.push(`<text x="${x0 + plotW / 2}" y="${y0 - 24}" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(panel.title)}</text>`);
    for (let v = 0; v <= yMax + 1e-9; v += yStep) {
      parts.push(`<line x1="${x0}" y1="${py(v)}" x2="${px(xMax)}" y2="${py(v)}" stroke="#e5e5e5"/>`);
      parts.push(`<text x="${x0 - 6}" y="${py(v) + 4}" text-anchor="end">${round(v)}</text>`);
    }
    for (let n = 0; n <= xMax + 1e-9; n += xStep) {
      parts.push(`<text x="${px(n)}" y="${y0 + plotH + 16}" text-anchor="middle">${round(n)}</text>`);
    }
    parts.push(`<line x1="${x0}" y1="${y0 + plotH}" x2="${px(xMax)}" y2="${y0 + plotH}" stroke="#333"/>`);
    parts.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + plotH}" stroke="#333"/>`);
    parts.push(`<text x="${x0 + plotW / 2}" y="${y0 + plotH + 34}" text-anchor="middle">N clusters (1 control plane + ${meta.workers} workers each${meta.topology ? ', from a ClusterClass' : ''})</text>`);
    parts.push(`<text transform="translate(${x0 - 42} ${y0 + plotH / 2}) rotate(-90)" text-anchor="middle">${panel.unit}</text>`);
    for (const side of BENCH_SIDES) {
      const points = ns
        .map((n) => ({ n, v: runs.find((r) => r.side === side && r.clusters === n) }))
        .map(({ n, v }) => ({ n, v: v === undefined ? undefined : panel.value(v) }))
        .filter((p): p is { n: number; v: number } => p.v !== undefined && !Number.isNaN(p.v));
      if (points.length > 1) {
        parts.push(`<polyline fill="none" stroke="${COLORS[side]}" stroke-width="2" points="${points.map((p) => `${px(p.n)},${py(p.v)}`).join(' ')}"/>`);
      }
      for (const p of points) {
        parts.push(`<circle cx="${px(p.n)}" cy="${py(p.v)}" r="4" fill="${COLORS[side]}"/>`);
        parts.push(`<text x="${px(p.n) + 6}" y="${py(p.v) - 6}" fill="${COLORS[side]}">${round(p.v)}</text>`);
      }
    }
  });
  const labels: Record<BenchSide, string> = {
    Capstan: 'Capstan (5 processes)',
    'Capstan all-in-one': 'Capstan all-in-one (1 process)',
    upstream: `upstream Cluster API ${meta.upstreamVersion} (in-memory)`,
  };
  BENCH_SIDES.filter((side) => runs.some((r) => r.side === side)).forEach((side, i) => {
    const x = 20 + margin.left + i * 270;
    const label = labels[side];
    parts.push(`<line x1="${x}" y1="${height - 12}" x2="${x + 24}" y2="${height - 12}" stroke="${COLORS[side]}" stroke-width="2"/>`);
    parts.push(`<circle cx="${x + 12}" cy="${height - 12}" r="4" fill="${COLORS[side]}"/>`);
    parts.push(`<text x="${x + 30}" y="${height - 8}">${escapeXml(label)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Whole numbers as they are, others to one decimal (tick labels and point labels). */
function round(v: number): string {
  return Number.isInteger(v) ? String(v) : v >= 10 ? v.toFixed(0) : v.toFixed(1);
}
