import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { LABELS, RESOURCES, type Cluster } from '@capstan/api';
import { encodeEvent, type EventDataInput, type EventName } from '@capstan/events';
import { createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  launchBrowser,
  type TestNamespace,
} from '@capstan/testing';
import { LIT_HTML_FILES, LIT_HTML_PREFIX, litHtmlRoot } from './api/web-assets.js';
import {
  CLUSTER_PAGE_RULES,
  cluster,
  createClusterTree,
  createKubeconfigSecret,
  kubeconfigReaderRules,
  OPERATOR_RULES,
  TEMPLATE_WRITER_RULES,
  treeKindsServed,
  userToken,
  VIEWER_RULES,
} from './testing/dashboard-users.js';
import { startTestDashboard } from './testing/start-test-dashboard.js';

// The page in real headless Chromium against the real dashboard service and API server: a user signs in by pasting a
// token, sees their namespace's Clusters live, acts as themselves (the API server's refusal shown as it gave it), and
// signs out leaving no token behind.

/** Every wait of the page is bounded by this: a missing element fails the test in seconds, not at Jest's timeout. */
const PAGE_TIMEOUT_MS = 10_000;
/** Where app.js keeps the token: this tab's sessionStorage. */
const TOKEN_KEY = 'capstan-dashboard-token';

/** What the test reads of the page's window (the tests compile without the DOM's types). */
interface PageWindow {
  sessionStorage: { getItem(key: string): string | null };
}

/** A GET of `path` exactly as written (no URL normalisation: `../` and `%2e%2e` reach the server as they are). */
function rawGet(
  service: RunningService,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(service.adminUrl);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: url.hostname, port: url.port, path, ca: service.adminCaPem, timeout: 5_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens the dashboard's page. Chromium abandons a navigation when the machine's network interfaces change under it
 * (`net::ERR_NETWORK_CHANGED`: other suites' containers and CNI come and go on this machine): then it is tried again.
 */
async function openDashboard(page: Page, service: RunningService): Promise<void> {
  const url = new URL('/dashboard', service.adminUrl).href;
  for (let attempt = 1; ; attempt++) {
    try {
      await page.goto(url);
      return;
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('ERR_NETWORK_CHANGED')) throw error;
    }
  }
}

/** Resolves after the page has drawn two more frames (a batched render and its paint). */
const frames = (page: Page) =>
  page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');

/** A v1beta2 condition as the API server takes it. */
const condition = (type: string, status: 'True' | 'False', reason: string, message = '', agoMs = 90_000) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: new Date(Date.now() - agoMs).toISOString().replace(/\.\d+Z$/, 'Z'),
});

/** Waits until `read` gives `expected` (compared as JSON), failing with what it gave last. */
async function until<T>(read: () => Promise<T>, expected: T, message: string): Promise<void> {
  let last: T | undefined;
  try {
    await eventually(
      async () => {
        last = await read();
        return JSON.stringify(last) === JSON.stringify(expected);
      },
      { message, timeoutMs: PAGE_TIMEOUT_MS, intervalMs: 50 },
    );
  } catch (error) {
    throw new Error(`${message}: expected ${JSON.stringify(expected)}, last saw ${JSON.stringify(last)}`, {
      cause: error,
    });
  }
}

/** A signed-in tab, with what went wrong in it that the assertions do not look at otherwise. */
interface Tab {
  page: Page;
  /** Uncaught exceptions of the page and Content-Security-Policy violations. */
  errors: string[];
  /** Navigations since sign-in: a live page has none. */
  navigations: number;
}

/** One Chromium for the file (each test's user gets a context or a tab of it), launched before anything is made. */
let browser: Browser;
beforeAll(async () => {
  // First: without Chromium the file fails at once, saying how to install it, before it has made anything.
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

/** The CRDs and admission policies, applied once for the file (about 5 s each time). */
let definitions: Promise<void> | undefined;
const definitionsInstalled = (kc: TestNamespace['kc']) => (definitions ??= installCapstanDefinitions(kc));

/**
 * Signs the tab's user out and `token`'s user in, on the fleet, as a user sharing a browser tab does: cheaper than a
 * new tab (Chromium starts a renderer for each, 2-3 s on a busy machine).
 */
async function switchUser(page: Page, token: string): Promise<void> {
  await page.getByRole('link', { name: 'Capstan fleet' }).click();
  await page.locator('#sign-out').click();
  await page.locator('#sign-in').waitFor();
  await page.locator('#token').fill(token);
  await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#fleet').waitFor();
}

/** The fleet of the keyed-rows and filter tests: 30 Clusters, each row's state from its status and spec. */
const FLEET_SIZE = 30;
const fleetName = (i: number) => `c-${String(i).padStart(2, '0')}`;
/** What each of the 30 is: its phase, conditions, paused, labels. */
function fleetMember(i: number): {
  phase?: string;
  conditions?: ReturnType<typeof condition>[];
  paused?: boolean;
  labels: Record<string, string>;
} {
  const labels: Record<string, string> = {
    tier: i % 3 === 0 ? 'gold' : 'silver',
    ...(i % 5 === 0 ? { edge: '' } : {}),
  };
  if (i < 5) return { phase: 'Provisioning', labels };
  if (i < 10)
    return { phase: 'Provisioned', conditions: [condition('Available', 'True', 'Available')], labels };
  if (i === 10) return { phase: 'Failed', labels };
  if (i === 11 || i === 12)
    return { phase: 'Provisioned', conditions: [condition('RollingOut', 'True', 'RollingOut')], labels };
  if (i === 13)
    return { phase: 'Provisioned', conditions: [condition('Remediating', 'True', 'Remediating')], labels };
  if (i === 14 || i === 15) return { paused: true, labels };
  return { labels };
}

describe('the dashboard in a browser', () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let fleetNs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewerToken: string;
  let operatorToken: string;
  let readerToken: string;
  let creatorToken: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [mine, theirs, fleetNs] = await Promise.all([
      createTestNamespace('dash-web'),
      createTestNamespace('dash-web-other'),
      createTestNamespace('dash-web-fleet'),
    ]);
    await definitionsInstalled(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewerToken, operatorToken, readerToken, creatorToken] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', VIEWER_RULES),
      userToken(mine.kc, mine.name, 'operator', OPERATOR_RULES),
      userToken(mine.kc, fleetNs.name, 'reader', VIEWER_RULES),
      userToken(mine.kc, fleetNs.name, 'creator', [...VIEWER_RULES, ...TEMPLATE_WRITER_RULES]),
    ]);
    const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
    await Promise.all([
      clusters.create(cluster(mine.name, 'alpha')),
      clusters.create(cluster(theirs.name, 'hidden')),
      ...Array.from({ length: FLEET_SIZE }, async (_, i) => {
        const member = fleetMember(i);
        const made = cluster(fleetNs.name, fleetName(i));
        made.metadata.labels = member.labels;
        if (member.paused) made.spec = { ...made.spec, paused: true };
        await clusters.create(made);
        if (member.phase || member.conditions)
          await clusters.patchStatus(
            { namespace: fleetNs.name, name: fleetName(i) },
            { ...(member.phase ? { phase: member.phase } : {}), conditions: member.conditions ?? [] },
          );
      }),
    ]);
    service = await startTestDashboard(mine.name, 'dash-web');
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await service?.stop();
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete(), fleetNs?.delete()]);
  });

  /** A fresh browser context (its own sessionStorage) on the page, signed in with `token` as a user would. */
  async function signIn(token: string): Promise<Tab> {
    // Certificate errors are ignored in this context only, which loads nothing but the service on 127.0.0.1: its
    // certificate is the test's own, issued by the CA startService made for this run (service.adminCaPem), which
    // Chromium could only be made to trust through an NSS database of its profile.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    contexts.push(context);
    context.setDefaultTimeout(PAGE_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
    const page = await context.newPage();
    const tab: Tab = { page, errors: [], navigations: 0 };
    page.on('pageerror', (error) => tab.errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        tab.errors.push(message.text());
    });
    await openDashboard(page, service);
    await page.locator('#token').fill(token);
    await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
    page.on('framenavigated', () => tab.navigations++);
    return tab;
  }

  const row = (page: Page, namespace: string, name: string) =>
    page.locator(`#clusters tr[data-cluster="${namespace}/${name}"]`);
  const rowButton = (page: Page, label: 'Pause' | 'Resume') =>
    row(page, mine.name, 'alpha').getByRole('button', { name: label, exact: true });
  const pausedInApi = async () =>
    (await admin.resource<Cluster>(RESOURCES.Cluster).get({ namespace: mine.name, name: 'alpha' })).spec
      ?.paused;

  let viewer: Tab;
  /** The operator's tab, which the reader takes over after them. */
  let operator: Tab;

  it("signs a viewer in with a pasted token and shows them their namespace's Clusters only, live", async () => {
    viewer = await signIn(viewerToken);
    const { page } = viewer;
    await page
      .locator('#who')
      .filter({ hasText: `system:serviceaccount:${mine.name}:viewer` })
      .waitFor();
    // The page marks the form hidden (whether it is shown is the next test's: app.css overrides the attribute).
    expect(await page.locator('#sign-in').getAttribute('hidden')).not.toBeNull();
    await row(page, mine.name, 'alpha').waitFor();
    await page
      .locator('#live')
      .filter({ hasText: /^live$/ })
      .waitFor();
    // The snapshot renders all rows at once: with alpha's row there, another namespace's would be there too.
    const shown = await Promise.all(
      (await page.locator('#clusters tr').all()).map((tr) => tr.getAttribute('data-cluster')),
    );
    expect(shown).toEqual([`${mine.name}/alpha`]);
    expect(await row(page, theirs.name, 'hidden').count()).toBe(0);
    expect(await rowButton(page, 'Pause').count()).toBe(1);
  });

  // app.css's `form#sign-in { display: grid }` once outranked the user agent's `[hidden] { display: none }`.
  it('hides the sign-in form once signed in', async () => {
    expect(await viewer.page.locator('#sign-in').isVisible()).toBe(false);
  });

  it('shows a change made through the API without reloading', async () => {
    const { page } = viewer;
    await admin
      .resource<Cluster>(RESOURCES.Cluster)
      .mergePatch({ namespace: mine.name, name: 'alpha' }, { spec: { paused: true } });
    await rowButton(page, 'Resume').waitFor();
    expect(viewer.navigations).toBe(0);
  });

  it("shows the API server's refusal when a viewer presses Resume", async () => {
    const { page } = viewer;
    await rowButton(page, 'Resume').click();
    const refusal = page.locator('#action-error').filter({ hasText: 'cannot patch resource "clusters"' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(
      `"system:serviceaccount:${mine.name}:viewer" cannot patch resource "clusters"`,
    );
    expect(await pausedInApi()).toBe(true);
    expect(await rowButton(page, 'Resume').count()).toBe(1);
  });

  it('lets an operator, signed in in a fresh context, resume and pause; the viewer sees it live', async () => {
    operator = await signIn(operatorToken);
    const { page } = operator;
    await page
      .locator('#who')
      .filter({ hasText: `system:serviceaccount:${mine.name}:operator` })
      .waitFor();

    await rowButton(page, 'Resume').click();
    await eventually(async () => (await pausedInApi()) === false, {
      message: 'alpha resumed',
      timeoutMs: PAGE_TIMEOUT_MS,
    });
    await rowButton(page, 'Pause').waitFor();
    await rowButton(viewer.page, 'Pause').waitFor();

    await rowButton(page, 'Pause').click();
    await eventually(async () => (await pausedInApi()) === true, {
      message: 'alpha paused',
      timeoutMs: PAGE_TIMEOUT_MS,
    });
    await rowButton(page, 'Resume').waitFor();
    expect(await page.locator('#action-error').textContent()).toBe('');
    expect(operator.navigations).toBe(0);
    expect(operator.errors).toEqual([]);
  });

  const storedToken = (page: Page) =>
    page.evaluate((key) => (globalThis as unknown as PageWindow).sessionStorage.getItem(key), TOKEN_KEY);

  it("signs out: the token leaves the tab's sessionStorage and the sign-in form is back", async () => {
    const { page } = viewer;
    expect(await storedToken(page)).toBe(viewerToken);
    // The token travels as a header only, never as a cookie.
    expect(await page.context().cookies()).toEqual([]);

    await page.locator('#sign-out').click();
    await page.locator('#fleet').waitFor({ state: 'hidden' });
    expect(await page.locator('#sign-in').getAttribute('hidden')).toBeNull();
    expect(await page.locator('#sign-in').isVisible()).toBe(true);
    expect(await storedToken(page)).toBeNull();
    expect(await page.locator('#who').textContent()).toBe('');
  });

  // The next user to sign in in this tab must not be shown these rows before their own snapshot arrives.
  it("leaves none of the signed-out user's rows in the page", async () => {
    expect(await viewer.page.locator('#clusters tr').count()).toBe(0);
  });

  it('stays signed out after a reload', async () => {
    const { page } = viewer;
    await page.reload();
    await page.locator('#sign-in').waitFor();
    expect(await page.locator('#fleet').isHidden()).toBe(true);
    expect(await storedToken(page)).toBeNull();
    expect(viewer.errors).toEqual([]);
  });

  it("serves lit-html's modules from the installed package, from a fixed list, and nothing else of node_modules", async () => {
    const root = litHtmlRoot();
    for (const file of LIT_HTML_FILES) {
      const answer = await rawGet(service, `/dashboard/${LIT_HTML_PREFIX}${file}`);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(answer.headers['content-security-policy']).toContain("script-src 'self'");
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      const installed = readFileSync(join(root, file), 'utf8');
      expect(answer.body).toBe(installed.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n'));
      // What it imports is on the list too: relative paths only, inside the package.
      for (const [, imported] of answer.body.matchAll(/from\s*"([^"]+)"/g))
        expect(LIT_HTML_FILES).toContain(join(file, '..', imported!));
    }
    const refused = [
      `/dashboard/${LIT_HTML_PREFIX}../../package.json`,
      `/dashboard/${LIT_HTML_PREFIX}%2e%2e/%2e%2e/package.json`,
      `/dashboard/${LIT_HTML_PREFIX}..%2f..%2fpackage.json`,
      `/dashboard/${LIT_HTML_PREFIX}package.json`,
      `/dashboard/${LIT_HTML_PREFIX}lit-html.js.map`,
      `/dashboard/${LIT_HTML_PREFIX}development/lit-html.js`,
      `/dashboard/${LIT_HTML_PREFIX}directives/unsafe-html.js`,
      `/dashboard/${LIT_HTML_PREFIX}./lit-html.js`,
      '/dashboard/vendor/yaml/dist/index.js',
      '/dashboard/vendor/lit-html',
      '/dashboard/../package.json',
      '/dashboard/%2e%2e%2fpackage.json',
      '/dashboard/package.json',
      '/dashboard/web.controller.js',
    ];
    for (const path of refused) expect([path, (await rawGet(service, path)).status]).toEqual([path, 404]);
  });

  describe('at 30 Clusters', () => {
    let reader: Tab;
    const shown = (page: Page) =>
      page
        .locator('#clusters tr')
        .evaluateAll((rows) =>
          rows.map((tr) => (tr as unknown as { dataset: { cluster: string } }).dataset.cluster),
        );
    const names = (...indexes: number[]) => indexes.map((i) => `${fleetNs.name}/${fleetName(i)}`);
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    const setFilter = async (page: Page, filter: { text?: string; label?: string; state?: string }) => {
      await page.locator('#filter-text').fill(filter.text ?? '');
      await page.locator('#filter-label').fill(filter.label ?? '');
      await page.locator('#filter-state').selectOption(filter.state ?? '');
    };

    it('redraws only the row of the Cluster that changed: no row replaced, the others untouched', async () => {
      if (operator) {
        reader = operator;
        await switchUser(reader.page, readerToken);
      } else reader = await signIn(readerToken);
      const { page } = reader;
      await until(() => shown(page), names(...range(0, FLEET_SIZE)), 'all 30 rows drawn in order');
      // Counts, from here on, rows the table gained or lost and rows anything inside of changed.
      await page.evaluate(`(() => {
        const seen = (window.__rows = { added: 0, removed: 0, touched: [] });
        new MutationObserver((records) => {
          for (const record of records) {
            for (const node of record.addedNodes) if (node.nodeName === 'TR') seen.added++;
            for (const node of record.removedNodes) if (node.nodeName === 'TR') seen.removed++;
            const element = record.target.nodeType === 1 ? record.target : record.target.parentElement;
            const row = element && element.closest('tr');
            if (row && !seen.touched.includes(row.dataset.cluster)) seen.touched.push(row.dataset.cluster);
          }
        }).observe(document.getElementById('clusters'), { childList: true, subtree: true, characterData: true, attributes: true });
      })()`);
      await admin
        .resource<Cluster>(RESOURCES.Cluster)
        .mergePatch({ namespace: fleetNs.name, name: fleetName(17) }, { spec: { paused: true } });
      await page
        .locator(`#clusters tr[data-cluster="${fleetNs.name}/${fleetName(17)}"]`)
        .getByRole('button', { name: 'Resume', exact: true })
        .waitFor();
      await frames(page);
      expect(await page.evaluate('window.__rows')).toEqual({ added: 0, removed: 0, touched: names(17) });
      expect(await shown(page)).toEqual(names(...range(0, FLEET_SIZE)));
    });

    it('filters by state and text, and keeps the filters through live updates', async () => {
      const { page } = reader;
      await setFilter(page, { state: 'Provisioning' });
      await until(() => shown(page), names(0, 1, 2, 3, 4), 'the Provisioning ones');
      // A Cluster that starts provisioning joins the filtered rows live; the filter stays.
      await admin
        .resource<Cluster>(RESOURCES.Cluster)
        .patchStatus({ namespace: fleetNs.name, name: fleetName(20) }, { phase: 'Provisioning' });
      await until(() => shown(page), names(0, 1, 2, 3, 4, 20), 'c-20 provisioning too');
      expect(await page.locator('#filter-state').inputValue()).toBe('Provisioning');
      await setFilter(page, { state: 'Provisioning', text: 'c-0' });
      await until(() => shown(page), names(0, 1, 2, 3, 4), 'provisioning and c-0*');
      expect(await page.locator('#fleet-count').textContent()).toBe(`5 of ${FLEET_SIZE} clusters`);

      const expected: Record<string, number[]> = {
        Available: range(5, 10),
        Failed: [10],
        RollingOut: [11, 12],
        Remediating: [13],
        // c-17 was paused by the test before.
        Paused: [14, 15, 17],
        Deleting: [],
      };
      for (const [state, indexes] of Object.entries(expected)) {
        await setFilter(page, { state });
        await until(() => shown(page), names(...indexes), `the ${state} ones`);
      }
      await setFilter(page, {});
      await until(() => shown(page), names(...range(0, FLEET_SIZE)), 'all rows again');
      expect(reader.errors).toEqual([]);
    });

    it('filters by label, `key=value` or `key`', async () => {
      const { page } = reader;
      await setFilter(page, { label: 'tier=gold' });
      await until(
        () => shown(page),
        names(...range(0, FLEET_SIZE).filter((i) => i % 3 === 0)),
        'the gold tier',
      );
      await setFilter(page, { label: 'edge' });
      await until(
        () => shown(page),
        names(...range(0, FLEET_SIZE).filter((i) => i % 5 === 0)),
        'labelled edge',
      );
      // c-20 (edge) was set provisioning by the test before.
      await setFilter(page, { label: 'edge', state: 'Provisioning' });
      await until(() => shown(page), names(0, 20), 'edge and provisioning');
      await setFilter(page, { label: 'tier=bronze' });
      await until(() => shown(page), [], 'no bronze tier');
      await setFilter(page, {});
      expect(reader.errors).toEqual([]);
    });

    it("creates a cluster from the form as the user: the API server's refusal for a reader, the new row live for a creator", async () => {
      const { page } = reader;
      const fill = async (name: string) => {
        if (!(await page.locator('#create-cluster').getAttribute('open')))
          await page.locator('#create-cluster summary').click();
        await page.locator('#create-name').fill(name);
        await page.locator('#create-namespace').fill(fleetNs.name);
        await page.locator('#create-flavor').selectOption('topology');
        await page.locator('#create-version').fill('v1.34.4');
        await page.locator('#create-control-plane').fill('1');
        await page.locator('#create-workers').fill('2');
        await page.locator('#create-in-place').check();
        await page.locator('#create-submit').click();
      };
      await fill('made');
      await page
        .locator('#create-error')
        .filter({ hasText: `"system:serviceaccount:${fleetNs.name}:reader" cannot` })
        .waitFor();

      await switchUser(page, creatorToken);
      // Signing out folded and emptied the form.
      expect(await page.locator('#create-name').inputValue()).toBe('');
      await fill('made');
      await page
        .locator('#create-notice')
        .filter({ hasText: `Cluster ${fleetNs.name}/made created` })
        .waitFor();
      await page.locator(`#clusters tr[data-cluster="${fleetNs.name}/made"]`).waitFor();
      const made = await admin
        .resource<Cluster>(RESOURCES.Cluster)
        .get({ namespace: fleetNs.name, name: 'made' });
      expect(made.spec?.topology?.version).toMatch(/^v1\.34\.4/);
      expect(await page.locator('#create-error').textContent()).toBe('');
      expect(reader.errors).toEqual([]);
    });
  });
});

/** Reads beta's whole page: its kinds, the namespace's events, beta-cp-0's infrastructure machine and plan Secret. */
const WATCHER_RULES = [
  ...CLUSTER_PAGE_RULES,
  { apiGroups: ['events.k8s.io', ''], resources: ['events'], verbs: ['list'] },
  { apiGroups: ['infrastructure.capstan.dev'], resources: ['simmachines'], verbs: ['get'] },
  { apiGroups: [''], resources: ['secrets'], resourceNames: ['beta-cp-0-machine-plan'], verbs: ['get'] },
];
/** Reads the page and may scale MachineDeployments. */
const SCALER_RULES = [
  ...CLUSTER_PAGE_RULES,
  { apiGroups: ['cluster.x-k8s.io'], resources: ['machinedeployments'], verbs: ['patch'] },
];
/** Reads the page and may delete Clusters. */
const DELETER_RULES = [
  ...CLUSTER_PAGE_RULES,
  { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: ['delete'] },
];
const VERSION = 'v1.34.4';
const NEXT_VERSION = 'v1.35.4';

describe("a Cluster's page in a browser", () => {
  let ns: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let viewerToken: string;
  let keeperToken: string;
  let watcherToken: string;
  let deleterToken: string;
  let scalerToken: string;
  const contexts: BrowserContext[] = [];
  const KUBECONFIG = 'apiVersion: v1\nkind: Config\ncurrent-context: alpha\n';
  /** When beta's story starts: its steps are placed from here (the event's time is the publisher's to say). */
  const t0 = Date.now() - 120_000;

  const machines = () => admin.resource(RESOURCES.Machine);
  const setMachine = (name: string, status: object) =>
    machines().patchStatus({ namespace: ns.name, name }, status);

  /** Publishes a catalogued event as a provider would, stamped `at` (epoch ms), on the dashboard's own bus. */
  async function publish<N extends EventName>(name: N, data: EventDataInput<N>, at: number): Promise<void> {
    const { publisher, topology } = service.context;
    await publisher.publishEncoded(
      encodeEvent(name, data, { source: '/capstan/test', root: topology.root, time: new Date(at) }),
    );
  }
  let uid = 0;
  const about = (apiGroup: string, kind: string, name: string) => ({
    object: { apiGroup, kind, namespace: ns.name, name, uid: `test-${++uid}` },
    generation: 1,
    resourceVersion: String(uid),
    clusterName: 'beta',
  });
  const CHECKSUM = 'a'.repeat(64);

  beforeAll(async () => {
    ns = await createTestNamespace('dash-page');
    await definitionsInstalled(ns.kc);
    admin = createKubeClient(ns.kc);
    [viewerToken, keeperToken, watcherToken, deleterToken, scalerToken] = await Promise.all([
      userToken(ns.kc, ns.name, 'viewer', CLUSTER_PAGE_RULES),
      userToken(ns.kc, ns.name, 'keeper', kubeconfigReaderRules('alpha')),
      userToken(ns.kc, ns.name, 'watcher', WATCHER_RULES),
      userToken(ns.kc, ns.name, 'deleter', DELETER_RULES),
      userToken(ns.kc, ns.name, 'scaler', SCALER_RULES),
    ]);
    const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
    await Promise.all([
      clusters.create(cluster(ns.name, 'alpha')),
      clusters.create(cluster(ns.name, 'gamma')),
    ]);
    await createKubeconfigSecret(admin, ns.name, 'alpha', KUBECONFIG);

    // beta: a control plane machine up to date and ready, a worker of md-0 at the old version, one provisioning.
    await createClusterTree(admin, ns.name, 'beta');
    await machines().mergePatch(
      { namespace: ns.name, name: 'beta-md-0-a1-w0' },
      { metadata: { labels: { [LABELS.deploymentName]: 'beta-md-0' } } },
    );
    await machines().create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: 'Machine',
      metadata: {
        name: 'beta-md-0-a1-w1',
        namespace: ns.name,
        labels: { [LABELS.clusterName]: 'beta', [LABELS.deploymentName]: 'beta-md-0' },
      },
      spec: {
        clusterName: 'beta',
        version: VERSION,
        bootstrap: { dataSecretName: 'beta-md-0-a1-w1-bootstrap' },
        infrastructureRef: {
          apiGroup: 'infrastructure.capstan.dev',
          kind: 'SimMachine',
          name: 'beta-md-0-a1-w1',
        },
      },
    } as KubernetesObject);
    await Promise.all([
      setMachine('beta-cp-0', {
        phase: 'Running',
        conditions: [
          condition('Ready', 'True', 'Ready'),
          condition('UpToDate', 'True', 'UpToDate'),
          condition('NodeHealthy', 'False', 'NodeNotFound', 'the kubelet stopped posting its status'),
        ],
      }),
      setMachine('beta-md-0-a1-w0', {
        phase: 'Running',
        conditions: [
          condition('Ready', 'True', 'Ready'),
          condition('UpToDate', 'False', 'NotUpToDate', `version ${VERSION}, ${NEXT_VERSION} wanted`),
        ],
      }),
      setMachine('beta-md-0-a1-w1', { phase: 'Provisioning', conditions: [] }),
    ]);
    const simMachine = await admin.resource(RESOURCES.SimMachine).create({
      apiVersion: RESOURCES.SimMachine.apiVersion,
      kind: 'SimMachine',
      metadata: { name: 'beta-cp-0', namespace: ns.name, labels: { [LABELS.clusterName]: 'beta' } },
      spec: {},
    } as KubernetesObject);
    await admin
      .resource(RESOURCES.SimMachine)
      .patchStatus(
        { namespace: ns.name, name: simMachine.metadata!.name! },
        { conditions: [condition('Ready', 'True', 'Provisioned', 'the sim host runs')] },
      );
    // beta-cp-0's plan: failed twice in `install`, its kubelet probe unhealthy.
    await admin.resource(SECRETS).create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'beta-cp-0-machine-plan', namespace: ns.name },
      type: 'capstan.dev/machine-plan',
      data: Object.fromEntries(
        Object.entries({
          plan: Buffer.from('{"instructions":[]}'),
          'plan-state': Buffer.from('failed'),
          'failure-count': Buffer.from('2'),
          'failure-message': Buffer.from('instruction install exited 1'),
          'failed-output': gzipSync(
            JSON.stringify({ install: 'curl: (7) could not connect to the mirror\n' }),
          ),
          'probe-statuses': Buffer.from(JSON.stringify({ kubelet: { healthy: false, failureCount: 3 } })),
        }).map(([key, value]) => [key, value.toString('base64')]),
      ),
    } as never);
    // Kubernetes Events of beta's objects: an older Normal one and a newer Warning.
    const core = ns.kc.makeApiClient(CoreV1Api);
    const event = (
      name: string,
      type: string,
      reason: string,
      message: string,
      kind: string,
      object: string,
      agoMs: number,
    ) =>
      core.createNamespacedEvent({
        namespace: ns.name,
        body: {
          metadata: { name, namespace: ns.name },
          type,
          reason,
          message,
          involvedObject: { kind, name: object, namespace: ns.name },
          firstTimestamp: new Date(Date.now() - agoMs),
          lastTimestamp: new Date(Date.now() - agoMs),
          count: 1,
        },
      });
    await Promise.all([
      event('beta-provisioned', 'Normal', 'Provisioned', 'the server exists', 'Machine', 'beta-cp-0', 60_000),
      event(
        'beta-drain',
        'Warning',
        'DrainFailed',
        'a PodDisruptionBudget keeps the pod',
        'Machine',
        'beta-md-0-a1-w0',
        5_000,
      ),
    ]);
    await treeKindsServed(admin, ns.name);
    service = await startTestDashboard(ns.name, 'dash-page');

    // beta's hand-off so far, as the providers and the core publish it: beta-cp-0's node took a minute.
    await publish(
      'bootstrap.data-secret-created',
      {
        ...about('bootstrap.capstan.dev', 'K3sConfig', 'beta-cp-0'),
        machineName: 'beta-cp-0',
        dataSecretName: 'beta-cp-0-bootstrap',
      },
      t0 + 1_000,
    );
    await publish(
      'infrastructure-machine.provisioned',
      {
        ...about('infrastructure.capstan.dev', 'SimMachine', 'beta-cp-0'),
        machineName: 'beta-cp-0',
        providerID: 'sim://beta-cp-0',
      },
      t0 + 5_000,
    );
    await publish(
      'machine.running',
      {
        ...about('cluster.x-k8s.io', 'Machine', 'beta-cp-0'),
        phase: 'Running',
        controlPlane: true,
        providerID: 'sim://beta-cp-0',
        nodeName: 'beta-cp-0',
      } as never,
      t0 + 65_000,
    );
    await publish(
      'machine-plan.applied',
      {
        ...about('cluster.x-k8s.io', 'Machine', 'beta-cp-0'),
        planSecretName: 'beta-cp-0-machine-plan',
        checksum: CHECKSUM,
        revision: 1,
      },
      t0 + 70_000,
    );
    await publish(
      'bootstrap.data-secret-created',
      {
        ...about('bootstrap.capstan.dev', 'K3sConfig', 'beta-md-0-a1-w0'),
        machineName: 'beta-md-0-a1-w0',
        dataSecretName: 'beta-md-0-a1-w0-bootstrap',
      },
      t0 + 2_000,
    );
    await publish(
      'infrastructure-machine.provisioned',
      {
        ...about('infrastructure.capstan.dev', 'SimMachine', 'beta-md-0-a1-w0'),
        machineName: 'beta-md-0-a1-w0',
        providerID: 'sim://beta-md-0-a1-w0',
      },
      t0 + 8_000,
    );
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await service?.stop();
    await admin?.close();
    await ns?.delete();
  });

  /** A fresh context signed in with `token`, on the fleet (as the first block's signIn, without its bookkeeping). */
  async function signIn(token: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    contexts.push(context);
    context.setDefaultTimeout(PAGE_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        errors.push(message.text());
    });
    await openDashboard(page, service);
    await page.locator('#token').fill(token);
    await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
    return { page, errors };
  }

  /** Opens a Cluster's page from the fleet, as a user does: its name in the fleet table is a link. */
  async function openCluster(page: Page, name = 'alpha'): Promise<void> {
    await page
      .locator(`#clusters tr[data-cluster="${ns.name}/${name}"]`)
      .getByRole('link', { name, exact: true })
      .click();
    await page.locator('#cluster').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/clusters/${ns.name}/${name}`);
  }

  /** The one tab of this block: each test's user signs in where the last one signed out. */
  let tab: { page: Page; errors: string[] };

  /** The note beside a disabled button, saying why. */
  const why = (page: Page, action: string) => page.locator(`#cluster [data-why="${action}"]`);

  it("opens from the fleet, shows the tree's Cluster row, says why the viewer may not download the kubeconfig, and goes back", async () => {
    tab = await signIn(viewerToken);
    const { page, errors } = tab;
    await openCluster(page);
    expect(await page.locator('#fleet').isHidden()).toBe(true);
    const clusterRow = page.locator('#tree tr').filter({ hasText: `Cluster ${ns.name}/alpha` });
    await clusterRow.waitFor();
    expect(await page.locator('#tree tr').count()).toBe(1);

    const download = page.getByRole('button', { name: 'Download kubeconfig' });
    const reason = `you may not get secrets alpha-kubeconfig in namespace ${ns.name}`;
    await why(page, 'kubeconfig').filter({ hasText: reason }).waitFor();
    expect(await download.isDisabled()).toBe(true);
    expect(await download.getAttribute('title')).toBe(reason);

    await page.getByRole('link', { name: 'Back to the fleet' }).click();
    await page.locator('#fleet').waitFor();
    expect(await page.locator('#cluster').isHidden()).toBe(true);
    await page.locator(`#clusters tr[data-cluster="${ns.name}/alpha"]`).waitFor();
    expect(errors).toEqual([]);
  });

  it("keeps a read-only user's buttons disabled, each saying which right they lack", async () => {
    const { page, errors } = tab;
    await openCluster(page);
    const reasons: Record<string, string> = {
      scaleControlPlane: `you may not patch k3scontrolplanes.controlplane.capstan.dev alpha in namespace ${ns.name}`,
      pause: `you may not patch clusters.cluster.x-k8s.io alpha in namespace ${ns.name}`,
      delete: `you may not delete clusters.cluster.x-k8s.io alpha in namespace ${ns.name}`,
      upgrade: 'capstan upgrade cluster',
    };
    for (const [action, reason] of Object.entries(reasons))
      await why(page, action).filter({ hasText: reason }).waitFor();
    for (const name of ['Scale', 'Pause', 'Upgrade', 'Delete'])
      expect([name, await page.getByRole('button', { name, exact: true }).isDisabled()]).toEqual([
        name,
        true,
      ]);
    // Nor can the name be typed to wake Delete.
    expect(await page.locator('#delete-confirm').isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('downloads the kubeconfig for a user who may get its Secret', async () => {
    const { page, errors } = tab;
    await switchUser(page, keeperToken);
    await openCluster(page);
    const button = page.getByRole('button', { name: 'Download kubeconfig' });
    // Enabled once the dashboard said the user may (the button starts enabled and stays so).
    await page.locator('#cluster-title').waitFor();
    expect(await button.isEnabled()).toBe(true);
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    expect(download.suggestedFilename()).toBe('alpha.kubeconfig');
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(KUBECONFIG);
    expect(await page.locator('#cluster-error').textContent()).toBe('');
    expect(errors).toEqual([]);
  });

  it('wakes Delete only once the name is typed for a user who may delete; the page then says the Cluster is gone', async () => {
    const { page, errors } = tab;
    await switchUser(page, deleterToken);
    await openCluster(page, 'gamma');
    const remove = page.getByRole('button', { name: 'Delete', exact: true });
    await page
      .locator('#cluster-live')
      .filter({ hasText: /^live$/ })
      .waitFor();
    expect(await remove.isDisabled()).toBe(true);
    await page.locator('#delete-confirm').fill('gamm');
    expect(await remove.isDisabled()).toBe(true);
    await page.locator('#delete-confirm').fill('gamma');
    await eventually(async () => remove.isEnabled(), { message: 'Delete awake', timeoutMs: PAGE_TIMEOUT_MS });
    await remove.click();
    await page
      .locator('#cluster-notice')
      .filter({ hasText: `Cluster ${ns.name}/gamma is being deleted` })
      .waitFor();
    // The cluster's stream says it is gone.
    await page.locator('#cluster-deleted').waitFor();
    expect(
      await admin.resource<Cluster>(RESOURCES.Cluster).getIfExists({ namespace: ns.name, name: 'gamma' }),
    ).toBeUndefined();
    expect(errors).toEqual([]);
  });

  describe("beta's page", () => {
    /** Cluster streams the tab opened and those that ended (aborted by the page), by URL. */
    const streams = { opened: [] as string[], ended: [] as string[] };
    const tile = (name: string) => tab.page.locator(`#rollout .tile[data-machine="${name}"]`);

    it('shows the machines and a rollout tile per machine, grouped by owner and coloured by state', async () => {
      const { page } = tab;
      await switchUser(page, watcherToken);
      const isStream = (url: string) => url.includes(`/dashboard/api/clusters/${ns.name}/beta/stream`);
      page.on('request', (request) => isStream(request.url()) && streams.opened.push(request.url()));
      page.on('requestfailed', (request) => isStream(request.url()) && streams.ended.push(request.url()));
      page.on('requestfinished', (request) => isStream(request.url()) && streams.ended.push(request.url()));
      await openCluster(page, 'beta');
      await page
        .locator('#cluster-live')
        .filter({ hasText: /^live$/ })
        .waitFor();

      const machineRows = page.locator('#machines tr');
      await until(
        () => machineRows.evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-machine'))),
        ['beta-cp-0', 'beta-md-0-a1-w0', 'beta-md-0-a1-w1'],
        'the three machines',
      );
      const cpRow = page.locator('#machines tr[data-machine="beta-cp-0"]');
      expect(await cpRow.textContent()).toContain('control plane');
      expect(await cpRow.textContent()).toContain('True (Ready)');

      const groups = await page
        .locator('#rollout .rollout-group')
        .evaluateAll((divs) =>
          divs.map((div) => [
            div.getAttribute('data-group'),
            [...div.querySelectorAll('.tile')].map(
              (t) => `${t.getAttribute('data-machine')}:${t.getAttribute('data-state')}`,
            ),
          ]),
        );
      expect(groups).toEqual([
        ['cp', ['beta-cp-0:ready']],
        ['md/beta-md-0', ['beta-md-0-a1-w0:old', 'beta-md-0-a1-w1:provisioning']],
      ]);
      expect(await tile('beta-md-0-a1-w0').textContent()).toContain(VERSION);
    });

    it('follows an upgrade machine by machine, live: updating in place, then up to date at the new version', async () => {
      const state = (name: string) => tile(name).getAttribute('data-state');
      await setMachine('beta-md-0-a1-w0', {
        conditions: [
          condition('Ready', 'True', 'Ready'),
          condition('UpToDate', 'False', 'NotUpToDate', 'updating in place'),
          condition('Updating', 'True', 'InPlaceUpdating', `to ${NEXT_VERSION}`, 0),
        ],
      });
      await until(() => state('beta-md-0-a1-w0'), 'updating', 'w0 updating in place');
      await machines().mergePatch(
        { namespace: ns.name, name: 'beta-md-0-a1-w0' },
        { spec: { version: NEXT_VERSION } },
      );
      await setMachine('beta-md-0-a1-w0', {
        conditions: [
          condition('Ready', 'True', 'Ready'),
          condition('UpToDate', 'True', 'UpToDate', '', 0),
          condition('Updating', 'False', 'NotUpdating', '', 0),
        ],
      });
      await until(() => state('beta-md-0-a1-w0'), 'ready', 'w0 up to date');
      expect(await tile('beta-md-0-a1-w0').textContent()).toContain(NEXT_VERSION);
      expect(await state('beta-md-0-a1-w1')).toBe('provisioning');
      expect(tab.errors).toEqual([]);
    });

    it("draws the hand-off timeline on one time axis, each step's duration labelled, the slow one marked; new steps live", async () => {
      const { page } = tab;
      const step = (machine: string, name: string) =>
        page.locator(`#timeline g.step[data-machine="${machine}"][data-step="${name}"]`);
      await until(
        () =>
          page
            .locator('#timeline g.step')
            .evaluateAll((gs) =>
              gs.map((g) => `${g.getAttribute('data-machine')}/${g.getAttribute('data-step')}`),
            ),
        [
          'beta-cp-0/bootstrap-data',
          'beta-cp-0/infrastructure-ready',
          'beta-cp-0/node-ready',
          'beta-cp-0/plan-applied',
          'beta-md-0-a1-w0/bootstrap-data',
          'beta-md-0-a1-w0/infrastructure-ready',
        ],
        'the six steps, by machine, in time order',
      );
      expect(await step('beta-cp-0', 'node-ready').getAttribute('data-took')).toBe('60000');
      expect(await step('beta-cp-0', 'node-ready').getAttribute('class')).toContain('slowest');
      expect(await step('beta-cp-0', 'node-ready').locator('text.took').textContent()).toBe('1m slowest');
      expect(await step('beta-cp-0', 'infrastructure-ready').locator('text.took').textContent()).toBe('4s');
      expect(await step('beta-cp-0', 'plan-applied').getAttribute('class')).not.toContain('slow');

      // A step published while the page is open arrives on the cluster's stream (its consumer may start a moment
      // after the stream: published again until it shows).
      await eventually(
        async () => {
          await publish(
            'machine-plan.probes-healthy',
            {
              ...about('cluster.x-k8s.io', 'Machine', 'beta-cp-0'),
              planSecretName: 'beta-cp-0-machine-plan',
              checksum: CHECKSUM,
              revision: 1,
              probes: ['kubelet'],
            },
            t0 + 75_000,
          );
          return step('beta-cp-0', 'probes-healthy')
            .first()
            .waitFor({ timeout: 1_500 })
            .then(
              () => true,
              () => false,
            );
        },
        { message: 'the live step drawn', timeoutMs: PAGE_TIMEOUT_MS },
      );
      expect(await step('beta-cp-0', 'probes-healthy').first().locator('text.took').textContent()).toBe('5s');
    });

    it('lists the Events of its objects, newest first', async () => {
      const { page } = tab;
      await until(
        () =>
          page.locator('#events tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-reason'))),
        ['DrainFailed', 'Provisioned'],
        'the two events, newest first',
      );
      const warning = page.locator('#events tr[data-reason="DrainFailed"]');
      expect(await warning.getAttribute('class')).toBe('warning');
      expect(await warning.textContent()).toContain('a PodDisruptionBudget keeps the pod');
      expect(await warning.textContent()).toContain('Machine beta-md-0-a1-w0');
    });

    it("opens a machine's page from its tile: conditions, infrastructure, why no node, the plan's state, probes and output", async () => {
      const { page } = tab;
      await tile('beta-cp-0').click();
      await page.locator('#machine').waitFor();
      expect(new URL(page.url()).hash).toBe(`#/machines/${ns.name}/beta-cp-0`);
      expect(await page.locator('#cluster').isHidden()).toBe(true);
      const nodeHealthy = page.locator('#machine-conditions tr[data-condition="NodeHealthy"]');
      await nodeHealthy.waitFor();
      expect(await nodeHealthy.textContent()).toContain('the kubelet stopped posting its status');
      expect(await nodeHealthy.textContent()).toContain('NodeNotFound');
      expect(
        await page.locator('#infrastructure-conditions tr[data-condition="Ready"]').textContent(),
      ).toContain('Provisioned');
      expect(await page.locator('#node-unavailable').textContent()).toContain('the Machine has no Node yet');
      expect(await page.locator('#plan-state').textContent()).toBe('failed');
      expect(await page.locator('#plan-failure').textContent()).toBe('instruction install exited 1');
      expect(await page.locator('#probes tr[data-probe="kubelet"]').textContent()).toContain('no');
      expect(await page.locator('#plan-output').textContent()).toContain('could not connect to the mirror');

      await page.locator('#back-to-cluster').click();
      await page.locator('#cluster').waitFor();
      await tile('beta-cp-0').waitFor();
      expect(tab.errors).toEqual([]);
    });

    it("scales a MachineDeployment from its rollout group, for a user who may (a viewer's Scale says why not)", async () => {
      const { page } = tab;
      const group = page.locator('#rollout .rollout-group[data-group="md/beta-md-0"]');
      await why(page, 'scaleWorkers')
        .filter({ hasText: `you may not patch machinedeployments.cluster.x-k8s.io in namespace ${ns.name}` })
        .waitFor();
      expect(await group.getByRole('button', { name: 'Scale beta-md-0' }).isDisabled()).toBe(true);

      await switchUser(page, scalerToken);
      await openCluster(page, 'beta');
      const scale = group.getByRole('button', { name: 'Scale beta-md-0' });
      await tile('beta-md-0-a1-w1').waitFor();
      await group.getByRole('spinbutton').fill('3');
      await scale.click();
      await page
        .locator('#cluster-notice')
        .filter({ hasText: 'MachineDeployment beta-md-0 scaled to 3' })
        .waitFor();
      const deployment = await admin
        .resource<KubernetesObject & { spec: { replicas: number } }>(RESOURCES.MachineDeployment)
        .get({ namespace: ns.name, name: 'beta-md-0' });
      expect(deployment.spec.replicas).toBe(3);
      expect(tab.errors).toEqual([]);
    });

    it("closes the cluster's stream when the page is left", async () => {
      const { page } = tab;
      await page.getByRole('link', { name: 'Back to the fleet' }).click();
      await page.locator('#fleet').waitFor();
      await until(
        async () => streams.ended.length,
        streams.opened.length,
        'every cluster stream the tab opened ended',
      );
      expect(streams.opened.length).toBeGreaterThanOrEqual(2);
      expect(tab.errors).toEqual([]);
    });
  });
});
