import type { V1Secret } from '@kubernetes/client-node';
import { maskSecrets, type ResourceClient } from '@capstan/kube';
import {
  decodeSecretData,
  gunzipJson,
  PLAN_KEYS,
  planChecksum,
  text,
  type MachinePlan,
  type PlanFile,
  type PlanInstruction,
  writePlan,
} from '@capstan/node-agent';

// One day-2 command on one machine, through its plan (Rancher's planner does the same with system-agent): the
// machine's plan keeps its files and probes and gets the operation's instruction, marked with the operation's id in
// its environment so that two operations never make the same plan. The agent applies it once; the outcome is read
// back from the plan Secret.

/** The variable that names the operation a plan runs (also makes identical commands of two operations differ). */
export const OPERATION_ENV = 'CAPSTAN_OPERATION';

export interface PlanOperation {
  /** Unique per operation (an EtcdSnapshot's uid, a restore's generation). */
  id: string;
  instruction: PlanInstruction;
  /** Files the instruction needs (an S3 endpoint's CA). */
  files?: PlanFile[];
  /** Values that must never show in a message taken from the machine's output (credentials). */
  secrets?: readonly string[];
}

export type OperationState =
  /** The plan now carries the operation (it was written by this call, or earlier and not applied yet). */
  | { state: 'running' }
  /** Another plan is being applied on the machine (an in-place update, another operation): try later. */
  | { state: 'busy'; message: string }
  | { state: 'succeeded'; output: string }
  | { state: 'failed'; message: string };

/** The operation id a plan runs, if it runs one. */
export function operationOf(plan: MachinePlan | undefined): string | undefined {
  for (const instruction of plan?.instructions ?? []) {
    const entry = instruction.env?.find((e) => e.startsWith(`${OPERATION_ENV}=`));
    if (entry) return entry.slice(OPERATION_ENV.length + 1);
  }
  return undefined;
}

function currentPlan(secret: V1Secret): { raw: Buffer | undefined; plan: MachinePlan | undefined } {
  const raw = decodeSecretData(secret.data)[PLAN_KEYS.plan];
  if (!raw || raw.length === 0) return { raw: undefined, plan: undefined };
  try {
    return { raw, plan: JSON.parse(raw.toString('utf8')) as MachinePlan };
  } catch {
    return { raw, plan: undefined };
  }
}

/**
 * The plan that runs `op` on a machine whose plan is `base`: its files (and the operation's), probes and periodic
 * instructions, and the operation's instruction alone (the base's one-time instructions ran already; an install must
 * not run again).
 */
export function operationPlan(base: MachinePlan | undefined, op: PlanOperation): MachinePlan {
  const files = [
    ...(base?.files ?? []).filter((f) => !(op.files ?? []).some((o) => o.path === f.path)),
    ...(op.files ?? []),
  ];
  return {
    ...(files.length > 0 && { files }),
    instructions: [{ ...op.instruction, env: [...(op.instruction.env ?? []), `${OPERATION_ENV}=${op.id}`] }],
    ...(base?.periodicInstructions && { periodicInstructions: base.periodicInstructions }),
    ...(base?.probes && { probes: base.probes }),
  };
}

/**
 * Moves `op` on on the machine whose plan Secret is `secret`: writes the operation's plan when the machine is idle,
 * reports it running while the agent applies it, and its outcome once the agent reported on it. Optimistic: a
 * concurrent write makes the patch fail with a conflict, and the caller's reconcile runs again.
 */
export async function advancePlanOperation(
  secrets: ResourceClient<V1Secret>,
  secret: V1Secret,
  op: PlanOperation,
): Promise<OperationState> {
  const data = decodeSecretData(secret.data);
  const { raw, plan } = currentPlan(secret);
  const state = text(data, PLAN_KEYS.state);
  if (raw && operationOf(plan) === op.id) {
    const checksum = planChecksum(raw);
    if (state === 'succeeded' && text(data, PLAN_KEYS.appliedChecksum) === checksum) {
      const outputs = gunzipJson<Record<string, string>>(data[PLAN_KEYS.appliedOutput]) ?? {};
      return { state: 'succeeded', output: outputs[op.instruction.name] ?? '' };
    }
    if (state === 'failed' && text(data, PLAN_KEYS.failedChecksum) === checksum) {
      const outputs = gunzipJson<Record<string, string>>(data[PLAN_KEYS.failedOutput]) ?? {};
      const reason = text(data, PLAN_KEYS.failureMessage) ?? 'failed';
      const output = (outputs[op.instruction.name] ?? '').trim().split('\n').slice(-5).join(' ').slice(-600);
      return { state: 'failed', message: masked(`${reason}${output ? `: ${output}` : ''}`, op.secrets) };
    }
    return { state: 'running' };
  }
  if (state === 'pending' || state === 'in-progress') {
    const other = operationOf(plan);
    return {
      state: 'busy',
      message: other ? `the machine runs another operation (${other})` : 'the machine applies another plan',
    };
  }
  await writePlan(secrets, secret, operationPlan(plan, op));
  return { state: 'running' };
}

function masked(message: string, secrets: readonly string[] = []): string {
  let out = message;
  for (const value of secrets) if (value.length >= 4) out = out.split(value).join('***');
  return maskSecrets(out);
}
