import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { planChecksum } from '../plan/parse-plan.js';
import {
  decide,
  FAILURE_COOLDOWN_MS,
  gunzipJson,
  gzipJson,
  markInProgress,
  MAX_GUNZIPPED_OUTPUT_BYTES,
  MAX_GZIPPED_OUTPUT_BYTES,
  PLAN_KEYS,
  recordOutcome,
  SECRET_DATA_LIMIT_BYTES,
  text,
  type PlanData,
} from './plan-secret.js';

const plan = Buffer.from('{"files":[]}');
const sum = planChecksum(plan);
const data = (extra: Record<string, string> = {}): PlanData => ({
  [PLAN_KEYS.plan]: plan,
  ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, Buffer.from(v)])),
});

describe('the plan Secret state machine', () => {
  it('applies a pending plan, and a plan not applied yet when the writer sets no state', () => {
    expect(decide(data({ [PLAN_KEYS.state]: 'pending' }), 0)).toEqual({ action: 'apply', checksum: sum, attempt: 1, why: 'new' });
    expect(decide(data(), 0)).toMatchObject({ action: 'apply', why: 'new' });
    expect(decide(data({ [PLAN_KEYS.appliedChecksum]: sum }), 0)).toEqual({ action: 'idle', checksum: sum });
    expect(decide({}, 0)).toEqual({ action: 'idle' });
  });

  it('runs a plan left in progress again, with the next attempt number', () => {
    expect(decide(data({ [PLAN_KEYS.state]: 'in-progress', [PLAN_KEYS.attempt]: '1' }), 0)).toEqual({
      action: 'apply',
      checksum: sum,
      attempt: 2,
      why: 'resume',
    });
  });

  it('keeps a succeeded plan, and a failed one unless attempts are left and the cooldown is over', () => {
    expect(decide(data({ [PLAN_KEYS.state]: 'succeeded', [PLAN_KEYS.appliedChecksum]: sum }), 0).action).toBe('idle');
    const failed = { [PLAN_KEYS.state]: 'failed', [PLAN_KEYS.failedChecksum]: sum, [PLAN_KEYS.failureCount]: '1' };
    expect(decide(data(failed), 0)).toEqual({ action: 'idle', checksum: sum });
    expect(decide(data({ ...failed, [PLAN_KEYS.maxFailures]: '3' }), 1_000, 0)).toEqual({ action: 'idle', checksum: sum, coolingDown: true });
    expect(decide(data({ ...failed, [PLAN_KEYS.maxFailures]: '3' }), FAILURE_COOLDOWN_MS, 0)).toMatchObject({ action: 'apply', why: 'retry' });
    expect(decide(data({ ...failed, [PLAN_KEYS.maxFailures]: '-1', [PLAN_KEYS.failureCount]: '99' }), 0).action).toBe('apply');
    expect(decide(data({ ...failed, [PLAN_KEYS.failedChecksum]: 'other' }), 0)).toMatchObject({ action: 'apply', why: 'new' });
  });

  it('commits in-progress with the revision bumped, then records the outcome', () => {
    const marked = markInProgress(data({ [PLAN_KEYS.revision]: '4', [PLAN_KEYS.probeStatuses]: '{}' }), 1, 'agent-a', new Date(0));
    expect(text(marked, PLAN_KEYS.state)).toBe('in-progress');
    expect(text(marked, PLAN_KEYS.revision)).toBe('5');
    const failed = recordOutcome(marked, { checksum: sum, succeeded: false, failure: 'instruction a exited 1', output: { a: 'boom' }, at: new Date(0) });
    expect(text(failed, PLAN_KEYS.state)).toBe('failed');
    expect(text(failed, PLAN_KEYS.failureCount)).toBe('1');
    expect(text(failed, PLAN_KEYS.failureMessage)).toBe('instruction a exited 1');
    expect(gunzipJson(failed[PLAN_KEYS.failedOutput])).toEqual({ a: 'boom' });
    expect(failed[PLAN_KEYS.probeStatuses]).toBeUndefined();
    const again = recordOutcome(failed, { checksum: sum, succeeded: false, output: {}, at: new Date(0) });
    expect(text(again, PLAN_KEYS.failureCount)).toBe('2');
    const ok = recordOutcome(again, { checksum: sum, succeeded: true, output: { a: 'fine' }, at: new Date(0) });
    expect(text(ok, PLAN_KEYS.state)).toBe('succeeded');
    expect(text(ok, PLAN_KEYS.appliedChecksum)).toBe(sum);
    expect(text(ok, PLAN_KEYS.failureCount)).toBe('0');
    expect(ok[PLAN_KEYS.failedChecksum]).toBeUndefined();
    expect(gunzipJson(ok[PLAN_KEYS.appliedOutput])).toEqual({ a: 'fine' });
    // A gzip bomb in the agent's keys is not inflated past the limit.
    const bomb = gzipSync(`{"a":"${'x'.repeat(MAX_GUNZIPPED_OUTPUT_BYTES)}"}`);
    expect(gunzipJson(bomb)).toBeUndefined();
  });

  it('caps gzipped output by dropping the largest entries, saying so', () => {
    const noise = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7919) % 65536).toString(36)).join('');
    const zipped = gzipJson({ small: 'kept', huge: noise(400_000) });
    expect(zipped.length).toBeLessThanOrEqual(MAX_GZIPPED_OUTPUT_BYTES);
    const back = gunzipJson<Record<string, string>>(zipped)!;
    expect(back['small']).toBe('kept');
    expect(back['huge']).toMatch(/^\[dropped: \d+ bytes over the output cap\]$/);
  });

  // Issue 32, finding 8: plan + outputs past the 1 MiB Secret limit made every report fail with 422, and the plan ran
  // again every few seconds forever.
  it('budgets the outputs so plan and outputs together fit a Secret', () => {
    // Random bytes barely compress: each output below is close to the 256 KiB cap.
    const noise = (n: number) => randomBytes((n * 3) / 4).toString('base64');
    const bigPlan = Buffer.from(JSON.stringify({ files: [{ path: '/big', content: noise(400_000) }] }));
    const checksum = planChecksum(bigPlan);
    const before: PlanData = {
      [PLAN_KEYS.plan]: bigPlan,
      [PLAN_KEYS.periodicOutput]: gzipJson({ p: noise(320_000) }),
      [PLAN_KEYS.appliedOutput]: gzipJson({ old: noise(320_000) }),
      [PLAN_KEYS.owner]: Buffer.from('agent-a'),
    };
    const after = recordOutcome(before, { checksum, succeeded: false, failure: 'instruction x exited 1', output: { x: noise(320_000) }, at: new Date(0) });
    const size = Object.entries(after).reduce((n, [k, v]) => n + k.length + v.length, 0);
    expect(size).toBeLessThanOrEqual(SECRET_DATA_LIMIT_BYTES);
    expect(gunzipJson<Record<string, string>>(after[PLAN_KEYS.failedOutput])?.['x']).toHaveLength(320_000);
    expect(after[PLAN_KEYS.owner]).toBeUndefined();
  });

  it('gives a plan up once its runs, counting those dead agents left, reach max(3, max-failures)', () => {
    const inProgress = { [PLAN_KEYS.state]: 'in-progress' };
    expect(decide(data({ ...inProgress, [PLAN_KEYS.attempt]: '2' }), 0)).toMatchObject({ action: 'apply', why: 'resume', attempt: 3 });
    expect(decide(data({ ...inProgress, [PLAN_KEYS.attempt]: '3' }), 0)).toEqual({ action: 'give-up', checksum: sum, attempt: 3 });
    expect(decide(data({ ...inProgress, [PLAN_KEYS.attempt]: '3', [PLAN_KEYS.maxFailures]: '5' }), 0).action).toBe('apply');
    expect(decide(data({ ...inProgress, [PLAN_KEYS.attempt]: '99', [PLAN_KEYS.maxFailures]: '-1' }), 0).action).toBe('apply');
  });
});
