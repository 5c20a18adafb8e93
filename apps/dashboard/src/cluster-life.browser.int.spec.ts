import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import {
  eventually,
  FAST_SIM_ENV,
  launchBrowser,
  resolveKubectl,
  startCapstan,
  type CapstanUnderTest,
  type LocalService,
} from '@capstan/testing';
import { CLUSTER_PAGE_RULES, TEMPLATE_WRITER_RULES, userToken } from './testing/dashboard-users.js';

// One cluster's life, watched and steered from the dashboard in real headless Chromium against the whole product (the
// five services, the sim, the dashboard): created from the page's form, seen go from Provisioning to Available live,
// scaled 2 -> 3 workers, paused and resumed, upgraded in place machine by machine, its kubeconfig downloaded and used
// with kubectl; a read-only user's buttons say why they are disabled and the API refuses their forged request.

const CLUSTER = 'life';
const TO_VERSION = 'v1.35.4+k3s1';
/**
 * `CAPSTAN_DASHBOARD_SCREENSHOTS=<dir>`: the fleet and the cluster page at demo size are saved there (docs/dashboard.md
 * shows them); a plain run writes nothing.
 */
const SCREENSHOTS = process.env['CAPSTAN_DASHBOARD_SCREENSHOTS'];

/** A page wait for what the page does at once; the cluster's own progress has the longer bounds below. */
const PAGE_TIMEOUT_MS = 10_000;
/** Provisioning three sim machines, or rolling one step of an upgrade, with FAST_SIM_ENV (seconds each, usually). */
const CLUSTER_TIMEOUT_MS = 120_000;

/** What the test reads of the page's window (the tests compile without the DOM's types). */
interface PageWindow {
  sessionStorage: { getItem(key: string): string | null };
  seen: { phases: string[]; available: string[]; tiles: Record<string, string[]>; order: string[] };
}
interface PageElement {
  getAttribute(name: string): string | null;
  textContent: string | null;
  querySelector(selector: string): PageElement | null;
}
interface PageDocument {
  querySelector(
    selector: string,
  ): { textContent: string | null; children: ArrayLike<{ textContent: string | null }> } | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  getElementById(id: string): unknown;
}
declare const window: PageWindow;
declare const document: PageDocument;
declare const MutationObserver: new (callback: () => void) => {
  observe(
    target: unknown,
    options: { subtree: boolean; childList: boolean; characterData: boolean; attributes: boolean },
  ): void;
};

/** The rights of the cluster's owner in their namespace: the templates' objects, the page's reads, the kubeconfig. */
const OWNER_RULES = [
  ...CLUSTER_PAGE_RULES,
  ...TEMPLATE_WRITER_RULES,
  {
    apiGroups: ['cluster.x-k8s.io'],
    resources: ['clusters', 'machinedeployments'],
    verbs: ['patch', 'delete'],
  },
  { apiGroups: ['controlplane.capstan.dev'], resources: ['k3scontrolplanes'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['secrets'], resourceNames: [`${CLUSTER}-kubeconfig`], verbs: ['get'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
];

describe("a cluster's life in the dashboard", () => {
  let capstan: CapstanUnderTest;
  let dashboard: LocalService;
  let admin: KubeClient;
  let browser: Browser;
  let owner: Page;
  let ownerNavigations = 0;
  let ownerErrors: string[] = [];
  let ownerToken: string;
  let readerToken: string;
  let downloads: string;
  const contexts: BrowserContext[] = [];
  const ns = () => capstan.namespace.name;

  beforeAll(async () => {
    browser = await launchBrowser();
    capstan = await startCapstan('dash-life', { env: FAST_SIM_ENV, dashboard: true });
    dashboard = capstan.services.find((service) => service.name === 'dashboard')!;
    admin = createKubeClient(capstan.namespace.kc);
    [ownerToken, readerToken] = await Promise.all([
      userToken(capstan.namespace.kc, ns(), 'owner', OWNER_RULES),
      userToken(capstan.namespace.kc, ns(), 'reader', CLUSTER_PAGE_RULES),
    ]);
    downloads = mkdtempSync(join(tmpdir(), 'capstan-dash-life-'));
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await admin?.close();
    await capstan?.stop();
    if (downloads) rmSync(downloads, { recursive: true, force: true });
  });

  async function signIn(token: string): Promise<{ page: Page; errors: string[] }> {
    // Certificate errors are ignored in this context only, which loads nothing but the dashboard on 127.0.0.1 (its
    // certificate is issued by the CA the run made for its services).
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      acceptDownloads: true,
      viewport: { width: 1400, height: 900 },
    });
    contexts.push(context);
    context.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(new URL('/dashboard', dashboard.adminUrl).href);
    await page.locator('#token').fill(token);
    await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#fleet').waitFor();
    return { page, errors };
  }

  const machines = async () =>
    (await admin.resource<Machine>(RESOURCES.Machine).list({ namespace: ns() })).items.filter(
      (m) => m.spec.clusterName === CLUSTER,
    );
  const tiles = (page: Page) => page.locator('#rollout .tile');
  const workerGroup = (page: Page) => page.locator('#rollout .rollout-group[data-group^="md/"]');

  it('creates a cluster from the form and shows it go from Provisioning to Available, live', async () => {
    ({ page: owner, errors: ownerErrors } = await signIn(ownerToken));
    // A document load, not the page's own hash routes: a live page is never reloaded.
    owner.on('load', () => ownerNavigations++);
    // Records every phase the row shows, from the moment it appears: the page is never reloaded.
    await owner.evaluate((key) => {
      window.seen = { phases: [], available: [], tiles: {}, order: [] };
      new MutationObserver(() => {
        const row = document.querySelector(`#clusters tr[data-cluster="${key}"]`);
        if (!row) return;
        const phase = row.children[2]?.textContent ?? '';
        if (window.seen.phases.at(-1) !== phase) window.seen.phases.push(phase);
        const available = row.children[6]?.textContent ?? '';
        if (window.seen.available.at(-1) !== available) window.seen.available.push(available);
      }).observe(document.getElementById('clusters'), {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: false,
      });
    }, `${ns()}/${CLUSTER}`);

    await owner.locator('#create-cluster summary').click();
    await owner.locator('#create-name').fill(CLUSTER);
    await owner.locator('#create-namespace').fill(ns());
    await owner.locator('#create-flavor').selectOption('topology');
    await owner.locator('#create-version').fill('v1.34.4');
    await owner.locator('#create-control-plane').fill('1');
    await owner.locator('#create-workers').fill('2');
    await owner.locator('#create-in-place').check();
    await owner.locator('#create-submit').click();

    const row = owner.locator(`#clusters tr[data-cluster="${ns()}/${CLUSTER}"]`);
    await row.locator('td').nth(6).filter({ hasText: 'True' }).waitFor({ timeout: CLUSTER_TIMEOUT_MS });
    const { phases, available } = await owner.evaluate(() => window.seen);
    // The row appeared before the cluster was provisioned (the sim's infrastructure is ready at once, so the Cluster
    // may go from Pending to Provisioned in one step) and was redrawn in place until it was Available.
    expect(['', 'Pending', 'Provisioning']).toContain(phases[0]);
    expect(phases.at(-1)).toBe('Provisioned');
    expect(available[0]).not.toMatch(/^True/);
    expect(available.at(-1)).toMatch(/^True/);
    // Available needs the control plane, not every worker: the second worker's Node comes moments later.
    await row
      .locator('td')
      .nth(5)
      .filter({ hasText: /^2\/2$/ })
      .waitFor({ timeout: CLUSTER_TIMEOUT_MS });
    expect(ownerNavigations).toBe(0);
    if (SCREENSHOTS) await owner.screenshot({ path: join(SCREENSHOTS, 'dashboard-fleet-demo.png') });
  });

  it("opens the cluster's page: a tile per machine, the hand-off timeline", async () => {
    await owner.locator(`#clusters tr[data-cluster="${ns()}/${CLUSTER}"] a`).click();
    await owner
      .locator('#cluster-title')
      .filter({ hasText: `Cluster ${ns()}/${CLUSTER}` })
      .waitFor();
    await eventually(async () => (await tiles(owner).count()) === 3, { message: 'three tiles' });
    await eventually(async () => (await owner.locator('#rollout .tile[data-state="ready"]').count()) === 3, {
      message: 'three machines ready',
      timeoutMs: CLUSTER_TIMEOUT_MS,
    });
    expect(await owner.locator('#rollout .rollout-group[data-group="cp"] .tile').count()).toBe(1);
    expect(await workerGroup(owner).locator('.tile').count()).toBe(2);
    // Every machine's hand-offs, from the lifecycle events on NATS.
    await eventually(async () => (await owner.locator('#timeline [data-step="node-ready"]').count()) >= 3, {
      message: 'a node-ready step per machine in the timeline',
    });
    if (SCREENSHOTS)
      await owner.screenshot({ path: join(SCREENSHOTS, 'dashboard-cluster-demo.png'), fullPage: true });
  });

  it('scales the workers 2 -> 3 and shows the new machine appear', async () => {
    const before = new Set((await machines()).map((m) => m.metadata.name));
    await workerGroup(owner).locator('input[type="number"]').fill('3');
    await workerGroup(owner).locator('button[data-deployment]').click();
    await eventually(async () => (await workerGroup(owner).locator('.tile').count()) === 3, {
      message: 'a third worker tile',
      timeoutMs: CLUSTER_TIMEOUT_MS,
    });
    const added = (await machines()).map((m) => m.metadata.name).filter((name) => !before.has(name));
    expect(added).toHaveLength(1);
    await owner
      .locator(`#rollout .tile[data-machine="${added[0]}"][data-state="ready"]`)
      .waitFor({ timeout: CLUSTER_TIMEOUT_MS });
    expect(ownerNavigations).toBe(0);
  });

  it('pauses and resumes the cluster', async () => {
    const paused = async () =>
      (await admin.resource<Cluster>(RESOURCES.Cluster).get({ namespace: ns(), name: CLUSTER })).spec
        ?.paused === true;
    await owner.locator('#pause').filter({ hasText: 'Pause' }).click();
    await owner.locator('#pause').filter({ hasText: 'Resume' }).waitFor();
    expect(await paused()).toBe(true);
    await owner.locator('#pause').click();
    await owner.locator('#pause').filter({ hasText: 'Pause' }).waitFor();
    expect(await paused()).toBe(false);
  });

  it('upgrades in place, machine by machine: the same machines, the control plane first', async () => {
    const names = (await machines()).map((m) => m.metadata.name!).sort();
    // Records each tile's states as the rollout shows them.
    await owner.evaluate(() => {
      window.seen.tiles = {};
      window.seen.order = [];
      const record = () => {
        for (const tile of Array.from(document.querySelectorAll('#rollout .tile'))) {
          const name = tile.getAttribute('data-machine') ?? '';
          const state = `${tile.getAttribute('data-state')} ${tile.querySelector('.tile-version')?.textContent ?? ''}`;
          const states = (window.seen.tiles[name] ??= []);
          if (states.at(-1) === state) continue;
          states.push(state);
          window.seen.order.push(`${name} ${state}`);
        }
      };
      record();
      new MutationObserver(record).observe(document.getElementById('rollout'), {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
      });
    });
    await owner.locator('#upgrade-version').fill(TO_VERSION);
    await owner.locator('#upgrade').click();
    await eventually(
      async () =>
        (await owner
          .locator(`#rollout .tile[data-state="ready"]`)
          .filter({ hasText: TO_VERSION })
          .count()) === 4,
      { message: `four machines ready at ${TO_VERSION}`, timeoutMs: 3 * CLUSTER_TIMEOUT_MS },
    );
    expect((await machines()).map((m) => m.metadata.name).sort()).toEqual(names);
    const { tiles: seen, order } = await owner.evaluate(() => window.seen);
    const controlPlane = await owner
      .locator('#rollout .rollout-group[data-group="cp"] .tile')
      .getAttribute('data-machine');
    // Each machine was seen updating in place, then ready at the new version.
    for (const name of names) {
      expect(seen[name]).toEqual(
        expect.arrayContaining([expect.stringMatching(/^updating /), `ready ${TO_VERSION}`]),
      );
    }
    // The control plane was done before any worker started.
    const cpDone = order.indexOf(`${controlPlane} ready ${TO_VERSION}`);
    const firstWorkerUpdating = order.findIndex(
      (entry) => !entry.startsWith(`${controlPlane} `) && entry.includes(' updating '),
    );
    expect(cpDone).toBeGreaterThan(-1);
    expect(firstWorkerUpdating).toBeGreaterThan(cpDone);
    expect(ownerErrors).toEqual([]);
    expect(ownerNavigations).toBe(0);
  });

  it('downloads the kubeconfig, which kubectl uses against the workload cluster', async () => {
    const [download] = await Promise.all([
      owner.waitForEvent('download'),
      owner.locator('#download-kubeconfig').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${CLUSTER}.kubeconfig`);
    const path = join(downloads, download.suggestedFilename());
    await download.saveAs(path);
    const nodes = execFileSync(resolveKubectl(), ['--kubeconfig', path, 'get', 'nodes', '-o', 'name'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(nodes.trim().split('\n')).toHaveLength(4);
  });

  it('shows a read-only user why they cannot scale, and the API refuses their forged request', async () => {
    const { page } = await signIn(readerToken);
    await page.locator(`#clusters tr[data-cluster="${ns()}/${CLUSTER}"] a`).click();
    // The page asks what the user may do once it is open; the answer disables the buttons and says why.
    await page.locator('[data-why="scaleControlPlane"]').waitFor();
    expect(await page.locator('#scale-cp').isDisabled()).toBe(true);
    expect(await page.locator('[data-why="scaleControlPlane"]').textContent()).toContain(
      `you may not patch clusters.cluster.x-k8s.io ${CLUSTER} in namespace ${ns()}`,
    );
    expect(await page.locator('#pause').isDisabled()).toBe(true);
    // The button is only the page's courtesy: a request made by hand is refused by the API server, as the user.
    const forged = await page.evaluate(
      async ({ path }) => {
        const response = await fetch(path, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${window.sessionStorage.getItem('capstan-dashboard-token')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ replicas: 3 }),
        });
        return { status: response.status, body: await response.text() };
      },
      { path: `/dashboard/api/clusters/${ns()}/${CLUSTER}/scale-control-plane` },
    );
    expect(forged.status).toBe(403);
    expect((JSON.parse(forged.body) as { message: string }).message).toContain(
      `"system:serviceaccount:${ns()}:reader" cannot patch resource "clusters"`,
    );
  });
});
