import { type ManifestApplier } from './apply.js';
import { type Manifest } from './manifests.js';

const ADMISSION_POLICY_KINDS = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/** deploy/admission: the rules RBAC cannot express, which must hold wherever Capstan's CRDs are served. */
export function isAdmissionPolicy(manifest: Manifest): boolean {
  return ADMISSION_POLICY_KINDS.has(manifest.kind) && manifest.apiVersion.startsWith('admissionregistration.k8s.io/');
}

interface PolicyStatus {
  metadata?: { generation?: number };
  status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } };
}

/**
 * Applies the admission policies among `manifests` and waits until the API server has checked each policy's
 * expressions (`status.observedGeneration`); a policy whose expressions do not type-check is an error, because it
 * would enforce nothing it was written for.
 */
export async function installAdmissionPolicies(
  applier: ManifestApplier,
  manifests: Manifest[],
  options: { fieldManager: string; timeoutMs?: number },
): Promise<void> {
  const policies = manifests.filter(isAdmissionPolicy);
  for (const policy of policies) await applier.apply(policy, { fieldManager: options.fieldManager });
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (const policy of policies.filter((m) => m.kind === 'ValidatingAdmissionPolicy')) {
    for (;;) {
      const live = (await applier.get(policy)) as PolicyStatus | undefined;
      const generation = live?.metadata?.generation;
      if (generation !== undefined && live?.status?.observedGeneration === generation) {
        const warnings = live.status.typeChecking?.expressionWarnings ?? [];
        if (warnings.length > 0) {
          throw new Error(`admission policy ${policy.metadata.name}: ${warnings.map((w) => `${w.fieldRef}: ${w.warning}`).join('; ')}`);
        }
        break;
      }
      if (Date.now() > deadline) throw new Error(`admission policy ${policy.metadata.name} was not checked in time`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
