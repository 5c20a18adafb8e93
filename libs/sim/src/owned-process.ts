import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, startProcess, stopPid, type ManagedProcess } from '@capstan/testing/local-host';

/** What the pid file records about a process the provider started. */
export interface ProcessRecord {
  pid: number;
  /** Hash of command, arguments, environment and input files: equal means the process runs what is wanted. */
  fingerprint: string;
  command: string;
  args: string[];
  startedAt: string;
}

export interface OwnedProcessOptions {
  /** `kube-apiserver`, `etcd`: names the pid file (`<name>.pid.json`) and the log (`<name>.log`). */
  name: string;
  dir: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Content the process reads at start (certificates, token file): a change must restart it. */
  inputs?: string[];
}

export type StartOutcome = 'started' | 'adopted';

/** The command line of a live process, split into arguments ('' when it is gone or not readable). */
export function commandLineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return [];
  }
}

/**
 * A child process the provider owns, recorded in a pid file so that a provider killed without cleaning up
 * can find it again: a process still running the wanted command line is adopted, anything else the record
 * names is stopped first (only if the pid still runs the recorded command: pids get recycled).
 */
export class OwnedProcess {
  readonly fingerprint: string;
  readonly logFile: string;
  private readonly recordFile: string;
  private child: ManagedProcess | undefined;
  private adoptedPid: number | undefined;

  constructor(private readonly options: OwnedProcessOptions) {
    this.logFile = join(options.dir, `${options.name}.log`);
    this.recordFile = recordFileOf(options.dir, options.name);
    const hash = createHash('sha256');
    hash.update(JSON.stringify([options.command, options.args, options.env ?? {}]));
    for (const input of options.inputs ?? []) hash.update(input);
    this.fingerprint = hash.digest('hex');
  }

  get pid(): number | undefined {
    return this.child?.pid ?? this.adoptedPid;
  }

  /** Resolves when a started child exits (never for an adopted process, which is watched by probes). */
  get exited(): Promise<number | null> | undefined {
    return this.child?.exited;
  }

  alive(): boolean {
    const pid = this.pid;
    return pid !== undefined && isAlive(pid) && runs(pid, this.options.command, this.options.args);
  }

  /** Adopts the recorded process when it runs exactly what is wanted; otherwise stops it and starts anew. */
  async start(): Promise<StartOutcome> {
    if (this.alive()) return this.child ? 'started' : 'adopted';
    const record = readRecord(this.recordFile);
    if (record && runsRecorded(record)) {
      if (
        record.fingerprint === this.fingerprint &&
        runs(record.pid, this.options.command, this.options.args)
      ) {
        this.adoptedPid = record.pid;
        return 'adopted';
      }
      await stopPid(record.pid);
    }
    writeFileSync(this.logFile, '');
    this.child = startProcess({
      name: this.options.name,
      command: this.options.command,
      args: this.options.args,
      env: this.options.env,
      logFile: this.logFile,
    });
    this.adoptedPid = undefined;
    const written: ProcessRecord = {
      pid: this.child.pid,
      fingerprint: this.fingerprint,
      command: this.options.command,
      args: this.options.args,
      startedAt: new Date().toISOString(),
    };
    writeFileSync(this.recordFile, JSON.stringify(written), { mode: 0o600 });
    return 'started';
  }

  /** SIGTERM, then SIGKILL after the grace period; forgets the pid file. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.alive()) await stopPid(this.pid!, graceMs);
    this.child = undefined;
    this.adoptedPid = undefined;
    rmSync(this.recordFile, { force: true });
  }

  tailLog(lines = 20): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

/** Whether `pid` runs exactly this command line: a recycled pid runs something else. */
function runs(pid: number, command: string, args: readonly string[]): boolean {
  if (!isAlive(pid)) return false;
  const line = commandLineOf(pid);
  return (
    line.length === args.length + 1 && line[0] === command && args.every((arg, i) => line[i + 1] === arg)
  );
}

function runsRecorded(record: ProcessRecord): boolean {
  return runs(record.pid, record.command, record.args);
}

function recordFileOf(dir: string, name: string): string {
  return join(dir, `${name}.pid.json`);
}

function readRecord(file: string): ProcessRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProcessRecord>;
    return typeof parsed.pid === 'number' &&
      typeof parsed.fingerprint === 'string' &&
      typeof parsed.command === 'string' &&
      Array.isArray(parsed.args)
      ? (parsed as ProcessRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a pid file in `dir` names a process that still runs its recorded command. */
export function recordedProcessAlive(dir: string, name: string): ProcessRecord | undefined {
  const record = readRecord(recordFileOf(dir, name));
  return record && runsRecorded(record) ? record : undefined;
}

/** Stops what a pid file in `dir` names (if it still runs its recorded command) and removes the file. */
export async function stopRecordedProcess(dir: string, name: string): Promise<void> {
  const record = recordedProcessAlive(dir, name);
  if (record) await stopPid(record.pid);
  rmSync(recordFileOf(dir, name), { force: true });
}
