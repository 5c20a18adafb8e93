import 'reflect-metadata';
import { runServiceMain } from '@capstan/provider-kit';
import { createCoreService } from './core-service.js';
import { parseWebhookFlags, WebhookFlagError } from './webhook/webhook-flags.js';

// `--watch-external-providers` belongs to the core alone, so it is taken out before the shared service flags are parsed.
const WATCH_FLAG = '--watch-external-providers';
const argv = process.argv.slice(2);
const watchExternalProviders =
  argv.includes(WATCH_FLAG) || process.env['WATCH_EXTERNAL_PROVIDERS'] === 'true';

let parsed: ReturnType<typeof parseWebhookFlags> | undefined;
try {
  parsed = parseWebhookFlags(argv.filter((arg) => arg !== WATCH_FLAG));
} catch (error) {
  if (!(error instanceof WebhookFlagError)) throw error;
  process.stderr.write(`capstan-core: ${error.message}\n`);
  process.exitCode = 2;
}
if (parsed) await runServiceMain(createCoreService({ watchExternalProviders, webhook: parsed.webhook }), parsed.rest);
