// In-place updates (docs/in-place-updates.md): the policy field, the annotations that carry one machine's update
// between the core, the control plane provider and the bootstrap provider, and the recorded "can this change be
// applied in place" answer. Everything a restart must know lives on the objects, never in a process.

/** `spec.rollout.inPlace` of a MachineDeployment or K3sControlPlane. */
export const IN_PLACE_POLICIES = ['Never', 'Preferred', 'Required'] as const;
export type InPlacePolicy = (typeof IN_PLACE_POLICIES)[number];

export const IN_PLACE_ANNOTATIONS = {
  /**
   * On a Machine while its MachineDeployment moves it to another MachineSet (value: that set's name). Both sets
   * leave their Machine count alone while any Machine of theirs carries it: the move changes two objects.
   */
  movingTo: 'in-place.capstan.dev/moving-to',
  /** On a Machine being updated in place: the target (the new MachineSet's template hash, or the control plane's spec hash). */
  updateInProgress: 'in-place.capstan.dev/update-in-progress',
  /** On a Machine being updated: "true" when the update restarts K3s, so the node is drained first. */
  restart: 'in-place.capstan.dev/restart',
  /** On a Machine: the target whose update may start (set by the core once the node is cordoned and drained). */
  readyToUpdate: 'in-place.capstan.dev/ready-to-update',
  /** On a Machine: the core cordoned its node for the update and uncordons it when the update succeeded. */
  cordoned: 'in-place.capstan.dev/cordoned',
  /** On each Machine: the bootstrap provider's answer for a target (JSON InPlaceDecision); each machine is asked on its own. */
  decision: 'in-place.capstan.dev/decision',
} as const;

/** The bootstrap provider's answer to "can this Machine move to that target in place". */
export interface InPlaceDecision {
  /** What the answer is for (template hash or spec hash). */
  target: string;
  inPlace: boolean;
  /** K3s restarts to apply it: the node is drained first. */
  restart?: boolean;
  /** Why not, naming the fields that block it. */
  reason?: string;
  fields?: string[];
}

/** The decision recorded on an object for `target`, or undefined when none (or a malformed one) is. */
export function recordedDecision(
  annotations: Record<string, string> | undefined,
  target: string,
): InPlaceDecision | undefined {
  const raw = annotations?.[IN_PLACE_ANNOTATIONS.decision];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<InPlaceDecision>;
    if (parsed.target !== target || typeof parsed.inPlace !== 'boolean') return undefined;
    return {
      target,
      inPlace: parsed.inPlace,
      ...(parsed.restart === true && { restart: true }),
      ...(typeof parsed.reason === 'string' && { reason: parsed.reason }),
      ...(Array.isArray(parsed.fields) && { fields: parsed.fields.filter((f) => typeof f === 'string') }),
    };
  } catch {
    return undefined;
  }
}

/** The machine is being updated in place (its target). */
export function updateInProgress(annotations: Record<string, string> | undefined): string | undefined {
  return annotations?.[IN_PLACE_ANNOTATIONS.updateInProgress] || undefined;
}

/**
 * The Kubernetes version a Machine's node runs (its kubelet's, without a build suffix such as `+k3s1`), else its
 * spec.version: after a failed update the spec says where it was going, the node where it is.
 */
export function runningVersion(machine: {
  spec?: { version?: string };
  status?: { nodeInfo?: { kubeletVersion?: string } };
}): string | undefined {
  const kubelet = machine.status?.nodeInfo?.kubeletVersion;
  return kubelet ? kubelet.replace(/\+.*$/, '') : machine.spec?.version;
}

/** Why the Machine's in-place update failed (its `Updating` condition, reason InPlaceUpdateFailed), if it did. */
export function inPlaceUpdateFailure(machine: {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}): string | undefined {
  const updating = machine.status?.conditions?.find((c) => c.type === 'Updating');
  return updating?.status === 'True' && updating.reason === 'InPlaceUpdateFailed'
    ? (updating.message ?? 'in-place update failed')
    : undefined;
}
