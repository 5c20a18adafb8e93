// The markdown report of `npm run bench:scale-out` (its /proc and Prometheus parsing: process-figures.ts).

export interface ProcessFigures {
  /** A service name, or another process (`sim shared kube-apiserver`, `management kube-apiserver`, `etcd`). */
  service: string;
  replica: number;
  cpuSeconds: number;
  peakRssMiB?: number;
  /** controller_runtime_reconcile_total at the end of the provisioning window (services only). */
  reconciles?: number;
  reconcileErrors?: number;
}

export interface ScaleOutRun {
  replicas: number;
  /** 1-minute load average when the run started, and how long it waited for a quiet machine. */
  loadBefore: number;
  quietWaitSeconds: number;
  /** Set when the machine never became quiet within the wait: what was still running. */
  notQuiet?: string;
  /** Set when a chaos suite or jest was seen running during the run (its figures are then disturbed): which. */
  overlapped?: string;
  /** Undefined: did not converge within the timeout (`progress` says how far it got). */
  machinesRunningSeconds?: number;
  clustersAvailableSeconds?: number;
  progress: string;
  deletionSeconds?: number;
  deletionProgress?: string;
  apiRequests: number;
  /** Seconds the CPU figures cover: creation to convergence (or the timeout). */
  windowSeconds: number;
  processes: ProcessFigures[];
}

export interface ScaleOutMeta {
  clusters: number;
  workers: number;
  cores: number;
  date: string;
  timeoutMinutes: number;
  heartbeat: string;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

function seconds(value: number | undefined, timeoutMinutes: number): string {
  return value === undefined ? `**not within ${timeoutMinutes} min**` : `${fmt(value)} s`;
}

/** Row names in order: the services as they appear, then the other processes. */
function rowNames(runs: ScaleOutRun[]): string[] {
  const names: string[] = [];
  for (const run of runs) for (const p of run.processes) if (!names.includes(p.service)) names.push(p.service);
  return names;
}

function perReplicaCell(run: ScaleOutRun, service: string, pick: (p: ProcessFigures) => number | undefined, digits: number, total: boolean): string {
  const values = run.processes
    .filter((p) => p.service === service)
    .sort((a, b) => a.replica - b.replica)
    .map(pick);
  if (values.length === 0 || values.every((v) => v === undefined)) return '-';
  // NaN: the process had exited by the end of the window (its figure could not be read).
  const shown = values.map((v) => (v === undefined ? '?' : Number.isNaN(v) ? 'exited' : fmt(v, digits)));
  if (!total || values.length === 1) return shown.join(' / ');
  if (values.some((v) => v === undefined || Number.isNaN(v))) return `? (${shown.join(' / ')})`;
  const sum = values.reduce<number>((s, v) => s + v!, 0);
  return `${fmt(sum, digits)} (${shown.join(' / ')})`;
}

function matrix(
  runs: ScaleOutRun[],
  title: string,
  pick: (p: ProcessFigures) => number | undefined,
  digits: number,
  total: boolean,
): string[] {
  const names = rowNames(runs).filter((name) => runs.some((run) => run.processes.some((p) => p.service === name && pick(p) !== undefined)));
  return [
    `| ${title} | ${runs.map((r) => `${r.replicas} replica${r.replicas === 1 ? '' : 's'}`).join(' | ')} |`,
    `|---|${runs.map(() => '---|').join('')}`,
    ...names.map((name) => `| ${name} | ${runs.map((run) => perReplicaCell(run, name, pick, digits, total)).join(' | ')} |`),
  ];
}

export function renderScaleOut(runs: ScaleOutRun[], meta: ScaleOutMeta): string {
  const machines = meta.clusters * (meta.workers + 1);
  const summary = runs.map((r) => {
    const load = `${fmt(r.loadBefore, 2)}${r.quietWaitSeconds >= 1 ? ` (waited ${fmt(r.quietWaitSeconds, 0)} s)` : ''}${r.notQuiet ? ` **not quiet: ${r.notQuiet}**` : ''}${r.overlapped ? ` **then ran alongside: ${r.overlapped}**` : ''}`;
    const converged = r.machinesRunningSeconds !== undefined && r.clustersAvailableSeconds !== undefined;
    const deletion = r.deletionSeconds === undefined ? `**not within ${meta.timeoutMinutes} min** (${r.deletionProgress ?? '?'})` : `${fmt(r.deletionSeconds)} s`;
    return (
      `| ${r.replicas} | ${seconds(r.machinesRunningSeconds, meta.timeoutMinutes)} | ${seconds(r.clustersAvailableSeconds, meta.timeoutMinutes)}` +
      `${converged ? '' : ` (${r.progress})`} | ${r.apiRequests} (${fmt(r.apiRequests / machines, 0)} per machine) | ${deletion} | ${load} |`
    );
  });
  return [
    `${meta.clusters} shared-mode sim clusters of 1 control plane + ${meta.workers} workers (${machines} machines), all created at once, ` +
      `each service run with 1, 2 and 3 replicas (\`--sharding\` above 1), fresh services and namespace per run; ` +
      `in-process node agents, no provisioning jitter, ${meta.heartbeat}; ${meta.cores} cores, ${meta.date}.`,
    '',
    '| replicas per service | create -> every Machine Running | create -> every Cluster Available | management API requests (apiserver_request_total, the bench\'s watches included) | delete -> every Cluster gone | 1-min load at start (other work seen) |',
    '|---|---|---|---|---|---|',
    ...summary,
    '',
    `CPU seconds from creation to convergence (window: ${runs.map((r) => `${fmt(r.windowSeconds, 0)} s`).join(' / ')}; the sim shared kube-apiserver starts with the first cluster, its start included); a cell is the total over replicas, then each replica:`,
    '',
    ...matrix(runs, 'process', (p) => p.cpuSeconds, 1, true),
    '',
    'Reconciles (controller_runtime_reconcile_total, all controllers) per replica at convergence:',
    '',
    ...matrix(runs, 'service', (p) => p.reconciles, 0, true),
    '',
    'Peak RSS (VmHWM, MiB) per process:',
    '',
    ...matrix(runs, 'process', (p) => p.peakRssMiB, 0, false),
  ].join('\n');
}
