import { spawn } from 'node:child_process';
import { CONFINED_PATH, confinedInvocation, confinementAvailable } from './confinement.js';
import type { HostRoot } from './host-root.js';

/** Why an instruction of a confined machine did not run on a host that cannot confine it. */
export const CONFINEMENT_UNAVAILABLE = 'ENOSYS (this host cannot confine a machine: its instructions are refused)';

/** Output kept per command: the tail, where a failure usually says why. */
export const MAX_OUTPUT_BYTES = 64 * 1024;

export interface CommandSpec {
  name: string;
  command: string;
  args?: string[];
  env?: string[];
  workingDirectory?: string;
  timeoutSeconds: number;
}

export interface CommandResult {
  exitCode: number | null;
  /** Set when the command was killed: by its timeout, or because the agent stopped. */
  killed?: 'timeout' | 'aborted';
  /** When it could not be started at all (e.g. ENOENT). */
  spawnError?: string;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout and stderr interleaved as they came. */
  combined: Buffer;
}

/** Between SIGTERM and SIGKILL of a timed-out instruction's process group. */
const KILL_GRACE_MS = 5_000;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > MAX_OUTPUT_BYTES && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }
  value(): Buffer {
    const all = Buffer.concat(this.chunks);
    return all.length > MAX_OUTPUT_BYTES ? all.subarray(all.length - MAX_OUTPUT_BYTES) : all;
  }
}

/**
 * Runs one instruction as a child process on the machine: its working directory under the host root, the agent's
 * environment plus the instruction's, `CAPSTAN_HOST_ROOT` so scripts can find the machine's files. The process
 * group is killed on timeout or abort (SIGTERM, SIGKILL 5 s later).
 */
export function runCommand(
  root: HostRoot,
  spec: CommandSpec,
  defaultDirectory: string,
  extraEnv: Record<string, string>,
  signal?: AbortSignal,
  /** Told the pid (and process group) of the child once it runs: the agent records it to kill an orphan later. */
  onStart?: (pid: number) => void,
): Promise<CommandResult> {
  // A confined instruction sees the machine alone: its root is `/`, and nothing of the agent's environment (on the
  // sim, the provider's: credentials, kubeconfig paths) goes in.
  const env: Record<string, string> = root.confined
    ? { PATH: CONFINED_PATH, HOME: '/root', LANG: 'C.UTF-8', ...extraEnv, CAPSTAN_HOST_ROOT: '/' }
    : { ...(process.env as Record<string, string>), ...extraEnv, CAPSTAN_HOST_ROOT: root.dir };
  for (const entry of spec.env ?? []) {
    const eq = entry.indexOf('=');
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const stdout = new Tail();
  const stderr = new Tail();
  const combined = new Tail();
  const workingDirectory = spec.workingDirectory ?? defaultDirectory;
  if (root.confined && !confinementAvailable()) {
    // Never run a tenant's program on the host itself: refused, and the plan says why.
    const nothing = Buffer.alloc(0);
    return Promise.resolve({ exitCode: null, spawnError: CONFINEMENT_UNAVAILABLE, stdout: nothing, stderr: nothing, combined: nothing });
  }
  return new Promise((resolve) => {
    let killed: CommandResult['killed'];
    const cwd = root.resolve(workingDirectory, 'workingDirectory');
    // An absolute command is a program on the machine: under the host root (the same path on a real host); a
    // confined one finds it inside its namespace, where the machine's root is `/`.
    const started = root.confined
      ? confinedInvocation(root.dir, workingDirectory, spec.command, spec.args ?? [])
      : { command: spec.command.startsWith('/') ? root.resolve(spec.command) : spec.command, args: spec.args ?? [] };
    const child = spawn(started.command, started.args, {
      cwd: root.confined ? root.dir : cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    // The timeout holds after the leader exited: a background child it left (`sleep 600 &`) keeps the output pipes
    // open, and 'close' waits for them. So the group is signalled whether or not the leader still runs, and a child
    // that left the group (setsid) and still holds a pipe is cut off when SIGKILL has had its time.
    const kill = (why: 'timeout' | 'aborted') => {
      if (killed || child.pid === undefined) return;
      killed = why;
      signalGroup(child.pid, 'SIGTERM');
      setTimeout(() => {
        signalGroup(child.pid!, 'SIGKILL');
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish(child.exitCode ?? null);
        }, 1_000).unref();
      }, KILL_GRACE_MS).unref();
    };
    if (child.pid !== undefined) onStart?.(child.pid);
    const timer = setTimeout(() => kill('timeout'), spec.timeoutSeconds * 1000);
    const onAbort = () => kill('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      combined.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      combined.push(chunk);
    });
    let finished = false;
    const finish = (exitCode: number | null, spawnError?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        ...(killed && { killed }),
        ...(spawnError && { spawnError }),
        stdout: stdout.value(),
        stderr: stderr.value(),
        combined: combined.value(),
      });
    };
    child.on('error', (error: NodeJS.ErrnoException) => finish(null, error.code ?? 'spawn failed'));
    child.on('close', (code) => finish(code));
    if (signal?.aborted) onAbort();
  });
}

/** What went wrong with a command, for a state message: its name and how it ended, never its output. */
export function commandFailure(name: string, result: CommandResult): string | undefined {
  if (result.spawnError) return `${name} could not start: ${result.spawnError}`;
  if (result.killed === 'timeout') return `${name} timed out`;
  if (result.killed === 'aborted') return `${name} was stopped`;
  if (result.exitCode !== 0) return `${name} exited ${result.exitCode}`;
  return undefined;
}
