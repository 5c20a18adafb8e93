import { gunzipSync, gzipSync } from 'node:zlib';
import { planChecksum } from '../plan/parse-plan.js';
import type { ProbeStatus } from '../probes/probe-status.js';

/** The Secret type of a machine plan; the agent's Role allows exactly one Secret of it. */
export const MACHINE_PLAN_SECRET_TYPE = 'capstan.dev/machine-plan';

/** Label on a plan Secret naming its Machine (the bootstrap provider sets it; day-2 operations map back with it). */
export const MACHINE_NAME_LABEL = 'capstan.dev/machine-name';

/** `<machine>-machine-plan`: the plan Secret of a machine. */
export function planSecretName(machineName: string): string {
  return `${machineName}-machine-plan`;
}

/** Keys of the plan Secret and who writes them (docs/node-agent.md). */
export const PLAN_KEYS = {
  /** Writer: the JSON plan. */
  plan: 'plan',
  /** Writer sets `pending` with every new plan; the agent moves it on. */
  state: 'plan-state',
  /** Writer: attempts of a failed plan (default 1: no retry; -1 unlimited). */
  maxFailures: 'max-failures',
  /** Agent: +1 on every pending -> in-progress. */
  revision: 'plan-revision',
  /** Agent: runs of the current plan (1, or more after a crash or a retry). */
  attempt: 'plan-attempt',
  appliedChecksum: 'applied-checksum',
  appliedOutput: 'applied-output',
  failedChecksum: 'failed-checksum',
  failedOutput: 'failed-output',
  failureCount: 'failure-count',
  /** Agent: why the plan failed (step and how it ended; never content or output). */
  failureMessage: 'failure-message',
  successCount: 'success-count',
  lastApplyTime: 'last-apply-time',
  probeStatuses: 'probe-statuses',
  periodicOutput: 'applied-periodic-output',
  /** Agent: the instance applying an `in-progress` plan; another agent resumes it only when that one is gone. */
  owner: 'plan-owner',
  /** Agent: renewed by the owner while it applies (its own clock: others only watch the value change). */
  ownerRenewed: 'plan-owner-renewed',
} as const;

export type PlanState = 'pending' | 'in-progress' | 'succeeded' | 'failed';

/** Gzipped JSON outputs are capped so the Secret stays far below the 1 MiB object limit. */
export const MAX_GZIPPED_OUTPUT_BYTES = 256 * 1024;

/** Secret data decoded: key -> bytes. */
export type PlanData = Record<string, Buffer>;

export function decodeSecretData(data: Record<string, string> | undefined): PlanData {
  return Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

export function encodeSecretData(data: PlanData): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('base64')]));
}

export const text = (data: PlanData, key: string): string | undefined => data[key]?.toString('utf8');
const int = (data: PlanData, key: string, fallback: number): number => {
  const n = Number.parseInt(text(data, key) ?? '', 10);
  return Number.isFinite(n) ? n : fallback;
};

/** gzip of JSON, dropping the largest entries until it fits the cap (the dropped ones say so). */
export function gzipJson(value: Record<string, unknown>, maxBytes = MAX_GZIPPED_OUTPUT_BYTES): Buffer {
  const entries = { ...value };
  for (;;) {
    const zipped = gzipSync(JSON.stringify(entries));
    if (zipped.length <= maxBytes) return zipped;
    const largest = Object.entries(entries)
      .filter(([, v]) => typeof v !== 'string' || !v.startsWith('[dropped'))
      .sort(([, a], [, b]) => JSON.stringify(b).length - JSON.stringify(a).length)[0];
    if (!largest) return gzipSync('{}');
    entries[largest[0]] = `[dropped: ${JSON.stringify(largest[1]).length} bytes over the output cap]`;
  }
}

/**
 * The most saved outputs may inflate to when read back. The agent writes at most MAX_GZIPPED_OUTPUT_BYTES of gzip,
 * but the keys are the agent's to write: whoever holds its token could put a gzip bomb there for the provider.
 */
export const MAX_GUNZIPPED_OUTPUT_BYTES = 8 * 1024 * 1024;

/** Gzipped JSON from the plan Secret; undefined when absent, not gzip or JSON, or larger than the limit. */
export function gunzipJson<T>(data: Buffer | undefined): T | undefined {
  if (!data || data.length === 0) return undefined;
  try {
    return JSON.parse(gunzipSync(data, { maxOutputLength: MAX_GUNZIPPED_OUTPUT_BYTES }).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** What the agent does with the plan Secret as it is now. */
export type PlanDecision =
  /** `coolingDown`: a failed plan with attempts left, to be applied again once the cooldown is over. */
  | { action: 'idle'; checksum?: string; coolingDown?: true }
  | { action: 'apply'; checksum: string; attempt: number; why: 'new' | 'resume' | 'retry' }
  /** An `in-progress` plan whose runs, counting those dead agents left, reached the limit: it fails instead. */
  | { action: 'give-up'; checksum: string; attempt: number };

/**
 * Runs of one plan in all, counting those an agent's death interrupted, when `max-failures` allows fewer: a plan that
 * kills its agent every time (or a host that keeps crashing) fails after this many instead of running forever.
 */
export const MIN_RUN_LIMIT = 3;

/** The most runs of one plan: `max-failures` (at least MIN_RUN_LIMIT), unlimited with a negative value. */
export function runLimit(data: PlanData): number {
  const maxFailures = int(data, PLAN_KEYS.maxFailures, 1);
  return maxFailures < 0 ? Number.POSITIVE_INFINITY : Math.max(maxFailures, MIN_RUN_LIMIT);
}

/** Seconds a failed plan waits before it is tried again (when `max-failures` allows). */
export const FAILURE_COOLDOWN_MS = 30_000;

/**
 * The state machine of the plan Secret:
 * - `pending` (or no state and a plan not applied yet, as the legacy checksum flow): apply, attempt 1;
 * - `in-progress` that this agent is not running (it crashed or was killed mid-plan): apply again, attempt + 1 —
 *   the one case where instructions may run twice — unless the plan has run `runLimit` times: then it fails;
 * - `failed` for this plan with attempts left (`max-failures`) and the cooldown over: apply again;
 * - `succeeded` for this plan, or `failed` without attempts left: nothing until the writer sets a new plan.
 */
export function decide(data: PlanData, now: number, lastFailureAt?: number): PlanDecision {
  const raw = data[PLAN_KEYS.plan];
  if (!raw || raw.length === 0) return { action: 'idle' };
  const checksum = planChecksum(raw);
  const state = text(data, PLAN_KEYS.state) as PlanState | undefined;
  const attempt = int(data, PLAN_KEYS.attempt, 0);
  switch (state) {
    case 'pending':
      return { action: 'apply', checksum, attempt: 1, why: 'new' };
    case 'in-progress':
      return attempt >= runLimit(data)
        ? { action: 'give-up', checksum, attempt }
        : { action: 'apply', checksum, attempt: attempt + 1, why: 'resume' };
    case 'failed': {
      if (text(data, PLAN_KEYS.failedChecksum) !== checksum) return { action: 'apply', checksum, attempt: 1, why: 'new' };
      const maxFailures = int(data, PLAN_KEYS.maxFailures, 1);
      const failures = int(data, PLAN_KEYS.failureCount, 0);
      const cooled = lastFailureAt === undefined || now - lastFailureAt >= FAILURE_COOLDOWN_MS;
      if (maxFailures >= 0 && failures >= maxFailures) return { action: 'idle', checksum };
      return cooled ? { action: 'apply', checksum, attempt: attempt + 1, why: 'retry' } : { action: 'idle', checksum, coolingDown: true };
    }
    case 'succeeded':
      return text(data, PLAN_KEYS.appliedChecksum) === checksum
        ? { action: 'idle', checksum }
        : { action: 'apply', checksum, attempt: 1, why: 'new' };
    default:
      return text(data, PLAN_KEYS.appliedChecksum) === checksum
        ? { action: 'idle', checksum }
        : { action: 'apply', checksum, attempt: 1, why: 'new' };
  }
}

/**
 * The in-progress mark, committed before anything of the plan runs, with the agent instance that owns the run; a
 * resumed plan keeps its revision.
 */
export function markInProgress(data: PlanData, attempt: number, owner: string, now: Date): PlanData {
  const resumed = text(data, PLAN_KEYS.state) === 'in-progress';
  return {
    ...data,
    [PLAN_KEYS.state]: Buffer.from('in-progress'),
    [PLAN_KEYS.revision]: Buffer.from(String(int(data, PLAN_KEYS.revision, 0) + (resumed ? 0 : 1))),
    [PLAN_KEYS.attempt]: Buffer.from(String(attempt)),
    [PLAN_KEYS.owner]: Buffer.from(owner),
    [PLAN_KEYS.ownerRenewed]: Buffer.from(now.toISOString()),
  };
}

/** What a Secret's `data` may hold in all (the API server refuses a larger Secret with 422). */
export const SECRET_DATA_LIMIT_BYTES = 1024 * 1024;
/** Room left for the keys others may add (labels are metadata, not data; this is for a writer's later keys). */
const SECRET_DATA_MARGIN_BYTES = 16 * 1024;

const dataSize = (data: PlanData) => Object.entries(data).reduce((sum, [key, value]) => sum + key.length + value.length, 0);

export interface ApplyOutcome {
  checksum: string;
  succeeded: boolean;
  failure?: string;
  output: Record<string, string>;
  at: Date;
}

/**
 * The result of an apply written onto the Secret; the previous probe statuses go (they were for the old plan), and
 * so does the run's owner. The output gets the room the Secret has left, so plan and outputs together never pass the
 * API server's limit: a report that could never be written would leave the plan in progress for good.
 */
export function recordOutcome(data: PlanData, outcome: ApplyOutcome): PlanData {
  const next: PlanData = { ...data, [PLAN_KEYS.lastApplyTime]: Buffer.from(outcome.at.toISOString()) };
  delete next[PLAN_KEYS.probeStatuses];
  delete next[PLAN_KEYS.owner];
  delete next[PLAN_KEYS.ownerRenewed];
  const outputKey = outcome.succeeded ? PLAN_KEYS.appliedOutput : PLAN_KEYS.failedOutput;
  delete next[outputKey];
  // The other output keys shrink first when the room is short: this run's output is the one worth keeping.
  const room = () => SECRET_DATA_LIMIT_BYTES - SECRET_DATA_MARGIN_BYTES - dataSize(next) - 512;
  if (room() < MAX_GZIPPED_OUTPUT_BYTES) delete next[outcome.succeeded ? PLAN_KEYS.failedOutput : PLAN_KEYS.appliedOutput];
  if (room() < MAX_GZIPPED_OUTPUT_BYTES) delete next[PLAN_KEYS.periodicOutput];
  const output = gzipJson(outcome.output, Math.max(0, Math.min(MAX_GZIPPED_OUTPUT_BYTES, room())));
  if (outcome.succeeded) {
    next[PLAN_KEYS.state] = Buffer.from('succeeded');
    next[PLAN_KEYS.appliedChecksum] = Buffer.from(outcome.checksum);
    next[PLAN_KEYS.appliedOutput] = output;
    next[PLAN_KEYS.failureCount] = Buffer.from('0');
    next[PLAN_KEYS.successCount] = Buffer.from(String(int(data, PLAN_KEYS.successCount, 0) + 1));
    delete next[PLAN_KEYS.failedChecksum];
    delete next[PLAN_KEYS.failedOutput];
    delete next[PLAN_KEYS.failureMessage];
  } else {
    const sameFailure = text(data, PLAN_KEYS.failedChecksum) === outcome.checksum;
    next[PLAN_KEYS.state] = Buffer.from('failed');
    next[PLAN_KEYS.failedChecksum] = Buffer.from(outcome.checksum);
    next[PLAN_KEYS.failedOutput] = output;
    next[PLAN_KEYS.failureCount] = Buffer.from(String((sameFailure ? int(data, PLAN_KEYS.failureCount, 0) : 0) + 1));
    next[PLAN_KEYS.failureMessage] = Buffer.from(outcome.failure ?? 'failed');
  }
  return next;
}

export function probeStatusesOf(data: PlanData): Record<string, ProbeStatus> {
  try {
    return JSON.parse(text(data, PLAN_KEYS.probeStatuses) ?? '{}') as Record<string, ProbeStatus>;
  } catch {
    return {};
  }
}
