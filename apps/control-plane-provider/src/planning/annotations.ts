import type { RemediationRecord } from './control-plane-machine.js';

/** Annotations the control plane provider keeps on its Machines and on the K3sControlPlane. */
export const CONTROL_PLANE_ANNOTATIONS = {
  /** On each Machine: hash of the spec it was built from (version, infrastructure template, K3s config). */
  specHash: 'controlplane.capstan.dev/spec-hash',
  /** On each Machine: hash of the machine template fields (labels, annotations, deletion, readiness gates) applied to it. */
  templateFieldsHash: 'controlplane.capstan.dev/template-fields-hash',
  /** On a Machine created to replace a remediated one: that remediation, as JSON. */
  remediationFor: 'controlplane.capstan.dev/remediation-for',
  /**
   * On a Machine between the first and the last write that start its in-place update (value: the target spec hash):
   * its K3sConfig may already hold the new spec. A later reconcile finishes the start for the current spec, or puts
   * the K3sConfig back when the spec went back to what the machine runs (k3scontrolplane.in-place.ts).
   */
  inPlaceStarting: 'controlplane.capstan.dev/in-place-starting',
  /** On the K3sControlPlane between deleting an unhealthy machine and creating its replacement. */
  remediationInProgress: 'controlplane.capstan.dev/remediation-in-progress',
} as const;

export function formatRemediationRecord(record: RemediationRecord): string {
  return JSON.stringify({ machine: record.machine, time: record.time, retryCount: record.retryCount });
}

/** A remediation record from an annotation; anything malformed reads as none. */
export function parseRemediationRecord(value: string | undefined): RemediationRecord | undefined {
  if (!value) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { machine, time, retryCount } = parsed as Record<string, unknown>;
    if (typeof machine !== 'string' || typeof time !== 'string' || !Number.isInteger(retryCount))
      return undefined;
    return { machine, time, retryCount: retryCount as number };
  } catch {
    return undefined;
  }
}
