import { canonicalJson } from '@capstan/kube';
import { createHash } from 'node:crypto';
import type { MachineSpec, MachineTemplateSpec } from '@capstan/api';

// What of a MachineDeployment's template decides whether its Machines are up to date. Labels, annotations and
// the fields a Machine takes in place (upstream's in-place propagation) change no Machine, so they are left out:
// changing them, or spec.replicas, never rolls out.

/** Machine spec fields carried to existing Machines in place. */
export const IN_PLACE_SPEC_FIELDS = ['deletion', 'readinessGates', 'minReadySeconds'] as const;

/** The part of a template a rollout replaces Machines for. */
export function rolloutRelevantSpec(template: MachineTemplateSpec): Partial<MachineSpec> {
  const spec: Partial<MachineSpec> = structuredClone(template.spec);
  for (const field of IN_PLACE_SPEC_FIELDS) delete spec[field];
  return spec;
}

/** Two templates need the same Machines. */
export function sameMachines(a: MachineTemplateSpec, b: MachineTemplateSpec): boolean {
  return canonicalJson(rolloutRelevantSpec(a)) === canonicalJson(rolloutRelevantSpec(b));
}

/**
 * The `machine-template-hash` of a template: 10 hex digits of the SHA-256 of its rollout-relevant spec, plus the
 * `rollout.after` time that asked for this rollout, if any (so the same template gets a new MachineSet then).
 */
export function templateHash(template: MachineTemplateSpec, rolloutAfter?: string): string {
  const input = canonicalJson({
    spec: rolloutRelevantSpec(template),
    ...(rolloutAfter ? { rolloutAfter } : {}),
  });
  return createHash('sha256').update(input).digest('hex').slice(0, 10);
}
