import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeconfigError } from './errors/explain-error.js';
import { recordKubeTarget } from './errors/failure-context.js';
import { describeOrigin, readLocalEnv, type LocateOptions, type Origin } from './runtime/local-env.js';

export interface KubeconfigOptions {
  kubeconfig?: string;
  kubeconfigContext?: string;
}

/** Where the management cluster's kubeconfig comes from. */
export interface KubeconfigSource {
  /** The files, merged in order ($KUBECONFIG may list several); empty for the in-cluster service account. */
  files: string[];
  origin: Origin;
}

export interface ResolveKubeconfigOptions extends LocateOptions {
  home?: string;
  serviceAccountTokenFile?: string;
}

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * --kubeconfig, else $KUBECONFIG, else the local environment's (.capstan/env.json from `npm run env:up`),
 * else ~/.kube/config, else in-cluster. Nothing at all is an error here: the client library would fall back
 * to http://localhost:8080 and fail later with a message about TLS.
 */
export function resolveKubeconfigSource(options: KubeconfigOptions, resolve: ResolveKubeconfigOptions = {}): KubeconfigSource {
  const env = resolve.env ?? process.env;
  if (options.kubeconfig) return { files: [options.kubeconfig], origin: { kind: 'flag', flag: '--kubeconfig' } };
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length > 0) return { files: fromEnv, origin: { kind: 'env', variable: 'KUBECONFIG' } };
  const local = readLocalEnv(resolve);
  if (local?.kubeconfig) return { files: [local.kubeconfig], origin: { kind: 'env-file', file: local.file } };
  const home = join(resolve.home ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return { files: [home], origin: { kind: 'default' } };
  if (env['KUBERNETES_SERVICE_HOST'] && existsSync(resolve.serviceAccountTokenFile ?? SERVICE_ACCOUNT_TOKEN)) {
    return { files: [], origin: { kind: 'default' } };
  }
  throw new KubeconfigError(
    `no kubeconfig for the management cluster: no --kubeconfig, KUBECONFIG is not set, ${home} does not exist and there is no .capstan/env.json. ` +
      'Pass --kubeconfig FILE or set KUBECONFIG, or start a local management cluster with `npm run env:up`',
  );
}

function fixFor(origin: Origin): string {
  switch (origin.kind) {
    case 'flag':
      return 'pass --kubeconfig a kubeconfig file that exists';
    case 'env':
      return 'point KUBECONFIG at a kubeconfig file that exists, or unset it';
    case 'env-file':
      return `the local environment in ${origin.file} is gone: run \`npm run env:down && npm run env:up\``;
    case 'default':
      return 'pass --kubeconfig FILE or set KUBECONFIG';
  }
}

function loadFile(kc: KubeConfig, file: string, origin: Origin): void {
  try {
    accessSync(file, constants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    const what = code === 'ENOENT' ? `kubeconfig ${file} does not exist` : `cannot read kubeconfig ${file} (${code})`;
    throw new KubeconfigError(`${what} (${describeOrigin(origin)}); ${fixFor(origin)}`, file);
  }
  try {
    kc.loadFromFile(file);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new KubeconfigError(`kubeconfig ${file} (${describeOrigin(origin)}) is not a valid kubeconfig: ${reason}`, file);
  }
}

/** The management cluster's client config; every command's API calls go through it. */
export function loadKubeConfig(options: KubeconfigOptions, resolve: ResolveKubeconfigOptions = {}): KubeConfig {
  const source = resolveKubeconfigSource(options, resolve);
  const kc = new KubeConfig();
  if (source.files.length === 0) kc.loadFromCluster();
  source.files.forEach((file, index) => {
    if (index === 0) return loadFile(kc, file, source.origin);
    const next = new KubeConfig();
    loadFile(next, file, source.origin);
    // As kubectl: the first file that sets current-context wins.
    kc.mergeConfig(next, Boolean(kc.currentContext));
  });
  const label = source.files.length === 0 ? 'in-cluster' : source.files.join(delimiter);
  const contexts = kc.getContexts().map((c) => c.name);
  if (options.kubeconfigContext) {
    if (!contexts.includes(options.kubeconfigContext)) {
      throw new KubeconfigError(
        `context "${options.kubeconfigContext}" is not in kubeconfig ${label} (${describeOrigin(source.origin)}); it has: ${contexts.join(', ') || 'none'}`,
        label,
      );
    }
    kc.setCurrentContext(options.kubeconfigContext);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubeconfigError(
      `kubeconfig ${label} (${describeOrigin(source.origin)}) has no cluster for its current context "${kc.getCurrentContext() ?? ''}"; ` +
        `pass --kubeconfig-context with one of: ${contexts.join(', ') || 'none (the file has no contexts)'}`,
      label,
    );
  }
  recordKubeTarget({ server: cluster.server, kubeconfig: label, origin: source.origin });
  return kc;
}

/** A kubeconfig file to hand to other processes (init --local's services). */
export function kubeconfigFile(source: KubeconfigSource): string {
  if (source.files.length === 0) {
    throw new KubeconfigError('this needs a kubeconfig file (the in-cluster service account is not one): pass --kubeconfig or set KUBECONFIG');
  }
  return source.files[0]!;
}

export function namespaceOf(kc: KubeConfig, explicit?: string): string {
  return explicit ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
