import type { CoreServiceOptions } from './core-service.js';
import { parseWebhookFlags, WebhookFlagError } from './webhook/webhook-flags.js';

// `--watch-external-providers` belongs to the core alone, so it is taken out before the shared service flags are parsed.
const WATCH_FLAG = '--watch-external-providers';

/**
 * The core's own flags taken off a command line (`--watch-external-providers`, the webhook's): its options and the
 * rest for the shared service parser. A bad flag is reported on stderr with exit code 2, and undefined returned.
 */
export function coreCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { options: CoreServiceOptions; rest: string[] } | undefined {
  const watchExternalProviders = argv.includes(WATCH_FLAG) || env['WATCH_EXTERNAL_PROVIDERS'] === 'true';
  try {
    const parsed = parseWebhookFlags(
      argv.filter((arg) => arg !== WATCH_FLAG),
      env,
    );
    return { options: { watchExternalProviders, webhook: parsed.webhook }, rest: parsed.rest };
  } catch (error) {
    if (!(error instanceof WebhookFlagError)) throw error;
    process.stderr.write(`capstan-core: ${error.message}\n`);
    process.exitCode = 2;
    return undefined;
  }
}
