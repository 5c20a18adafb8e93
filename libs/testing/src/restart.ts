import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { TestEnvironmentError } from './errors.js';
import type { LocalEnvironment } from './local-environment.js';
import { startEnvironmentProcess, stopEnvironmentProcess } from './environment-process.js';
import { waitUntilReady } from './processes.js';

export interface RestartApiServerOptions {
  /** Flags for the new process; `--name=value` replaces the flag of the same name (e.g. `--watch-cache=false`). */
  flags?: string[];
  /** Runs while the API server is down. */
  whileStopped?: () => Promise<void>;
  readyTimeoutMs?: number;
}

/**
 * Stops the kube-apiserver of a private local environment and starts it again on the same port, with the
 * same certificates and etcd (so clients keep their kubeconfig). `env.stop()` stops the new process.
 */
export async function restartApiServer(
  env: LocalEnvironment,
  options: RestartApiServerOptions = {},
): Promise<void> {
  const stopped = await stopEnvironmentProcess(env, 'kube-apiserver');
  await options.whileStopped?.();

  const flags = new Map(stopped.args.map((a) => [a.split('=')[0]!, a]));
  for (const flag of options.flags ?? []) flags.set(flag.split('=')[0]!, flag);
  const newArgs = [...flags.values()];
  const certDir = newArgs.find((a) => a.startsWith('--cert-dir='))?.slice('--cert-dir='.length);
  if (!certDir) throw new TestEnvironmentError('kube-apiserver was started without --cert-dir');
  const ca = readFileSync(join(certDir, 'apiserver.crt'), 'utf8');

  const proc = startEnvironmentProcess(env, stopped, newArgs);
  await waitUntilReady(
    proc,
    'kube-apiserver',
    () => readyz(env.apiServerUrl, env.adminToken, ca),
    options.readyTimeoutMs ?? 90_000,
  );
}

function readyz(url: string, token: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      `${url}/readyz`,
      { headers: { authorization: `Bearer ${token}` }, ca, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
