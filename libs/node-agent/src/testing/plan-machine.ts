import type { V1Secret } from '@kubernetes/client-node';
import { SECRETS, type KubeClient } from '@capstan/kube';
import { ensurePlanAccess, requestAgentToken } from '../access/plan-access.js';
import type { MachinePlan } from '../plan/plan.js';
import { MACHINE_PLAN_SECRET_TYPE, planSecretName } from '../report/plan-secret.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** For tests: a machine's plan Secret, its access objects and an agent token, as the bootstrap provider creates them. */
export async function createPlanMachine(
  admin: KubeClient,
  namespace: string,
  machineName: string,
  plan?: MachinePlan,
): Promise<{ secretName: string; token: string; secret: V1Secret }> {
  const secretName = planSecretName(machineName);
  const secret = await admin.resource<V1Secret>(SECRETS).create({
    metadata: { name: secretName, namespace },
    type: MACHINE_PLAN_SECRET_TYPE,
    data: plan ? { plan: b64(JSON.stringify(plan)), 'plan-state': b64('pending') } : {},
  });
  await ensurePlanAccess(admin, namespace, secretName);
  const { token } = await requestAgentToken(admin, namespace, secretName);
  return { secretName, token, secret };
}
