import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  IN_PLACE_ANNOTATIONS,
  toRFC3339,
  updateInProgress,
  type ConditionInput,
  type Machine,
} from '@capstan/api';
import type { V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '@capstan/kube';
import type { Logger } from 'pino';
import { describeDrain, drainDone, drainNode } from '../../remote/drain.js';
import { cordonNode, readNode, uncordonNode } from '../../remote/nodes.js';
import type { NodeLookup } from './machine.node.js';
import { DRAIN_RETRY_MS, drainRetryAfter, elapsedSeconds } from './machine.deletion.js';
import type { MachineObservation } from './machine.status.js';

// The Machine controller's half of an in-place update (docs/in-place-updates.md). A Machine carrying
// `update-in-progress` is drained when the update restarts K3s (cordon first; `exclude-node-draining` and the
// drain timeout as for deletion), then marked `ready-to-update` so its bootstrap provider writes the new plan. When
// the provider reports the target Succeeded (and the Node is Ready on the new version) the node is uncordoned, the
// annotations go and `Updating` turns False. A failed update keeps `Updating` True with the provider's message.

export interface InPlaceStep {
  /** The `Updating` condition. */
  updating: ConditionInput;
  requeueAfter?: number;
}

/** How often a running update is looked at when no event says it moved (the bootstrap provider announces it). */
export const UPDATE_POLL_MS = 15_000;

const notUpdating: ConditionInput = {
  type: ConditionType.Updating,
  status: ConditionStatus.False,
  reason: ConditionReason.NotUpdating,
};

function updating(message: string, failed = false): ConditionInput {
  return {
    type: ConditionType.Updating,
    status: ConditionStatus.True,
    reason: failed ? ConditionReason.InPlaceUpdateFailed : ConditionReason.InPlaceUpdating,
    message: `* ${message}`,
  };
}

function setAnnotations(machine: Machine, changes: Record<string, string | undefined>): void {
  const annotations = { ...machine.metadata.annotations };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete annotations[key];
    else annotations[key] = value;
  }
  machine.metadata.annotations = annotations;
}

/** The Node runs the Machine's version (K3s reports `v1.35.4+k3s1` for `v1.35.4`). */
function nodeOnVersion(lookup: NodeLookup, version: string | undefined): boolean {
  if (lookup.observation.state !== 'found') return false;
  const node = lookup.observation.node;
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const kubelet = node.status?.nodeInfo?.kubeletVersion ?? '';
  return ready && (!version || kubelet === version || kubelet.startsWith(`${version}+`));
}

/** What the drain before a restart can do with what the Node lookup found. */
type DrainBeforeRestart =
  /** The Node is there and its cluster answers: cordon and drain it. */
  | { kind: 'drain'; node: V1Node; client: KubeClient }
  /** The Machine's Node is gone: nothing is left on it to evict (upstream's drain on deletion skips it too). */
  | { kind: 'skip'; node: string }
  /** The Node may hold pods that cannot be evicted now: the restart waits (`why` goes into the condition). */
  | { kind: 'wait'; node: string; why: string }
  /** The Machine never had a Node: K3s restarts with nothing scheduled on it. */
  | { kind: 'none' };

/**
 * Whether the node can be drained before K3s restarts. A workload cluster that does not answer (or cannot be reached
 * for want of a kubeconfig) is waited for: a restart without the drain would stop its pods with no eviction and no
 * PodDisruptionBudget. A Node not found in an answering cluster is decided as upstream's drain on deletion decides
 * (machine_controller.go drainNode: "Could not find Node from Machine.status.nodeRef, skipping Node drain"): its pods
 * went with it.
 */
function drainBeforeRestart(machine: Machine, lookup: NodeLookup): DrainBeforeRestart {
  const observed = lookup.observation;
  const nodeName = machine.status?.nodeRef?.name;
  if (observed.state === 'found' && lookup.access) return { kind: 'drain', node: observed.node, client: lookup.access.client };
  if (observed.state === 'notFound') return nodeName ? { kind: 'skip', node: nodeName } : { kind: 'none' };
  const node = nodeName ?? `of providerID ${machine.spec.providerID ?? '(none)'}`;
  if (observed.state === 'connectionDown') return { kind: 'wait', node, why: observed.message };
  // Still waiting for the cluster or its kubeconfig: a Machine that had a Node (or reports a providerID) may have one.
  if (nodeName || machine.spec.providerID) {
    return { kind: 'wait', node, why: observed.state === 'waiting' ? observed.message : 'the Node was not looked up' };
  }
  return { kind: 'none' };
}

/** The reconcile's copy of the Machine and its early write (the reconciler kit's scope). */
export interface MachineWriteScope {
  obj: Machine;
  patchNow(): Promise<Machine>;
}

/** One step of the Machine's in-place update; changes the Machine's annotations on the reconcile's copy. */
export async function reconcileInPlaceUpdate(
  scope: MachineWriteScope,
  observation: MachineObservation,
  lookup: NodeLookup,
  now: Date,
  log: Logger,
): Promise<InPlaceStep> {
  const machine = scope.obj;
  const annotations = machine.metadata.annotations ?? {};
  const target = updateInProgress(annotations);
  if (!target) return { updating: notUpdating };
  const node = lookup.observation.state === 'found' ? lookup.observation.node : undefined;
  const client = lookup.access?.client;

  if (annotations[IN_PLACE_ANNOTATIONS.readyToUpdate] !== target) {
    const restart = annotations[IN_PLACE_ANNOTATIONS.restart] === 'true';
    const excluded = annotations[ANNOTATIONS.excludeNodeDraining] !== undefined;
    const drain = restart && !excluded ? drainBeforeRestart(machine, lookup) : { kind: 'none' as const };
    if (drain.kind === 'wait') {
      return { updating: updating(`Cannot drain Node ${drain.node} before the update: ${drain.why}`), requeueAfter: DRAIN_RETRY_MS };
    }
    if (drain.kind === 'drain') {
      const { node, client } = drain;
      let cordonedAt = annotations[IN_PLACE_ANNOTATIONS.cordoned];
      if (!cordonedAt) {
        // Only a node this update cordoned is uncordoned after it (one a user cordoned stays so). Recorded before
        // the node is touched: a write lost to a conflict must not leave a cordon nobody will lift.
        // Read fresh: a cache still showing the cordon of an update that just ended would make it look pre-existing.
        const fresh = await readNode(client, node.metadata!.name!);
        cordonedAt = fresh?.spec?.unschedulable === true ? 'pre-existing' : toRFC3339(now);
        setAnnotations(scope.obj, { [IN_PLACE_ANNOTATIONS.cordoned]: cordonedAt });
        await scope.patchNow();
      }
      if (await cordonNode(client, node)) log.info({ node: node.metadata?.name, target }, 'node cordoned for an in-place update');
      const timeout = machine.spec.deletion?.nodeDrainTimeoutSeconds ?? 0;
      const started = cordonedAt && cordonedAt !== 'pre-existing' ? cordonedAt : undefined;
      const timedOut = timeout > 0 && elapsedSeconds(started, now) > timeout;
      const result = await drainNode(client, node.metadata!.name!);
      if (!drainDone(result) && !timedOut) {
        return {
          updating: updating(`Draining Node ${node.metadata?.name} before the update: ${describeDrain(result)}`),
          // Backing off from when this update cordoned the node (a node cordoned before has no start to go by).
          requeueAfter: started ? drainRetryAfter(started, now, timeout) : DRAIN_RETRY_MS,
        };
      }
      if (timedOut) log.info({ node: node.metadata?.name, timeoutSeconds: timeout }, 'drain timed out: updating anyway');
    }
    if (drain.kind === 'skip') log.info({ node: drain.node, target }, 'Node not found: updating without a drain');
    setAnnotations(scope.obj, { [IN_PLACE_ANNOTATIONS.readyToUpdate]: target });
    log.info({ target, restart }, 'in-place update may start');
    const note = drain.kind === 'skip' ? ` (Node ${drain.node} not found: not drained)` : '';
    return { updating: updating(`Updating in place to ${target}${note}`), requeueAfter: UPDATE_POLL_MS };
  }

  const reported =
    observation.bootstrap.state === 'found' ? observation.bootstrap.contract.inPlaceUpdate : undefined;
  if (reported?.target === target && reported.state === 'Failed') {
    return { updating: updating(`In-place update to ${target} failed: ${reported.message ?? 'no detail'}`, true) };
  }
  if (reported?.target !== target || reported.state !== 'Succeeded') {
    return { updating: updating(`Updating in place to ${target}: waiting for the machine plan`), requeueAfter: UPDATE_POLL_MS };
  }
  if (!nodeOnVersion(lookup, machine.spec.version)) {
    return {
      updating: updating(`Updating in place to ${target}: waiting for Node to be Ready on ${machine.spec.version ?? 'its version'}`),
      requeueAfter: DRAIN_RETRY_MS,
    };
  }
  if (node && client && annotations[IN_PLACE_ANNOTATIONS.cordoned] && annotations[IN_PLACE_ANNOTATIONS.cordoned] !== 'pre-existing') {
    await uncordonNode(client, node.metadata!.name!);
    log.info({ node: node.metadata?.name, target }, 'node uncordoned after the in-place update');
  }
  setAnnotations(scope.obj, {
    [IN_PLACE_ANNOTATIONS.updateInProgress]: undefined,
    [IN_PLACE_ANNOTATIONS.readyToUpdate]: undefined,
    [IN_PLACE_ANNOTATIONS.restart]: undefined,
    [IN_PLACE_ANNOTATIONS.cordoned]: undefined,
  });
  log.info({ target }, 'in-place update done');
  return { updating: notUpdating };
}
