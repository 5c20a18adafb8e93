import type { Browser, BrowserContext, Page } from 'playwright-core';
import { RESOURCES, type Cluster } from '@capstan/api';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import type { RunningService } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  installCapstanDefinitions,
  launchBrowser,
  type TestNamespace,
} from '@capstan/testing';
import {
  CLUSTER_PAGE_RULES,
  cluster,
  createKubeconfigSecret,
  kubeconfigReaderRules,
  OPERATOR_RULES,
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

/** A signed-in tab, with what went wrong in it that the assertions do not look at otherwise. */
interface Tab {
  page: Page;
  /** Uncaught exceptions of the page and Content-Security-Policy violations. */
  errors: string[];
  /** Navigations since sign-in: a live page has none. */
  navigations: number;
}

describe('the dashboard in a browser', () => {
  let mine: TestNamespace;
  let theirs: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let browser: Browser;
  let viewerToken: string;
  let operatorToken: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // First: without Chromium the file fails at once, saying how to install it, before it has made anything.
    browser = await launchBrowser();
    [mine, theirs] = await Promise.all([
      createTestNamespace('dash-web'),
      createTestNamespace('dash-web-other'),
    ]);
    await installCapstanDefinitions(mine.kc);
    admin = createKubeClient(mine.kc);
    [viewerToken, operatorToken] = await Promise.all([
      userToken(mine.kc, mine.name, 'viewer', VIEWER_RULES),
      userToken(mine.kc, mine.name, 'operator', OPERATOR_RULES),
    ]);
    const clusters = admin.resource<Cluster>(RESOURCES.Cluster);
    await Promise.all([
      clusters.create(cluster(mine.name, 'alpha')),
      clusters.create(cluster(theirs.name, 'hidden')),
    ]);
    service = await startTestDashboard(mine.name, 'dash-web');
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await service?.stop();
    await admin?.close();
    await Promise.all([mine?.delete(), theirs?.delete()]);
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
    await page.goto(new URL('/dashboard', service.adminUrl).href);
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
    const operator = await signIn(operatorToken);
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
});

describe("a Cluster's page in a browser", () => {
  let ns: TestNamespace;
  let service: RunningService;
  let admin: KubeClient;
  let browser: Browser;
  let viewerToken: string;
  let keeperToken: string;
  const contexts: BrowserContext[] = [];
  const KUBECONFIG = 'apiVersion: v1\nkind: Config\ncurrent-context: alpha\n';

  beforeAll(async () => {
    browser = await launchBrowser();
    ns = await createTestNamespace('dash-page');
    await installCapstanDefinitions(ns.kc);
    admin = createKubeClient(ns.kc);
    [viewerToken, keeperToken] = await Promise.all([
      userToken(ns.kc, ns.name, 'viewer', CLUSTER_PAGE_RULES),
      userToken(ns.kc, ns.name, 'keeper', kubeconfigReaderRules('alpha')),
    ]);
    await admin.resource<Cluster>(RESOURCES.Cluster).create(cluster(ns.name, 'alpha'));
    await createKubeconfigSecret(admin, ns.name, 'alpha', KUBECONFIG);
    await treeKindsServed(admin, ns.name);
    service = await startTestDashboard(ns.name, 'dash-page');
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
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
    await page.goto(new URL('/dashboard', service.adminUrl).href);
    await page.locator('#token').fill(token);
    await page.locator('#sign-in').getByRole('button', { name: 'Sign in' }).click();
    return { page, errors };
  }

  /** Opens alpha's page from the fleet, as a user does: its name in the fleet table is a link. */
  async function openAlpha(page: Page): Promise<void> {
    await page
      .locator(`#clusters tr[data-cluster="${ns.name}/alpha"]`)
      .getByRole('link', { name: 'alpha', exact: true })
      .click();
    await page.locator('#cluster').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/clusters/${ns.name}/alpha`);
  }

  it("opens from the fleet, shows the tree's Cluster row and the API server's refusal of the kubeconfig, and goes back", async () => {
    const { page, errors } = await signIn(viewerToken);
    await openAlpha(page);
    expect(await page.locator('#fleet').isHidden()).toBe(true);
    const clusterRow = page.locator('#tree tr').filter({ hasText: `Cluster ${ns.name}/alpha` });
    await clusterRow.waitFor();
    expect(await page.locator('#tree tr').count()).toBe(1);

    await page.getByRole('button', { name: 'Download kubeconfig' }).click();
    const refusal = page.locator('#cluster-error').filter({ hasText: 'cannot get resource "secrets"' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(
      `"system:serviceaccount:${ns.name}:viewer" cannot get resource`,
    );

    await page.getByRole('link', { name: 'Back to the fleet' }).click();
    await page.locator('#fleet').waitFor();
    expect(await page.locator('#cluster').isHidden()).toBe(true);
    await page.locator(`#clusters tr[data-cluster="${ns.name}/alpha"]`).waitFor();
    expect(errors).toEqual([]);
  });

  it('downloads the kubeconfig for a user who may get its Secret', async () => {
    const { page, errors } = await signIn(keeperToken);
    await openAlpha(page);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download kubeconfig' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('alpha.kubeconfig');
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(KUBECONFIG);
    expect(await page.locator('#cluster-error').textContent()).toBe('');
    expect(errors).toEqual([]);
  });

  it("wakes Delete only once the Cluster's name is typed, and shows the API server's refusal to a user who may not", async () => {
    const { page, errors } = await signIn(viewerToken);
    await openAlpha(page);
    const remove = page.getByRole('button', { name: 'Delete' });
    expect(await remove.isDisabled()).toBe(true);
    await page.locator('#delete-confirm').fill('alph');
    expect(await remove.isDisabled()).toBe(true);
    await page.locator('#delete-confirm').fill('alpha');
    expect(await remove.isEnabled()).toBe(true);
    await remove.click();
    await page.locator('#cluster-error').filter({ hasText: 'cannot delete resource "clusters"' }).waitFor();
    expect(
      await admin.resource<Cluster>(RESOURCES.Cluster).getIfExists({ namespace: ns.name, name: 'alpha' }),
    ).toBeDefined();
    expect(errors).toEqual([]);
  });
});
