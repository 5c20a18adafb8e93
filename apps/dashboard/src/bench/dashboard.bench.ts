// `npm run bench:dashboard [-- --clusters 500 --namespaces 10 --updates 20 --screenshot]`: the fleet dashboard at
// fleet size, in real headless Chromium against the real dashboard service (its own process, so its RSS is its own)
// and a private kube-apiserver (startLocalEnvironment; never the shared test API server). Creates --clusters minimal
// Clusters spread over --namespaces namespaces, and two users: a cluster-wide reader (ClusterRole) and a viewer of
// one namespace (Role). Measures, for each user: sign-in to every row rendered (cold caches first, then warm), broken
// down by where the time goes (whoami, the stream's snapshot received, the rows in the DOM, the next frame);
// GET /dashboard/api/clusters latency and size; a Cluster write (merge patch spec.paused) to the row's button flipping,
// median and p95, split into delivery, the page's render and the next frame, also for writes in the other namespaces
// (only the reader sees them); the SubjectAccessReviews each step asked; the page's JS heap and DOM nodes (CDP).
// Of the dashboard process: the time to list the Clusters (ready, and its informer's `cache synced` line) empty and
// with the fleet; RSS and V8 heap idle, with the fleet cached, with the browser's streams, and with 1 and 20
// server-sent event clients (and their update fan-out).
// Writes .capstan/bench/dashboard.json; --screenshot also writes docs/dashboard-fleet-500.png (the reader's page).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { text as streamText } from 'node:stream/consumers';
import { parseArgs } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { RESOURCES, type Cluster } from '@capstan/api';
import { createKubeClient, HttpMethod, type KubeClient } from '@capstan/kube';
import {
  apiserverRequestsByResource,
  eventually,
  installCapstanDefinitions,
  launchBrowser,
  repoRoot,
  startLocalEnvironment,
  startLocalServices,
  stopLocalServices,
  sumMetric,
  type LocalEnvironment,
  type LocalService,
} from '@capstan/testing';
import { cluster, userToken, VIEWER_RULES } from '../testing/dashboard-users.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '500' },
    namespaces: { type: 'string', default: '10' },
    updates: { type: 'string', default: '20' },
    screenshot: { type: 'boolean', default: false },
  },
  strict: true,
});
const CLUSTERS = Number(values.clusters);
const NAMESPACES = Number(values.namespaces);
const UPDATES = Number(values.updates);
const PER_NAMESPACE = Math.ceil(CLUSTERS / NAMESPACES);
const CREATE_CONCURRENCY = 20;
/** Sign-ins per user, each in a fresh browser context: the first with the dashboard's caches cold. */
const SIGN_INS = 3;
const STREAM_COUNTS = [1, 20];
const FAN_OUT_UPDATES = 5;
/** How long the dashboard gets after each change of state before its memory is read. */
const SETTLE_MS = 5_000;
/** The dashboard caches accepted tokens and allowed reviews 10 s: waiting longer makes the next call cold. */
const CACHE_EXPIRY_MS = 11_000;
const PAGE_TIMEOUT_MS = 60_000;
const MiB = 1024 * 1024;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const epochMs = () => performance.timeOrigin + performance.now();
const namespaceOf = (index: number) => `fleet-${String(Math.floor(index / PER_NAMESPACE)).padStart(2, '0')}`;
const nameOf = (index: number) => `c-${String(index).padStart(4, '0')}`;
/** The namespace the limited viewer may read, and whose Clusters the live updates change (both users see them). */
const VIEWER_NAMESPACE = namespaceOf(Math.min(3, NAMESPACES - 1) * PER_NAMESPACE);

interface Stats {
  n: number;
  min: number;
  median: number;
  p95: number;
  max: number;
}

/** Nearest-rank percentiles (ms, 1 decimal). */
function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    n: sorted.length,
    min: r(sorted[0]!),
    median: r(rank(0.5)),
    p95: r(rank(0.95)),
    max: r(sorted.at(-1)!),
  };
}

async function inBatches<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

function procFile(pid: number, file: string): string {
  return readFileSync(`/proc/${pid}/${file}`, 'utf8');
}

function statusMiB(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

function cpuSeconds(pid: number): number {
  const stat = procFile(pid, 'stat');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

interface MemoryReading {
  label: string;
  rssMiB: number;
  /** VmHWM: the largest RSS so far. */
  peakRssMiB: number;
  /** V8's used heap (prom-client's nodejs_heap_size_used_bytes): not collected first, so it includes garbage. */
  heapUsedMiB: number;
  cpuSeconds: number;
}

async function readMemory(service: LocalService, label: string): Promise<MemoryReading> {
  const status = procFile(service.pid, 'status');
  const metrics = await (await fetch(`${service.url}/metrics`)).text();
  const reading = {
    label,
    rssMiB: statusMiB(status, 'VmRSS'),
    peakRssMiB: statusMiB(status, 'VmHWM'),
    heapUsedMiB: sumMetric(metrics, 'nodejs_heap_size_used_bytes') / MiB,
    cpuSeconds: cpuSeconds(service.pid),
  };
  log(
    `memory ${label}: RSS ${reading.rssMiB.toFixed(1)} MiB (peak ${reading.peakRssMiB.toFixed(1)}), ` +
      `heap used ${reading.heapUsedMiB.toFixed(1)} MiB, CPU ${reading.cpuSeconds.toFixed(2)} s`,
  );
  return reading;
}

/** One GET of the dashboard's API as a user: status, body bytes and wall time. */
function timedGet(
  service: LocalService,
  path: string,
  token: string,
): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${service.adminUrl}${path}`,
      { headers: { authorization: `Bearer ${token}` }, ca: service.adminCaPem },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, bytes, ms: performance.now() - started }),
        );
        response.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A server-sent events client of the fleet stream (as the page reads it), in this process. */
class StreamClient {
  /** Resolves with the ms from the request to the whole snapshot received. */
  readonly snapshot: Promise<number>;
  private readonly listeners = new Set<(event: string, data: string) => void>();
  private readonly req;

  constructor(service: LocalService, token: string) {
    const started = performance.now();
    let snapshotReceived: (ms: number) => void = () => undefined;
    let failed: (error: Error) => void = () => undefined;
    this.snapshot = new Promise<number>((resolve, reject) => {
      snapshotReceived = resolve;
      failed = reject;
    });
    this.req = httpsRequest(
      `${service.adminUrl}/dashboard/api/clusters/stream`,
      { headers: { authorization: `Bearer ${token}` }, ca: service.adminCaPem },
      (response) => {
        if (response.statusCode !== 200) {
          failed(new Error(`the stream answered ${response.statusCode}`));
          response.resume();
          return;
        }
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(message)?.[1];
            const data = /^data: (.*)$/m.exec(message)?.[1];
            if (!event || data === undefined) continue;
            if (event === 'snapshot') snapshotReceived(performance.now() - started);
            for (const listener of this.listeners) listener(event, data);
          }
        });
        response.on('error', () => undefined);
      },
    );
    this.req.on('error', (error) => failed(error));
    this.req.end();
  }

  /** Resolves with the epoch ms when an upsert of `namespace/name` with `paused` arrives. */
  upsertSeen(namespace: string, name: string, paused: boolean): Promise<number> {
    return new Promise((resolve) => {
      const listener = (event: string, data: string) => {
        if (event !== 'upsert') return;
        const row = JSON.parse(data) as { namespace: string; name: string; paused: boolean };
        if (row.namespace !== namespace || row.name !== name || row.paused !== paused) return;
        this.listeners.delete(listener);
        resolve(epochMs());
      };
      this.listeners.add(listener);
    });
  }

  close(): void {
    this.req.destroy();
  }
}

/**
 * Runs in the page before its own script: marks (performance.now(), ms) of the sign-in's steps, read by the bench
 * as `window.__bench`. fetch is wrapped to see the whoami answer and the stream's snapshot arrive (the body passes
 * through unchanged); a MutationObserver on #clusters sees the rows rendered and, once armed, a row's button text.
 */
const PAGE_PROBE = `(() => {
  const b = (window.__bench = { marks: {}, expect: 0 });
  let paintedNow;
  b.painted = new Promise((resolve) => { paintedNow = resolve; });
  const now = () => performance.now();
  const fetchOriginal = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const response = await fetchOriginal(input, init);
    if (url.includes('/api/whoami')) b.marks.whoami ??= now();
    if (!url.includes('/api/clusters/stream') || !response.body || b.marks.snapshotReceived !== undefined) return response;
    b.marks.streamHeaders ??= now();
    const decoder = new TextDecoder();
    let text = '';
    let done = false;
    const body = response.body.pipeThrough(new TransformStream({
      transform(chunk, controller) {
        if (!done) {
          text += decoder.decode(chunk, { stream: true });
          const at = text.indexOf('event: snapshot');
          const end = at < 0 ? -1 : text.indexOf('\\n\\n', at);
          if (end >= 0) {
            b.marks.snapshotReceived = now();
            b.snapshotChars = end - at;
            done = true;
            text = '';
          }
        } else b.lastChunk = now();
        controller.enqueue(chunk);
      },
    }));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  document.addEventListener('submit', () => { b.marks.submit ??= now(); }, true);
  document.addEventListener('DOMContentLoaded', () => {
    const rows = document.getElementById('clusters');
    new MutationObserver(() => {
      if (b.expect > 0 && b.marks.rowsRendered === undefined && rows.children.length >= b.expect) {
        b.marks.rowsRendered = now();
        requestAnimationFrame(() => setTimeout(() => { b.marks.painted = now(); paintedNow(); }));
      }
      const watch = b.watch;
      if (!watch) return;
      const button = rows.querySelector('tr[data-cluster="' + watch.key + '"] button');
      if (button && button.textContent === watch.text) {
        b.watch = undefined;
        const origin = performance.timeOrigin;
        const dom = origin + now();
        const chunk = origin + b.lastChunk;
        requestAnimationFrame(() => setTimeout(() => watch.resolve({ chunk, dom, painted: origin + now() })));
      }
    // The rows are keyed (lit-html's repeat): a change rewrites only the text of its row's cells, so the whole subtree.
    }).observe(rows, { childList: true, subtree: true, characterData: true });
  });
  b.arm = (key, text) => { b.seen = new Promise((resolve) => { b.watch = { key, text, resolve }; }); };
})();`;

interface SignInMarks {
  submit: number;
  whoami?: number;
  streamHeaders?: number;
  snapshotReceived?: number;
  rowsRendered: number;
  painted: number;
}

interface SignIn {
  attempt: number;
  /** From the form's submit to the next frame after every row was rendered (ms). */
  firstPaintMs: number;
  whoamiMs?: number;
  snapshotReceivedMs?: number;
  rowsRenderedMs: number;
  rows: number;
  snapshotChars?: number;
}

interface UserUnderTest {
  label: string;
  token: string;
  /** Rows the user sees. */
  expected: number;
}

interface OpenPage {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  errors: string[];
}

async function openSignedIn(
  browser: Browser,
  service: LocalService,
  user: UserUnderTest,
  attempt: number,
): Promise<{ open: OpenPage; signIn: SignIn }> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport: { width: 1400, height: 900 },
  });
  context.setDefaultTimeout(PAGE_TIMEOUT_MS);
  await context.addInitScript({ content: PAGE_PROBE });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  await page.goto(new URL('/dashboard', service.adminUrl).href);
  await page.evaluate(`window.__bench.expect = ${user.expected}`);
  await page.locator('#token').fill(user.token);
  await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
  // Awaited with evaluate, not waitForFunction: its predicate is run with eval, which the page's policy forbids.
  await Promise.race([
    page.evaluate('window.__bench.painted'),
    sleep(PAGE_TIMEOUT_MS).then(() => Promise.reject(new Error(`${user.label}: rows not painted in time`))),
  ]);
  const marks = (await page.evaluate('window.__bench.marks')) as SignInMarks;
  const snapshotChars = (await page.evaluate('window.__bench.snapshotChars')) as number | undefined;
  const rows = await page.locator('#clusters tr').count();
  if (rows !== user.expected) throw new Error(`${user.label}: ${rows} rows shown, ${user.expected} expected`);
  const since = (mark: number | undefined) => (mark === undefined ? undefined : mark - marks.submit);
  const signIn: SignIn = {
    attempt,
    firstPaintMs: marks.painted - marks.submit,
    whoamiMs: since(marks.whoami),
    snapshotReceivedMs: since(marks.snapshotReceived),
    rowsRenderedMs: marks.rowsRendered - marks.submit,
    rows,
    snapshotChars,
  };
  log(
    `${user.label} sign-in ${attempt}: ${rows} rows painted ${signIn.firstPaintMs.toFixed(0)} ms after submit ` +
      `(whoami ${signIn.whoamiMs?.toFixed(0)}, snapshot received ${signIn.snapshotReceivedMs?.toFixed(0)}, ` +
      `rows in DOM ${signIn.rowsRenderedMs.toFixed(0)}; snapshot ${snapshotChars} chars)`,
  );
  return { open: { context, page, cdp, errors }, signIn };
}

/** Chromium's own counters for a page (seconds for *Duration, counts otherwise). */
async function pageMetrics(cdp: CDPSession): Promise<Record<string, number>> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

async function pageHeap(open: OpenPage): Promise<{ usedMiB: number; totalMiB: number; domNodes: number }> {
  await open.cdp.send('HeapProfiler.collectGarbage');
  const heap = await open.cdp.send('Runtime.getHeapUsage');
  const metrics = await pageMetrics(open.cdp);
  return {
    usedMiB: heap.usedSize / MiB,
    totalMiB: heap.totalSize / MiB,
    domNodes: metrics['Nodes'] ?? Number.NaN,
  };
}

interface LogLine {
  time?: string | number;
  msg?: string;
  informer?: string;
  objects?: number;
}

/**
 * The dashboard's log lines (pino JSON) since `fromOffset`: the epoch ms of its first line (the process is up: its
 * NATS connection) and of its Cluster informer's `cache synced` line (the first list done), with the objects listed.
 */
function startLines(
  logFile: string,
  fromOffset: number,
): { first?: number; synced?: number; objects?: number } {
  const found: { first?: number; synced?: number; objects?: number } = {};
  for (const line of readFileSync(logFile).subarray(fromOffset).toString('utf8').split('\n')) {
    let parsed: LogLine;
    try {
      parsed = JSON.parse(line) as LogLine;
    } catch {
      continue;
    }
    const time = typeof parsed.time === 'string' ? Date.parse(parsed.time) : parsed.time;
    if (time === undefined || Number.isNaN(time)) continue;
    found.first ??= time;
    if (
      parsed.msg === 'cache synced' &&
      parsed.informer?.endsWith('/clusters') &&
      found.synced === undefined
    ) {
      found.synced = time;
      found.objects = parsed.objects;
    }
  }
  return found;
}

interface DashboardStart {
  service: LocalService;
  /** From spawning the process to /readyz answering 200 (the bench polls every 200 ms). */
  readyMs: number;
  /** From spawning to its first log line (NATS connected: the process is up), when logged. */
  firstLogMs?: number;
  /** From spawning to its Cluster informer's `cache synced` line (its first list done), when logged. */
  syncedMs?: number;
  syncedObjects?: number;
}

async function startDashboard(env: LocalEnvironment, logDir: string): Promise<DashboardStart> {
  const logFile = join(logDir, 'dashboard.log');
  let offset = 0;
  try {
    offset = statSync(logFile).size;
  } catch {
    // first start
  }
  const spawnedAt = Date.now();
  const [service] = await startLocalServices({
    kubeconfigPath: env.kubeconfigPath,
    natsUrl: env.natsUrl,
    logDir,
    services: [],
    dashboard: true,
    logLevel: 'debug',
  });
  const readyMs = Date.now() - spawnedAt;
  const lines = startLines(service!.logFile, offset);
  return {
    service: service!,
    readyMs,
    ...(lines.first !== undefined && { firstLogMs: lines.first - spawnedAt }),
    ...(lines.synced !== undefined && { syncedMs: lines.synced - spawnedAt, syncedObjects: lines.objects }),
  };
}

/** The TokenReviews and SubjectAccessReviews the API server has answered so far (its apiserver_request_total). */
async function reviewCounts(admin: KubeClient): Promise<{ tokenReviews: number; accessReviews: number }> {
  const text = await streamText(await admin.stream({ method: HttpMethod.GET, path: '/metrics' }));
  const byResource = apiserverRequestsByResource(text);
  const sum = (resource: string) =>
    Object.entries(byResource)
      .filter(([key]) => key.endsWith(` ${resource}`))
      .reduce((total, [, n]) => total + n, 0);
  return { tokenReviews: sum('tokenreviews'), accessReviews: sum('subjectaccessreviews') };
}

/** One update as a page showed it (epoch ms): its stream's chunk arrived, the row in the DOM, the next frame. */
interface Shown {
  chunk: number;
  dom: number;
  painted: number;
}

interface UpdateFigures {
  user: string;
  updates: number;
  /** Write sent to the row's button in the DOM: the latency asked for. */
  domMs: Stats;
  /** Write sent to the next frame after it. */
  paintedMs: Stats;
  /** Write sent to the stream's chunk reaching the page (API server, informer, dashboard, TLS, Chromium's network). */
  deliveredMs: Stats;
  /** The page's own work: the chunk to the DOM (parse, re-render of the whole table). */
  renderMs: Stats;
  /** The DOM to the next frame (style, layout, paint). */
  frameMs: Stats;
}

/**
 * Pauses or resumes the Clusters of `indices` one after the other (the next once every page showed the last, 250 ms
 * later) and times each in every page of `users`. Also: the dashboard's CPU and the reviews it asked meanwhile.
 */
async function liveUpdates(
  pages: Map<UserUnderTest, OpenPage>,
  users: UserUnderTest[],
  indices: number[],
  clusters: ReturnType<KubeClient['resource']>,
  admin: KubeClient,
  service: LocalService,
): Promise<{ figures: UpdateFigures[]; dashboardCpuMsPerUpdate: number; reviewsPerUpdate: number }> {
  const cpuBefore = cpuSeconds(service.pid);
  const reviewsBefore = await reviewCounts(admin);
  const shown = new Map<UserUnderTest, (Shown & { t0: number })[]>(users.map((u) => [u, []]));
  for (const index of indices) {
    const ref = { namespace: namespaceOf(index), name: nameOf(index) };
    const current = (await clusters.get(ref)) as Cluster;
    const paused = current.spec?.paused !== true;
    const key = `${ref.namespace}/${ref.name}`;
    for (const user of users)
      await pages
        .get(user)!
        .page.evaluate(`window.__bench.arm(${JSON.stringify(key)}, '${paused ? 'Resume' : 'Pause'}')`);
    const t0 = epochMs();
    await clusters.mergePatch(ref, { spec: { paused } });
    const seen = await Promise.all(
      users.map((user) =>
        Promise.race([
          pages.get(user)!.page.evaluate('window.__bench.seen') as Promise<Shown>,
          sleep(15_000).then(() => Promise.reject(new Error(`${user.label}: ${key} not shown within 15 s`))),
        ]),
      ),
    );
    users.forEach((user, u) => shown.get(user)!.push({ ...seen[u]!, t0 }));
    await sleep(250);
  }
  const reviewsAfter = await reviewCounts(admin);
  const figures = users.map((user) => {
    const all = shown.get(user)!;
    return {
      user: user.label,
      updates: all.length,
      domMs: stats(all.map((s) => s.dom - s.t0)),
      paintedMs: stats(all.map((s) => s.painted - s.t0)),
      deliveredMs: stats(all.map((s) => s.chunk - s.t0)),
      renderMs: stats(all.map((s) => s.dom - s.chunk)),
      frameMs: stats(all.map((s) => s.painted - s.dom)),
    };
  });
  for (const f of figures)
    log(
      `${f.user}, ${f.updates} updates: DOM ${JSON.stringify(f.domMs)}, painted median ${f.paintedMs.median}, ` +
        `delivered median ${f.deliveredMs.median}, render median ${f.renderMs.median}, frame median ${f.frameMs.median}`,
    );
  return {
    figures,
    dashboardCpuMsPerUpdate: ((cpuSeconds(service.pid) - cpuBefore) * 1000) / indices.length,
    reviewsPerUpdate: (reviewsAfter.accessReviews - reviewsBefore.accessReviews) / indices.length,
  };
}

function machine(): Record<string, unknown> {
  let uptime = '';
  try {
    uptime = execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    // no uptime command
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    load: loadavg().map((l) => Math.round(l * 100) / 100),
    uptime,
  };
}

function table(title: string, headings: string[], rows: (string | number | undefined)[][]): string[] {
  const cells = (row: (string | number | undefined)[]) =>
    `| ${row.map((c) => (typeof c === 'number' ? (Number.isInteger(c) ? String(c) : c.toFixed(1)) : (c ?? '-'))).join(' | ')} |`;
  return [`${title}`, '', cells(headings), `|${headings.map(() => '---|').join('')}`, ...rows.map(cells), ''];
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const before = machine();
  log(`dashboard bench: ${CLUSTERS} Clusters in ${NAMESPACES} namespaces; ${String(before['uptime'])}`);
  const env = await startLocalEnvironment({ log });
  const logDir = mkdtempSync(join(tmpdir(), 'capstan-bench-dashboard-'));
  const kc = new KubeConfig();
  kc.loadFromString(env.kubeconfig);
  const admin: KubeClient = createKubeClient(kc, { fieldManager: 'capstan-bench' });
  const services: LocalService[] = [];
  let browser: Browser | undefined;
  const streams: StreamClient[] = [];
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    for (const stream of streams) stream.close();
    await browser?.close().catch(() => undefined);
    await stopLocalServices(services);
    await admin.close();
    await env.stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: stopping what the bench started`);
      void stopAll().finally(() => process.exit(130));
    });
  try {
    await installCapstanDefinitions(kc);
    const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
    await eventually(
      async () => {
        await clusters.list({ limit: 1 });
        return true;
      },
      { message: 'the API server serves Clusters', timeoutMs: 30_000 },
    );
    const core = kc.makeApiClient(CoreV1Api);
    const namespaces = [...new Set(Array.from({ length: CLUSTERS }, (_, i) => namespaceOf(i)))];
    await Promise.all(namespaces.map((name) => core.createNamespace({ body: { metadata: { name } } })));

    // The dashboard with no Clusters yet: its start and idle memory. Started twice: the first start reads node and
    // the modules from disk, the next ones (as the one with the fleet) from the page cache.
    await stopLocalServices([(await startDashboard(env, logDir)).service]);
    const empty = await startDashboard(env, logDir);
    services.push(empty.service);
    log(
      `dashboard (no Clusters) ready in ${empty.readyMs} ms (up at ${empty.firstLogMs} ms, informer synced at ` +
        `${empty.syncedMs} ms)`,
    );
    await sleep(SETTLE_MS);
    const memory: MemoryReading[] = [await readMemory(empty.service, 'idle, no Clusters')];

    log(`creating ${CLUSTERS} Clusters, ${CREATE_CONCURRENCY} at a time`);
    const createStart = performance.now();
    await inBatches(
      Array.from({ length: CLUSTERS }, (_, i) => i),
      CREATE_CONCURRENCY,
      (i) => clusters.create(cluster(namespaceOf(i), nameOf(i))),
    );
    const createSeconds = (performance.now() - createStart) / 1000;
    log(`created in ${createSeconds.toFixed(1)} s`);
    await sleep(SETTLE_MS);
    memory.push(await readMemory(empty.service, `${CLUSTERS} Clusters arrived by watch`));

    // What the informer's list costs the API server, read by the bench (the same request, unpaged below 500 objects).
    const listMs: number[] = [];
    let listBytes = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const listed = await clusters.listAll({});
      listMs.push(performance.now() - t);
      listBytes = JSON.stringify(listed.items).length;
      if (listed.items.length !== CLUSTERS) throw new Error(`listed ${listed.items.length} Clusters`);
    }

    // A fresh dashboard process that finds the fleet there: its first list is the readiness.
    await stopLocalServices(services.splice(0));
    const full = await startDashboard(env, logDir);
    const service = full.service;
    services.push(service);
    log(
      `dashboard (${CLUSTERS} Clusters) ready in ${full.readyMs} ms (up at ${full.firstLogMs} ms, informer synced at ${full.syncedMs} ms, ` +
        `${full.syncedObjects} objects)`,
    );
    await sleep(SETTLE_MS);
    memory.push(await readMemory(service, `${CLUSTERS} Clusters listed at start, idle`));

    const reader: UserUnderTest = {
      label: 'cluster-wide reader',
      token: await userToken(kc, 'default', 'fleet-reader', VIEWER_RULES, { clusterWide: true }),
      expected: CLUSTERS,
    };
    const viewer: UserUnderTest = {
      label: `viewer of ${VIEWER_NAMESPACE}`,
      token: await userToken(kc, VIEWER_NAMESPACE, 'viewer', VIEWER_RULES),
      expected: Array.from({ length: CLUSTERS }, (_, i) => namespaceOf(i)).filter(
        (n) => n === VIEWER_NAMESPACE,
      ).length,
    };
    const users = [reader, viewer];

    // First paint: each user signs in SIGN_INS times in fresh contexts; the first finds the dashboard's caches cold.
    browser = await launchBrowser();
    const chromium = browser.version();
    log(`Chromium ${chromium}`);
    const signIns = new Map<UserUnderTest, SignIn[]>();
    const signInReviews = new Map<UserUnderTest, { tokenReviews: number; accessReviews: number }>();
    const pages = new Map<UserUnderTest, OpenPage>();
    for (const user of users) {
      const reviewsBefore = await reviewCounts(admin);
      const results: SignIn[] = [];
      for (let attempt = 1; attempt <= SIGN_INS; attempt++) {
        const { open, signIn } = await openSignedIn(browser, service, user, attempt);
        results.push(signIn);
        if (attempt < SIGN_INS) await open.context.close();
        else pages.set(user, open);
      }
      signIns.set(user, results);
      const reviewsAfter = await reviewCounts(admin);
      signInReviews.set(user, {
        tokenReviews: reviewsAfter.tokenReviews - reviewsBefore.tokenReviews,
        accessReviews: reviewsAfter.accessReviews - reviewsBefore.accessReviews,
      });
    }
    const heaps = new Map<UserUnderTest, Awaited<ReturnType<typeof pageHeap>>>();
    for (const user of users) {
      heaps.set(user, await pageHeap(pages.get(user)!));
      log(`${user.label}: page heap ${JSON.stringify(heaps.get(user))}`);
    }
    let screenshot: { path: string; bytes: number } | undefined;
    if (values.screenshot) {
      const path = join(repoRoot(), 'docs', 'dashboard-fleet-500.png');
      await pages.get(reader)!.page.screenshot({ path });
      screenshot = { path: 'docs/dashboard-fleet-500.png', bytes: statSync(path).size };
      log(`screenshot: ${path} (${screenshot.bytes} bytes)`);
    }
    memory.push(await readMemory(service, `${CLUSTERS} Clusters, 2 browser pages streaming`));

    // Live updates: a write through the API to the row's button flipping, in both users' pages; then writes in the
    // other namespaces, which the reader sees and the viewer's stream filters out (its denied reviews cached 2 s).
    const base = namespaces.indexOf(VIEWER_NAMESPACE) * PER_NAMESPACE;
    const inViewers = await liveUpdates(
      pages,
      users,
      Array.from({ length: UPDATES }, (_, i) => base + (i % PER_NAMESPACE)),
      clusters,
      admin,
      service,
    );
    const others = Array.from({ length: CLUSTERS }, (_, i) => i).filter(
      (i) => namespaceOf(i) !== VIEWER_NAMESPACE,
    );
    const outside = await liveUpdates(
      pages,
      [reader],
      Array.from({ length: UPDATES }, (_, i) => others[(i * 37) % others.length]!),
      clusters,
      admin,
      service,
    );
    const pageErrors = users.flatMap((u) => pages.get(u)!.errors);
    await browser.close();
    browser = undefined;
    await sleep(SETTLE_MS);
    memory.push(await readMemory(service, `${CLUSTERS} Clusters, browser closed`));

    // Streams of this process: 1, then 20 at once, as the cluster-wide reader; each update fanned out to all.
    const streamRuns: { streams: number; snapshotMs: Stats; fanOutMs?: Stats }[] = [];
    let updateIndex = base + PER_NAMESPACE - 1;
    for (const count of STREAM_COUNTS) {
      const opened = Array.from(
        { length: count - streams.length },
        () => new StreamClient(service, reader.token),
      );
      streams.push(...opened);
      const snapshotMs = stats(await Promise.all(opened.map((s) => s.snapshot)));
      await sleep(SETTLE_MS);
      memory.push(
        await readMemory(service, `${CLUSTERS} Clusters, ${count} open stream${count === 1 ? '' : 's'}`),
      );
      const fanOut: number[] = [];
      for (let i = 0; i < FAN_OUT_UPDATES; i++, updateIndex--) {
        const ref = { namespace: namespaceOf(updateIndex), name: nameOf(updateIndex) };
        const waits = streams.map((s) => s.upsertSeen(ref.namespace, ref.name, true));
        const t0 = epochMs();
        await clusters.mergePatch(ref, { spec: { paused: true } });
        fanOut.push(Math.max(...(await Promise.all(waits))) - t0);
        await sleep(100);
      }
      streamRuns.push({ streams: count, snapshotMs, fanOutMs: stats(fanOut) });
      log(
        `${count} streams: snapshot ${JSON.stringify(snapshotMs)}, fan-out ${JSON.stringify(stats(fanOut))}`,
      );
    }
    for (const stream of streams.splice(0)) stream.close();

    // The list API: the first call of each user with the dashboard's token and review caches expired, then warm.
    await sleep(CACHE_EXPIRY_MS);
    const api: {
      user: string;
      path: string;
      coldMs: number;
      warm: Stats;
      bytes: number;
      items: number;
      coldAccessReviews: number;
    }[] = [];
    for (const user of users) {
      for (const path of [
        '/dashboard/api/clusters',
        `/dashboard/api/clusters?namespace=${VIEWER_NAMESPACE}`,
      ]) {
        const reviewsBefore = await reviewCounts(admin);
        const cold = await timedGet(service, path, user.token);
        const coldAccessReviews = (await reviewCounts(admin)).accessReviews - reviewsBefore.accessReviews;
        if (cold.status !== 200) throw new Error(`${user.label} GET ${path}: ${cold.status}`);
        const warm: number[] = [];
        let bytes = cold.bytes;
        for (let i = 0; i < 10; i++) {
          const r = await timedGet(service, path, user.token);
          warm.push(r.ms);
          bytes = r.bytes;
        }
        const items = path.includes('namespace=') ? PER_NAMESPACE : user.expected;
        api.push({
          user: user.label,
          path,
          coldMs: cold.ms,
          warm: stats(warm),
          bytes,
          items,
          coldAccessReviews,
        });
        log(
          `${user.label} GET ${path}: cold ${cold.ms.toFixed(1)} ms, warm ${JSON.stringify(stats(warm))}, ${bytes} B`,
        );
      }
    }
    memory.push(await readMemory(service, `${CLUSTERS} Clusters, end`));

    const after = machine();
    const result = {
      date: startedAt.toISOString(),
      seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      command: `npm run bench:dashboard -- ${process.argv.slice(2).join(' ')}`.trim(),
      machine: { before, after },
      kubeApiserver: env.binaries.kubernetesVersion,
      node: process.version,
      chromium,
      clusters: CLUSTERS,
      namespaces: NAMESPACES,
      createSeconds,
      apiserverListMs: stats(listMs),
      apiserverListJsonBytes: listBytes,
      dashboardStart: {
        noClusters: { readyMs: empty.readyMs, firstLogMs: empty.firstLogMs, syncedMs: empty.syncedMs },
        withClusters: {
          readyMs: full.readyMs,
          firstLogMs: full.firstLogMs,
          syncedMs: full.syncedMs,
          syncedObjects: full.syncedObjects,
        },
      },
      firstPaint: users.map((u) => ({
        user: u.label,
        rows: u.expected,
        signIns: signIns.get(u),
        reviews: signInReviews.get(u),
      })),
      pageHeap: users.map((u) => ({ user: u.label, ...heaps.get(u) })),
      updatesInViewersNamespace: inViewers,
      updatesInOtherNamespaces: outside,
      streams: streamRuns,
      api,
      memory,
      pageErrors,
      screenshot,
    };
    const out = join(repoRoot(), '.capstan', 'bench');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'dashboard.json'), `${JSON.stringify(result, null, 2)}\n`);
    const report = [
      '',
      `Dashboard at ${CLUSTERS} Clusters (${NAMESPACES} namespaces), ${before['cores']} cores, load ${JSON.stringify(before['load'])} -> ${JSON.stringify(after['load'])}`,
      '',
      ...table(
        'First paint (ms from submitting the sign-in form)',
        ['user', 'rows', 'sign-in', 'whoami', 'snapshot received', 'rows in DOM', 'painted'],
        users.flatMap((u) =>
          signIns
            .get(u)!
            .map((s) => [
              u.label,
              s.rows,
              s.attempt === 1 ? '1 (cold)' : String(s.attempt),
              s.whoamiMs,
              s.snapshotReceivedMs,
              s.rowsRenderedMs,
              s.firstPaintMs,
            ]),
        ),
      ),
      ...table(
        `Live update: Cluster patched (ms from the write; ${UPDATES} updates each, median / p95)`,
        ['updates in', 'user', 'button in DOM', 'next frame', 'delivered to page', 'page render', 'frame'],
        [
          ...inViewers.figures.map((f) => ["viewer's namespace", f] as const),
          ...outside.figures.map((f) => ['other namespaces', f] as const),
        ].map(([where, f]) => [
          where,
          f.user,
          `${f.domMs.median} / ${f.domMs.p95}`,
          `${f.paintedMs.median} / ${f.paintedMs.p95}`,
          `${f.deliveredMs.median} / ${f.deliveredMs.p95}`,
          `${f.renderMs.median} / ${f.renderMs.p95}`,
          `${f.frameMs.median} / ${f.frameMs.p95}`,
        ]),
      ),
      `Per update: dashboard CPU ${inViewers.dashboardCpuMsPerUpdate.toFixed(1)} ms (viewer's namespace), ${outside.dashboardCpuMsPerUpdate.toFixed(1)} ms (others); SubjectAccessReviews ${inViewers.reviewsPerUpdate.toFixed(2)} and ${outside.reviewsPerUpdate.toFixed(2)}`,
      `Sign-in reviews (${SIGN_INS} sign-ins): ${users.map((u) => `${u.label} ${signInReviews.get(u)!.tokenReviews} TokenReviews, ${signInReviews.get(u)!.accessReviews} SubjectAccessReviews`).join('; ')}`,
      '',
      ...table(
        'GET /dashboard/api/clusters (ms)',
        ['user', 'query', 'items', 'bytes', 'cold', 'its reviews', 'warm median', 'warm p95'],
        api.map((a) => [
          a.user,
          a.path.split('?')[1] ?? '',
          a.items,
          a.bytes,
          a.coldMs,
          a.coldAccessReviews,
          a.warm.median,
          a.warm.p95,
        ]),
      ),
      ...table(
        'Dashboard process memory (MiB)',
        ['state', 'RSS', 'peak RSS', 'V8 heap used'],
        memory.map((m) => [m.label, m.rssMiB, m.peakRssMiB, m.heapUsedMiB]),
      ),
      ...table(
        'Page (after GC)',
        ['user', 'JS heap used MiB', 'DOM nodes'],
        users.map((u) => [u.label, heaps.get(u)!.usedMiB, heaps.get(u)!.domNodes]),
      ),
      ...table(
        'Streams (cluster-wide reader, this process)',
        ['streams', 'snapshot of those opened, median ms', 'update to all streams median ms', 'p95'],
        streamRuns.map((s) => [s.streams, s.snapshotMs.median, s.fanOutMs?.median, s.fanOutMs?.p95]),
      ),
      `Start (ms from spawn): no Clusters up ${empty.firstLogMs}, synced ${empty.syncedMs}, ready ${empty.readyMs}; ${CLUSTERS} Clusters up ${full.firstLogMs}, synced ${full.syncedMs}, ready ${full.readyMs}. kube-apiserver LIST of ${CLUSTERS}: median ${stats(listMs).median} ms, ${listBytes} B of JSON. Created in ${createSeconds.toFixed(1)} s.`,
      `Written: ${join(out, 'dashboard.json')}`,
    ];
    process.stdout.write(`${report.join('\n')}\n`);
    rmSync(logDir, { recursive: true, force: true });
  } catch (error) {
    log(`failed; the dashboard's log stays in ${logDir}`);
    throw error;
  } finally {
    await stopAll();
  }
}

await main();
