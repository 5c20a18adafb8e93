import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './repo.js';

/** What a run of the built CLI gave: its exit code and both streams. */
export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The built `capstan` as a user runs it (apps/cli/bin/capstan.js, this Node), without the caller's KUBECONFIG: each
 * test names the kubeconfig it means.
 */
export function runBuiltCli(...args: string[]): Promise<CliRun> {
  const env = { ...process.env };
  delete env['KUBECONFIG'];
  const child = spawn(process.execPath, [join(repoRoot(), 'apps/cli/bin/capstan.js'), ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
