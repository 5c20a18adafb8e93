import {
  ANNOTATIONS,
  ConditionReason,
  DEFAULT_NODE_DELETION_TIMEOUT_SECONDS,
  HOOK_ANNOTATION_PREFIXES,
  hasHookAnnotation,
  toRFC3339,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
  type MachineDeletionStatus,
} from '@capstan/api';
import { type Logger } from 'pino';
import { DELETION_POLL_MS } from '../shared/requeue-delays.js';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { describeDrain, drainDone, drainNode } from '../../remote/drain.js';
import { cordonNode, deleteNode } from '../../remote/nodes.js';
import { type NodeLookup } from './machine.node.js';

/**
 * The longest wait between drain passes while pods are left (upstream requeues every 20 s), and the wait of the other
 * deletion steps that poll the workload cluster (its connection, volume detach, Node deletion).
 */
export const DRAIN_RETRY_MS = 5_000;
/** The first wait: evicted pods usually terminate within a second, and nothing wakes the Machine when they go. */
export const DRAIN_FIRST_RETRY_MS = 1_000;

export interface MachineDeletionState {
  machine: Machine;
  cluster: Cluster | undefined;
  node: NodeLookup;
  /** Control plane Machines of the cluster not being deleted (this one excluded when it is deleting). */
  activeControlPlaneMachines: number;
  bootstrap?: ExternalRead;
  infrastructure?: ExternalRead;
}

export interface MachineDeletionStep {
  reason: string;
  message: string;
  done: boolean;
  requeueAfter?: number;
  /** `status.deletion` as it should be after this step. */
  deletion?: MachineDeletionStatus;
}

function hookNames(machine: Machine, prefix: string): string {
  return Object.keys(machine.metadata?.annotations ?? {})
    .filter((key) => key === prefix || key.startsWith(`${prefix}/`))
    .sort()
    .join(', ');
}

export const elapsedSeconds = (since: string | Date | undefined, now: Date) =>
  since === undefined ? 0 : (now.getTime() - new Date(since).getTime()) / 1000;

/**
 * When the next drain pass runs: after as long as the drain has taken so far (1 s, 1 s, 2 s, 4 s), at least
 * DRAIN_FIRST_RETRY_MS and at most DRAIN_RETRY_MS, so a drain whose pods go quickly ends quickly and a long one
 * (a PodDisruptionBudget holding) is looked at every DRAIN_RETRY_MS; and no later than a second past
 * nodeDrainTimeoutSeconds, so a drain that times out is given up on time.
 */
export function drainRetryAfter(
  nodeDrainStartTime: string | undefined,
  now: Date,
  nodeDrainTimeoutSeconds = 0,
): number {
  const elapsedMs = elapsedSeconds(nodeDrainStartTime, now) * 1000;
  const backoff = Math.min(DRAIN_RETRY_MS, Math.max(DRAIN_FIRST_RETRY_MS, elapsedMs));
  if (nodeDrainTimeoutSeconds <= 0) return backoff;
  // Past the timeout by up to a second: nodeDrainStartTime is in whole seconds, so the drain ran its full time.
  return Math.min(backoff, Math.max(100, nodeDrainTimeoutSeconds * 1000 - elapsedMs + 1000));
}

/**
 * One step of deleting a Machine, in upstream's order (machine_controller.go reconcileDelete): pre-drain hooks,
 * cordon and drain (not when the whole Cluster goes, nor with the exclude-node-draining annotation, and no longer
 * than nodeDrainTimeoutSeconds), volume detach, pre-terminate hooks, the infrastructure and bootstrap objects,
 * then the Node (not when no control plane machine of a running cluster would remain).
 */
export async function nextMachineDeletionStep(
  state: MachineDeletionState,
  deps: { external: ExternalObjects; log: Logger; now: Date },
): Promise<MachineDeletionStep> {
  const { machine, cluster, now } = { ...state, now: deps.now };
  const namespace = machine.metadata!.namespace!;
  const deletion: MachineDeletionStatus = { ...(machine.status?.deletion ?? {}) };
  const annotations = machine.metadata?.annotations;

  if (hasHookAnnotation(annotations, HOOK_ANNOTATION_PREFIXES.preDrain)) {
    deletion.waitForPreDrainHookStartTime ??= toRFC3339(now);
    return {
      reason: ConditionReason.WaitingForPreDrainHook,
      message: `Waiting for pre-drain hooks to succeed (hooks: ${hookNames(machine, HOOK_ANNOTATION_PREFIXES.preDrain)})`,
      done: false,
      deletion,
    };
  }

  // When the whole Cluster goes, its nodes go with it: no drain, no volume detach wait, no node deletion.
  const clusterGoing = !cluster || !!cluster.metadata?.deletionTimestamp;
  const nodeName = machine.status?.nodeRef?.name;
  const node = state.node.observation.state === 'found' ? state.node.observation.node : undefined;
  const access = state.node.access;

  const excluded = annotations?.[ANNOTATIONS.excludeNodeDraining] !== undefined;
  const drainTimeout = machine.spec.deletion?.nodeDrainTimeoutSeconds ?? 0;
  const drainTimedOut = () =>
    drainTimeout > 0 && elapsedSeconds(deletion.nodeDrainStartTime, now) > drainTimeout;
  if (nodeName && !clusterGoing && !excluded && state.node.observation.state === 'connectionDown') {
    deletion.nodeDrainStartTime ??= toRFC3339(now);
    if (!drainTimedOut()) {
      return {
        reason: ConditionReason.DrainingNode,
        message: `Cannot drain Node ${nodeName} yet: ${state.node.observation.message}`,
        done: false,
        requeueAfter: DRAIN_RETRY_MS,
        deletion,
      };
    }
  }

  if (nodeName && !clusterGoing && node && access) {
    deletion.nodeDrainStartTime ??= toRFC3339(now);
    const timedOut = drainTimedOut();
    if (!excluded && !timedOut) {
      await cordonNode(access.client, node);
      const result = await drainNode(access.client, nodeName);
      if (!drainDone(result)) {
        return {
          reason: ConditionReason.DrainingNode,
          message: `Drain not completed yet (started at ${deletion.nodeDrainStartTime}): ${describeDrain(result)}`,
          done: false,
          requeueAfter: drainRetryAfter(deletion.nodeDrainStartTime, now, drainTimeout),
          deletion,
        };
      }
    } else if (timedOut) {
      deps.log.info(
        { node: nodeName, timeoutSeconds: drainTimeout },
        'node drain timed out: going on without it',
      );
    }

    const attached = node.status?.volumesAttached ?? [];
    const detachExcluded = annotations?.[ANNOTATIONS.excludeWaitForNodeVolumeDetach] !== undefined;
    const detachTimeout = machine.spec.deletion?.nodeVolumeDetachTimeoutSeconds ?? 0;
    if (attached.length > 0 && !detachExcluded) {
      deletion.waitForNodeVolumeDetachStartTime ??= toRFC3339(now);
      const detachTimedOut =
        detachTimeout > 0 && elapsedSeconds(deletion.waitForNodeVolumeDetachStartTime, now) > detachTimeout;
      if (!detachTimedOut) {
        return {
          reason: ConditionReason.WaitingForVolumeDetach,
          message: `Waiting for Node volumes to be detached (${attached.length} attached)`,
          done: false,
          requeueAfter: DRAIN_RETRY_MS,
          deletion,
        };
      }
    }
  }

  if (hasHookAnnotation(annotations, HOOK_ANNOTATION_PREFIXES.preTerminate)) {
    deletion.waitForPreTerminateHookStartTime ??= toRFC3339(now);
    return {
      reason: ConditionReason.WaitingForPreTerminateHook,
      message: `Waiting for pre-terminate hooks to succeed (hooks: ${hookNames(machine, HOOK_ANNOTATION_PREFIXES.preTerminate)})`,
      done: false,
      deletion,
    };
  }

  const deleteReferenced = async (
    ref: ContractVersionedObjectReference | undefined,
    read: ExternalRead | undefined,
  ) => ref !== undefined && read?.state === 'found' && (await deps.external.deleteAndCheck(namespace, ref));
  const infraRef = machine.spec.infrastructureRef;
  const bootstrapRef = machine.spec.bootstrap?.configRef;
  const [infraLeft, bootstrapLeft] = await Promise.all([
    deleteReferenced(infraRef, state.infrastructure),
    deleteReferenced(bootstrapRef, state.bootstrap),
  ]);
  if (infraLeft) {
    return {
      reason: ConditionReason.WaitingForInfrastructureDeletion,
      message: `${infraRef.kind} ${infraRef.name} is being deleted`,
      done: false,
      requeueAfter: DELETION_POLL_MS,
      deletion,
    };
  }
  if (bootstrapLeft) {
    return {
      reason: ConditionReason.WaitingForBootstrapDeletion,
      message: `${bootstrapRef!.kind} ${bootstrapRef!.name} is being deleted`,
      done: false,
      requeueAfter: DELETION_POLL_MS,
      deletion,
    };
  }

  // Upstream isDeleteNodeAllowed: with no control plane machine left, the Node of the last one (and any other) stays;
  // deleting it would take the cluster's last API endpoint's Node away while the cluster is meant to run.
  const lastControlPlane = state.activeControlPlaneMachines === 0;
  if (nodeName && !clusterGoing && access && lastControlPlane) {
    deps.log.info({ node: nodeName }, 'Node kept: no control plane machine of the cluster would remain');
  }
  if (nodeName && !clusterGoing && access && !lastControlPlane) {
    const timeout =
      machine.spec.deletion?.nodeDeletionTimeoutSeconds ?? DEFAULT_NODE_DELETION_TIMEOUT_SECONDS;
    try {
      await deleteNode(access.client, nodeName);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (timeout === 0 || elapsedSeconds(machine.metadata?.deletionTimestamp, now) <= timeout) {
        return {
          reason: ConditionReason.DeletingNode,
          message: `Deleting Node ${nodeName} failed: ${message}`,
          done: false,
          requeueAfter: DRAIN_RETRY_MS,
          deletion,
        };
      }
      deps.log.warn({ node: nodeName, err: { message } }, 'node deletion timed out: going on without it');
    }
  }
  return { reason: ConditionReason.DeletionCompleted, message: '', done: true, deletion };
}
