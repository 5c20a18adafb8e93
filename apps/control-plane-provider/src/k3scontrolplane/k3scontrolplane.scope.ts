import type { Logger } from 'pino';
import type { Cluster, K3sControlPlane, Machine } from '@capstan/api';
import type { EventRecorder } from '@capstan/kube';
import type { ReconcileScope } from '@capstan/provider-kit';
import type { ControlPlaneMachine } from '../planning/control-plane-machine.js';

/** What the phases of one reconcile of a K3sControlPlane with a Cluster share. */
export interface ControlPlaneScope {
  /**
   * The reconciler kit's scope. `kit.obj` is the K3sControlPlane this reconcile changes; an early write
   * (`kit.patchNow()`) replaces it, so phases read it from here rather than keeping their own reference.
   */
  readonly kit: ReconcileScope<K3sControlPlane>;
  readonly cluster: Cluster;
  readonly clusterName: string;
  readonly now: Date;
  /** The Machines it controls, as the cache shows them, deleting ones included. */
  readonly machines: readonly Machine[];
  /** What the planner and the status know of each of them. */
  readonly facts: readonly ControlPlaneMachine[];
  readonly log: Logger;
  /** A Normal Kubernetes Event on the K3sControlPlane (never a secret in the note). */
  record(reason: string, action: string, note: string): Promise<unknown>;
}

/** A Normal Kubernetes Event on `kcp`. */
export function recordOn(
  recorder: EventRecorder,
  kcp: K3sControlPlane,
  reason: string,
  action: string,
  note: string,
): Promise<unknown> {
  return recorder.event(kcp, { type: 'Normal', reason, action, note });
}
