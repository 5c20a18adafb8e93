import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { TestEnvironmentError } from './errors.js';
import type { LocalEnvironment } from './local-environment.js';
import { startProcess, stopPid, waitUntilReady } from './processes.js';
import { forgetProcesses, recordProcesses } from './reaper.js';

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
  const entry = env.processes.find((p) => p.name === 'kube-apiserver');
  if (!entry) throw new TestEnvironmentError('the environment has no kube-apiserver process');
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch (err) {
    throw new TestEnvironmentError(`cannot read the command line of kube-apiserver (pid ${entry.pid})`, {
      cause: String(err),
    });
  }
  const [command, ...args] = argv;
  if (!command) throw new TestEnvironmentError(`kube-apiserver (pid ${entry.pid}) has no command line`);
  await stopPid(entry.pid);
  forgetProcesses([entry.pid]);
  await options.whileStopped?.();

  const flags = new Map(args.map((a) => [a.split('=')[0]!, a]));
  for (const flag of options.flags ?? []) flags.set(flag.split('=')[0]!, flag);
  const newArgs = [...flags.values()];
  const certDir = newArgs.find((a) => a.startsWith('--cert-dir='))?.slice('--cert-dir='.length);
  if (!certDir) throw new TestEnvironmentError('kube-apiserver was started without --cert-dir');
  const ca = readFileSync(join(certDir, 'apiserver.crt'), 'utf8');

  const proc = startProcess({ name: 'kube-apiserver', command, args: newArgs, logFile: entry.logFile });
  recordProcesses([proc.pid], false);
  entry.pid = proc.pid;
  const previousStop = env.stop;
  env.stop = async () => {
    await stopPid(proc.pid);
    forgetProcesses([proc.pid]);
    await previousStop();
  };
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
