import type { V1Secret } from '@kubernetes/client-node';
import type { ResourceClient } from '@capstan/kube';
import { planChecksum } from '../plan/parse-plan.js';
import type { MachinePlan } from '../plan/plan.js';
import { decodeSecretData, PLAN_KEYS } from './plan-secret.js';

/**
 * Writes `plan` as the machine's new plan (state pending), unless the Secret already holds it; returns its checksum.
 * The one way a writer hands a machine a new plan (in-place updates, day-2 operations),
 * guarded by the Secret's resourceVersion, so a concurrent writer's patch fails with a conflict instead of racing.
 */
export async function writePlan(
  secrets: ResourceClient<V1Secret>,
  secret: V1Secret,
  plan: MachinePlan,
): Promise<string> {
  const raw = JSON.stringify(plan);
  const checksum = planChecksum(Buffer.from(raw));
  const current = decodeSecretData(secret.data)[PLAN_KEYS.plan];
  if (current && planChecksum(current) === checksum) return checksum;
  await secrets.mergePatch(
    { namespace: secret.metadata!.namespace, name: secret.metadata!.name! },
    {
      metadata: { resourceVersion: secret.metadata!.resourceVersion },
      data: {
        [PLAN_KEYS.plan]: Buffer.from(raw).toString('base64'),
        [PLAN_KEYS.state]: Buffer.from('pending').toString('base64'),
      },
    },
  );
  return checksum;
}
