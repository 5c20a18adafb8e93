import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApplyOutcome } from '../report/plan-secret.js';

/** A process named by pid and start time, so a reused pid is never taken for it. */
export interface ProcessIdentity {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot. */
  startTime: string;
}

/**
 * What this machine's agent is doing with a plan, kept on disk in the agent's state directory so a restarted agent
 * knows: which instance owned the attempt and whether that process still lives, which instruction group to kill
 * before resuming, and the outcome once the plan ran, written before the report to the Secret, so a failed report
 * is retried and the plan is never run again for it.
 *
 * On a real host the state directory is `/var/lib/capstan/agent`; on the sim it is the machine's records directory
 * on the management host, outside the machine's root: the record names processes the agent signals, and a tenant
 * who could forge it would choose which host process is killed.
 */
export interface AttemptRecord {
  instance: string;
  agent: ProcessIdentity;
  checksum: string;
  revision: string;
  attempt: number;
  /** The process group of the instruction running now. */
  instruction?: ProcessIdentity;
  /** Set once the plan ran: what the report to the Secret must say. */
  outcome?: Omit<ApplyOutcome, 'at'> & { at: string };
}

const RECORD_FILE = 'attempt.json';

/** The start time of a live process (not a zombie), or undefined when there is none by that pid. */
export function processStartTime(pid: number): string | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ');
    if (!fields || fields[0] === 'Z') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

export function identityOf(pid: number): ProcessIdentity | undefined {
  const startTime = processStartTime(pid);
  return startTime === undefined ? undefined : { pid, startTime };
}

export const isAlive = (process_: ProcessIdentity): boolean => processStartTime(process_.pid) === process_.startTime;

/** Kills what is left of an instruction group of a dead attempt, when it is still the same group. */
export function killOrphanedInstruction(record: AttemptRecord | undefined): boolean {
  if (!record?.instruction || !isAlive(record.instruction)) return false;
  try {
    process.kill(-record.instruction.pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

export class AttemptRecords {
  constructor(private readonly dir: string) {}

  read(): AttemptRecord | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, RECORD_FILE), 'utf8')) as AttemptRecord;
    } catch {
      return undefined;
    }
  }

  /** Written to a temporary file and renamed, so a crash leaves the old record or the new one. */
  write(record: AttemptRecord): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const target = join(this.dir, RECORD_FILE);
    writeFileSync(`${target}.tmp`, JSON.stringify(record), { mode: 0o600 });
    renameSync(`${target}.tmp`, target);
  }

  clear(): void {
    rmSync(join(this.dir, RECORD_FILE), { force: true });
  }
}
