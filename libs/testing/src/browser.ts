import { chromium, type Browser } from 'playwright-core';
import { executable } from './binaries.js';
import { TestEnvironmentError } from './errors.js';

/** Debian's chromium package's launcher: the only browser the tests use (playwright-core downloads none). */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

export interface LaunchBrowserOptions {
  /** The Chromium to run (default Debian's, {@link SYSTEM_CHROMIUM}). */
  executablePath?: string;
  /** How long Chromium may take to start and answer (default 30 s; playwright's own default is 3 minutes). */
  timeoutMs?: number;
}

/**
 * A headless Chromium for browser tests, driven by playwright-core. The caller closes it (`browser.close()`), and
 * should bound its waits with `context.setDefaultTimeout`.
 */
export async function launchBrowser(options: LaunchBrowserOptions = {}): Promise<Browser> {
  const executablePath = options.executablePath ?? SYSTEM_CHROMIUM;
  if (!executable(executablePath)) {
    throw new TestEnvironmentError(
      `the browser tests need Chromium at ${executablePath}: run \`bash scripts/setup.sh --for-tests\` ` +
        "(it installs Debian's chromium package) or apt-get install chromium",
      { executablePath },
    );
  }
  return chromium.launch({
    executablePath,
    headless: true,
    timeout: options.timeoutMs ?? 30_000,
    // Chromium's own sandbox needs user namespaces (or a setuid helper), which a container run as root has not: the
    // container is the sandbox here, and the browser only ever loads the test's own pages.
    args: ['--no-sandbox'],
  });
}
