import 'reflect-metadata';
import { runServiceMain } from '@capstan/provider-kit';
import { createCoreService } from './core-service.js';

// `--watch-external-providers` belongs to the core alone, so it is taken out before the shared service flags are parsed.
const WATCH_FLAG = '--watch-external-providers';
const argv = process.argv.slice(2);
const watchExternalProviders =
  argv.includes(WATCH_FLAG) || process.env['WATCH_EXTERNAL_PROVIDERS'] === 'true';

await runServiceMain(
  createCoreService({ watchExternalProviders }),
  argv.filter((arg) => arg !== WATCH_FLAG),
);
