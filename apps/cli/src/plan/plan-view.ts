import { createHash } from 'node:crypto';
import {
  gunzipJson,
  InvalidPlanError,
  parsePlan,
  PLAN_KEYS,
  planChecksum,
  probeStatusesOf,
  text,
  type MachinePlan,
  type PeriodicOutput,
  type PlanData,
  type ProbeStatus,
} from '@capstan/node-agent';

/** What `capstan plan show` prints: the plan (file contents only on request), its state, probes and saved output. */
export interface PlanView {
  secret: string;
  state: string;
  revision?: string;
  attempt?: string;
  checksum?: string;
  applied: boolean;
  lastApplyTime?: string;
  failure?: { message?: string; count?: string };
  plan?: MachinePlan;
  planError?: string;
  probes: Record<string, ProbeStatus>;
  output: Record<string, string>;
  periodicOutput: Record<string, PeriodicOutput>;
}

export function planView(secret: string, data: PlanData, showContent: boolean): PlanView {
  const raw = data[PLAN_KEYS.plan];
  const checksum = raw && raw.length > 0 ? planChecksum(raw) : undefined;
  let plan: MachinePlan | undefined;
  let planError: string | undefined;
  if (raw && raw.length > 0) {
    try {
      plan = parsePlan(raw);
    } catch (error) {
      planError = error instanceof InvalidPlanError ? error.message : 'unreadable';
    }
  }
  if (plan && !showContent) {
    plan = {
      ...plan,
      files: plan.files?.map(({ content, ...file }) =>
        content === undefined ? file : { ...file, content: `<${contentSummary(content)}>` },
      ),
    };
  }
  const failed = text(data, PLAN_KEYS.state) === 'failed';
  return {
    secret,
    state: text(data, PLAN_KEYS.state) ?? (checksum ? 'pending' : 'no plan'),
    ...(text(data, PLAN_KEYS.revision) && { revision: text(data, PLAN_KEYS.revision) }),
    ...(text(data, PLAN_KEYS.attempt) && { attempt: text(data, PLAN_KEYS.attempt) }),
    ...(checksum && { checksum }),
    applied: checksum !== undefined && text(data, PLAN_KEYS.appliedChecksum) === checksum,
    ...(text(data, PLAN_KEYS.lastApplyTime) && { lastApplyTime: text(data, PLAN_KEYS.lastApplyTime) }),
    ...(failed && {
      failure: { message: text(data, PLAN_KEYS.failureMessage), count: text(data, PLAN_KEYS.failureCount) },
    }),
    ...(plan && { plan }),
    ...(planError && { planError }),
    probes: probeStatusesOf(data),
    output: gunzipJson<Record<string, string>>(data[failed ? PLAN_KEYS.failedOutput : PLAN_KEYS.appliedOutput]) ?? {},
    periodicOutput: gunzipJson<Record<string, PeriodicOutput>>(data[PLAN_KEYS.periodicOutput]) ?? {},
  };
}

function contentSummary(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  return `${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

/** The human-readable form: one section per part, like `kubectl describe`. */
export function renderPlanView(view: PlanView): string {
  const lines: string[] = [`Plan Secret:   ${view.secret}`, `State:         ${view.state}`];
  if (view.revision) lines.push(`Revision:      ${view.revision}${view.attempt ? ` (attempt ${view.attempt})` : ''}`);
  if (view.checksum) lines.push(`Checksum:      ${view.checksum.slice(0, 12)} (${view.applied ? 'applied' : 'not applied yet'})`);
  if (view.lastApplyTime) lines.push(`Last applied:  ${view.lastApplyTime}`);
  if (view.failure) lines.push(`Failure:       ${view.failure.message ?? 'failed'} (${view.failure.count ?? '1'} time(s))`);
  if (view.planError) lines.push(`Plan:          invalid: ${view.planError}`);
  const plan = view.plan;
  if (plan) {
    lines.push('Files:');
    for (const f of plan.files ?? []) {
      const what = f.action === 'delete' ? 'delete' : f.directory ? 'directory' : (f.content ?? '<empty>');
      lines.push(`  ${f.path}  ${f.permissions ?? (f.directory ? '0755' : '0644')}  ${what}`);
    }
    if ((plan.files ?? []).length === 0) lines.push('  (none)');
    lines.push('Instructions:');
    for (const i of plan.instructions ?? []) {
      lines.push(`  ${i.name}: ${[i.command, ...(i.args ?? [])].join(' ')}${i.saveOutput ? '  (output saved)' : ''}`);
    }
    if ((plan.instructions ?? []).length === 0) lines.push('  (none)');
    if ((plan.periodicInstructions ?? []).length > 0) {
      lines.push('Periodic instructions:');
      for (const p of plan.periodicInstructions ?? []) lines.push(`  ${p.name}: every ${p.periodSeconds ?? 600}s: ${p.command}`);
    }
  }
  const probeNames = Object.keys(plan?.probes ?? view.probes);
  if (probeNames.length > 0) {
    lines.push('Probes:');
    for (const name of probeNames) {
      const status = view.probes[name];
      const url = plan?.probes?.[name]?.httpGet.url ?? '';
      lines.push(
        `  ${name}  ${status ? (status.healthy ? 'healthy' : 'unhealthy') : 'not probed yet'}${
          status ? ` (successes ${status.successCount}, failures ${status.failureCount})` : ''
        }  ${url}`,
      );
    }
  }
  const outputs = Object.entries(view.output);
  if (outputs.length > 0) {
    lines.push(view.failure ? 'Output of the failed run:' : 'Saved output:');
    for (const [name, out] of outputs) {
      lines.push(`  --- ${name}`);
      for (const line of out.trimEnd().split('\n')) lines.push(`  ${line}`);
    }
  }
  return lines.join('\n');
}

