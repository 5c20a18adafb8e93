// `.capstan/env.json`, written by `npm run env:up` (libs/testing/src/cli.ts) and removed by `env:down`: the
// local management cluster's kubeconfig and NATS URL. The CLI uses them when nothing more explicit is given,
// so `capstan events` talks to that NATS rather than whatever else listens on 4222.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from '../output.js';

export const ENV_FILE = join('.capstan', 'env.json');
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/** The fields of env.json the CLI reads. */
export interface LocalEnv {
  file: string;
  kubeconfig?: string;
  natsUrl?: string;
  /** The environment's etcd, which the sim's workload API servers share. */
  etcdUrl?: string;
  /** Where a machine-provider run against this environment keeps its state (`env:down` stops what it records). */
  simStateDir?: string;
  /** The CA of the client certificate its API server presents to admission webhooks. */
  webhookClientCaPath?: string;
}

export interface LocateOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where the CLI runs from; the repository root holding `.capstan/` is above it. */
  cliDir?: string;
}

/** Where a setting came from, for error messages that say what to change. */
export type Origin = { kind: 'flag'; flag: string } | { kind: 'env'; variable: string } | { kind: 'env-file'; file: string } | { kind: 'default' };

export function describeOrigin(origin: Origin): string {
  switch (origin.kind) {
    case 'flag':
      return `from ${origin.flag}`;
    case 'env':
      return `from $${origin.variable}`;
    case 'env-file':
      return `from ${origin.file}`;
    case 'default':
      return 'the default';
  }
}

function nearestUp(start: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const candidate = join(dir, ENV_FILE);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The env file: `$CAPSTAN_ENV_FILE` when set (empty turns the lookup off), else the nearest
 * `.capstan/env.json` above the current directory, else the one in the repository the CLI runs from.
 */
export function locateEnvFile(options: LocateOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const explicit = env['CAPSTAN_ENV_FILE'];
  if (explicit !== undefined) return explicit !== '' && existsSync(explicit) ? resolve(explicit) : undefined;
  return nearestUp(options.cwd ?? process.cwd()) ?? nearestUp(options.cliDir ?? dirname(fileURLToPath(import.meta.url)));
}

export function readLocalEnv(options: LocateOptions = {}): LocalEnv | undefined {
  const file = locateEnvFile(options);
  if (!file) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CliError(
      `cannot read ${file} (${error instanceof Error ? error.message : String(error)}); delete it or restart the local environment: npm run env:down && npm run env:up`,
    );
  }
  const fields = (parsed ?? {}) as Record<string, unknown>;
  const text = (key: string) => (typeof fields[key] === 'string' && fields[key] !== '' ? fields[key] : undefined);
  const fromRoot = (path: string | undefined) => (path ? resolve(dirname(file), '..', path) : undefined);
  return {
    file,
    kubeconfig: fromRoot(text('kubeconfig')),
    natsUrl: text('natsUrl'),
    etcdUrl: text('etcdUrl'),
    simStateDir: fromRoot(text('simStateDir')),
    webhookClientCaPath: fromRoot(text('webhookClientCaPath')),
  };
}

export interface NatsTarget {
  url: string;
  origin: Origin;
}

/** --nats-url, else $NATS_URL, else env.json's natsUrl, else nats://127.0.0.1:4222. */
export function resolveNatsTarget(flag: string | undefined, options: LocateOptions = {}): NatsTarget {
  const env = options.env ?? process.env;
  if (flag) return { url: flag, origin: { kind: 'flag', flag: '--nats-url' } };
  if (env['NATS_URL']) return { url: env['NATS_URL'], origin: { kind: 'env', variable: 'NATS_URL' } };
  const local = readLocalEnv(options);
  if (local?.natsUrl) return { url: local.natsUrl, origin: { kind: 'env-file', file: local.file } };
  return { url: DEFAULT_NATS_URL, origin: { kind: 'default' } };
}

/** For --nats-url's help: where the URL comes from without it. */
export const NATS_URL_DEFAULTS = `(default: $NATS_URL, else the natsUrl in ${ENV_FILE} from \`npm run env:up\`, else ${DEFAULT_NATS_URL})`;
