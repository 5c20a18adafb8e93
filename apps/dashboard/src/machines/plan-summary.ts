import {
  gunzipJson,
  PLAN_KEYS,
  planChecksum,
  probeStatusesOf,
  text,
  type PlanData,
} from '@capstan/node-agent';
import { OutputScrubber } from './output-scrubber.js';

/** The tail of a failed run's output the page shows: enough to see why, never the whole log. */
export const MAX_FAILURE_OUTPUT_CHARS = 4096;
/** How much of the output is searched for secrets before its tail is cut (the tail lies well inside it). */
const SCRUBBED_OUTPUT_WINDOW_CHARS = 64 * 1024;
const MAX_FAILURE_MESSAGE_CHARS = 512;
/** Checksums are shown as git shows commits: enough to tell two plans apart. */
const SHORT_CHECKSUM_CHARS = 12;

export interface ProbeView {
  name: string;
  healthy: boolean;
  successCount?: number;
  failureCount?: number;
}

/**
 * What a Machine's page shows of its plan Secret (docs/node-agent.md): where the plan is, its probes, and why it
 * failed. Never the plan itself (file contents, commands, arguments, environment), never saved output of a run that
 * succeeded, and a failed run's output only scrubbed of every value the plan holds and of anything shaped like a
 * secret.
 */
export interface PlanSummary {
  /** `pending`, `in-progress`, `succeeded`, `failed`, or `no plan`. */
  state: string;
  /** The agent applied the plan the Secret holds now. */
  applied: boolean;
  /** The first characters of the sha256 of the plan last applied. */
  appliedChecksum?: string;
  /** `plan-revision`: how many plans the agent has started. */
  revision?: number;
  lastApplyTime?: string;
  probes: ProbeView[];
  /** Failed runs of the current plan. */
  failures?: number;
  /** The step that failed (`instruction install exited 1`). */
  failureMessage?: string;
  /** The end of the failed run's output, at most MAX_FAILURE_OUTPUT_CHARS. */
  failureOutput?: string;
}

const count = (value: string | undefined): number | undefined => {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** The summary of a plan Secret's decoded data. */
export function summarizePlan(data: PlanData): PlanSummary {
  const raw = data[PLAN_KEYS.plan];
  const checksum = raw && raw.length > 0 ? planChecksum(raw) : undefined;
  const appliedChecksum = text(data, PLAN_KEYS.appliedChecksum);
  const state = text(data, PLAN_KEYS.state) ?? (checksum ? 'pending' : 'no plan');
  const failed = state === 'failed';
  const revision = count(text(data, PLAN_KEYS.revision));
  const failures = count(text(data, PLAN_KEYS.failureCount));
  const lastApplyTime = text(data, PLAN_KEYS.lastApplyTime);
  const scrubber = new OutputScrubber(raw?.toString('utf8'));
  const failureMessage = failed ? text(data, PLAN_KEYS.failureMessage) : undefined;
  const failureOutput = failed ? outputTail(data, scrubber) : undefined;
  return {
    state,
    applied: checksum !== undefined && appliedChecksum === checksum,
    ...(appliedChecksum && /^[a-f0-9]{64}$/.test(appliedChecksum)
      ? { appliedChecksum: appliedChecksum.slice(0, SHORT_CHECKSUM_CHARS) }
      : {}),
    ...(revision !== undefined ? { revision } : {}),
    ...(lastApplyTime ? { lastApplyTime } : {}),
    probes: probeViews(data),
    ...(failures ? { failures } : {}),
    ...(failureMessage
      ? { failureMessage: scrubber.scrub(failureMessage).slice(0, MAX_FAILURE_MESSAGE_CHARS) }
      : {}),
    ...(failureOutput ? { failureOutput } : {}),
  };
}

/** The agent's `probe-statuses`, by name; entries that are not the agent's shape are left out. */
function probeViews(data: PlanData): ProbeView[] {
  return Object.entries(probeStatusesOf(data) as Record<string, unknown>)
    .map(([name, status]): ProbeView | undefined => {
      const s = status as { healthy?: unknown; successCount?: unknown; failureCount?: unknown } | null;
      if (typeof s?.healthy !== 'boolean') return undefined;
      return {
        name,
        healthy: s.healthy,
        ...(typeof s.successCount === 'number' ? { successCount: s.successCount } : {}),
        ...(typeof s.failureCount === 'number' ? { failureCount: s.failureCount } : {}),
      };
    })
    .filter((view): view is ProbeView => view !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The failed run's output (`failed-output`: gzip of `{instruction: output}`), scrubbed, its last characters. */
function outputTail(data: PlanData, scrubber: OutputScrubber): string | undefined {
  const outputs = gunzipJson<Record<string, unknown>>(data[PLAN_KEYS.failedOutput]);
  if (!outputs || typeof outputs !== 'object') return undefined;
  const joined = Object.entries(outputs)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '')
    .map(([instruction, output]) => `--- ${instruction}\n${output}`)
    .join('\n');
  if (joined === '') return undefined;
  return scrubber.scrub(joined.slice(-SCRUBBED_OUTPUT_WINDOW_CHARS)).slice(-MAX_FAILURE_OUTPUT_CHARS);
}
