import type { V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  LABELS,
  RESOURCES,
  withConditions,
  type ConditionInput,
  type EtcdSnapshot,
  type EtcdSnapshotStatus,
  type Machine,
} from '@capstan/api';
import { type EventRecorder, type ReconcileResult, type ResourceClient } from '@capstan/kube';
import { savedEtcdSnapshotIn } from '@capstan/k3s-bootstrap';
import type { DeletionResult, ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import { snapshotDeleteCommand, snapshotSaveCommand, type S3Target } from './etcd-commands.js';
import { controlPlaneOf, etcdServers, planSecretOf, type EtcdCaches } from './etcd-servers.js';
import { advancePlanOperation, type OperationState } from './plan-operation.js';
import { S3CredentialsError, s3TargetOf } from './s3-credentials.js';

export const EtcdSnapshotReason = {
  WaitingForCluster: 'WaitingForCluster',
  WaitingForControlPlane: 'WaitingForControlPlane',
  WaitingForServer: 'WaitingForServer',
  S3CredentialsInvalid: 'S3CredentialsInvalid',
  Saving: 'Saving',
  Saved: 'Saved',
  SnapshotFailed: 'SnapshotFailed',
} as const;

/** How often a snapshot waiting on something outside the watched objects (a busy machine, a fixed Secret) looks again. */
const WAIT_MS = 10_000;

export interface EtcdSnapshotReconcilerDeps {
  caches: EtcdCaches;
  secrets: ResourceClient<V1Secret>;
  recorder: EventRecorder;
}

/**
 * One EtcdSnapshot: `k3s etcd-snapshot save` on one server of the cluster through its plan (the oldest server with a
 * Node), then the file's name, place, size and time from the command's output; deleting the object deletes the file
 * (from S3, or from the server that keeps it) the same way. A snapshot that failed stays Failed, with the reason: take
 * another.
 */
export class EtcdSnapshotReconciler implements ReconcilerParts<EtcdSnapshot> {
  constructor(private readonly deps: EtcdSnapshotReconcilerDeps) {}

  async reconcileNormal(scope: ReconcileScope<EtcdSnapshot>): Promise<ReconcileResult | void> {
    const snapshot = scope.obj;
    const phase = snapshot.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    const namespace = snapshot.metadata.namespace!;
    const cluster = this.deps.caches.clusters.getByName(namespace, snapshot.spec.clusterName);
    if (!cluster)
      return this.wait(
        scope,
        EtcdSnapshotReason.WaitingForCluster,
        `Cluster ${namespace}/${snapshot.spec.clusterName} not found`,
      );
    this.belongTo(scope, cluster.metadata.name!, cluster.metadata.uid!);
    const kcp = controlPlaneOf(this.deps.caches, cluster);
    if (!kcp)
      return this.wait(
        scope,
        EtcdSnapshotReason.WaitingForControlPlane,
        `Cluster ${cluster.metadata.name} has no K3sControlPlane`,
      );
    if (kcp.status?.initialization?.controlPlaneInitialized !== true) {
      return this.wait(
        scope,
        EtcdSnapshotReason.WaitingForControlPlane,
        `K3sControlPlane ${kcp.metadata.name} is not initialized`,
      );
    }
    let s3: S3Target | undefined;
    try {
      s3 = await s3TargetOf(this.deps.secrets, kcp);
    } catch (error) {
      if (error instanceof S3CredentialsError)
        return this.wait(scope, EtcdSnapshotReason.S3CredentialsInvalid, error.message);
      throw error;
    }
    const servers = etcdServers(this.deps.caches, kcp);
    const server = servers.find((m) => m.metadata.name === snapshot.status?.machineName) ?? servers[0];
    const secret = server && planSecretOf(this.deps.caches, server);
    if (!server || !secret)
      return this.wait(
        scope,
        EtcdSnapshotReason.WaitingForServer,
        'waiting for a server machine with a Node and a plan',
      );
    const command = snapshotSaveCommand(
      snapshot.spec.trigger === 'Scheduled' ? 'etcd-snapshot' : 'on-demand',
      s3,
    );
    const outcome = await advancePlanOperation(this.deps.secrets, secret, {
      id: snapshot.metadata.uid!,
      instruction: command.instruction,
      files: command.files,
      secrets: s3 ? [s3.secretKey, s3.accessKey] : [],
    });
    // The version the servers run (an upgrade waiting for this snapshot has a new spec.version already), and the
    // configuration a restore with restoreConfig All puts back.
    return this.apply(scope, server, outcome, {
      kubernetesVersion: kcp.status?.version ?? kcp.spec.version,
      // Recorded even when unset (as {}): All then puts back "nothing set", which differs from "not recorded".
      k3sConfigSpec: kcp.spec.k3sConfigSpec ?? {},
    });
  }

  private apply(
    scope: ReconcileScope<EtcdSnapshot>,
    server: Machine,
    outcome: OperationState,
    savedWith: Pick<EtcdSnapshotStatus, 'kubernetesVersion' | 'k3sConfigSpec'>,
  ): ReconcileResult | undefined {
    const machineName = server.metadata.name!;
    switch (outcome.state) {
      case 'busy':
        return this.wait(
          scope,
          EtcdSnapshotReason.WaitingForServer,
          `waiting for server ${machineName}: ${outcome.message}`,
        );
      case 'running':
        this.setStatus(
          scope,
          { phase: 'Running', machineName },
          {
            status: ConditionStatus.False,
            reason: EtcdSnapshotReason.Saving,
            message: `k3s etcd-snapshot save runs on ${machineName}`,
          },
        );
        return { requeueAfter: WAIT_MS * 3 };
      case 'failed':
        this.setStatus(
          scope,
          { phase: 'Failed', machineName },
          {
            status: ConditionStatus.False,
            reason: EtcdSnapshotReason.SnapshotFailed,
            message: `the snapshot failed on ${machineName}: ${outcome.message}`.slice(0, 1024),
          },
        );
        void this.deps.recorder.event(scope.obj, {
          type: 'Warning',
          reason: EtcdSnapshotReason.SnapshotFailed,
          action: 'Save',
          note: `the snapshot failed on ${machineName}`,
        });
        return undefined;
      case 'succeeded': {
        const saved = savedEtcdSnapshotIn(outcome.output);
        if (!saved) {
          this.setStatus(
            scope,
            { phase: 'Failed', machineName },
            {
              status: ConditionStatus.False,
              reason: EtcdSnapshotReason.SnapshotFailed,
              message: `k3s etcd-snapshot save on ${machineName} succeeded but did not say what it saved`,
            },
          );
          return undefined;
        }
        this.setStatus(
          scope,
          { phase: 'Succeeded', machineName, ...saved, ...savedWith },
          {
            status: ConditionStatus.True,
            reason: EtcdSnapshotReason.Saved,
            message: `saved to ${saved.location}`,
          },
        );
        void this.deps.recorder.event(scope.obj, {
          type: 'Normal',
          reason: EtcdSnapshotReason.Saved,
          action: 'Save',
          note: `${saved.fileName} (${saved.sizeBytes} bytes) saved to ${saved.location}`,
        });
        return undefined;
      }
    }
  }

  /**
   * The file goes with the object: from S3 through any server, or from the server that keeps it locally (gone with
   * that machine already when it is gone). A snapshot that never saved anything has nothing to delete.
   */
  async reconcileDelete(scope: ReconcileScope<EtcdSnapshot>): Promise<DeletionResult> {
    const snapshot = scope.obj;
    const fileName = snapshot.status?.fileName;
    if (snapshot.status?.phase !== 'Succeeded' && snapshot.status?.phase !== 'Deleting')
      return { done: true };
    if (!fileName) return { done: true };
    const cluster = this.deps.caches.clusters.getByName(
      snapshot.metadata.namespace!,
      snapshot.spec.clusterName,
    );
    const kcp = cluster && controlPlaneOf(this.deps.caches, cluster);
    if (!kcp) return { done: true };
    const inS3 = snapshot.status.location?.startsWith('s3://') === true;
    let s3: S3Target | undefined;
    try {
      s3 = inS3 ? await s3TargetOf(this.deps.secrets, kcp) : undefined;
    } catch (error) {
      if (!(error instanceof S3CredentialsError)) throw error;
      return this.leave(scope, `cannot delete ${fileName} from S3: ${error.message}`);
    }
    if (inS3 && !s3)
      return this.leave(scope, `cannot delete ${fileName}: the control plane no longer names its S3 store`);
    const servers = etcdServers(this.deps.caches, kcp);
    const server = inS3 ? servers[0] : servers.find((m) => m.metadata.name === snapshot.status?.machineName);
    if (!server)
      return inS3 ? this.leave(scope, `cannot delete ${fileName}: no server machine runs`) : { done: true };
    const secret = planSecretOf(this.deps.caches, server);
    if (!secret) return { requeueAfter: WAIT_MS };
    const command = snapshotDeleteCommand(fileName, s3);
    const outcome = await advancePlanOperation(this.deps.secrets, secret, {
      id: `delete-${snapshot.metadata.uid}`,
      instruction: command.instruction,
      files: command.files,
      secrets: s3 ? [s3.secretKey, s3.accessKey] : [],
    });
    if (outcome.state === 'succeeded') return { done: true };
    if (outcome.state === 'failed')
      return this.leave(scope, `deleting ${fileName} failed on ${server.metadata.name}: ${outcome.message}`);
    scope.obj.status = { ...scope.obj.status, phase: 'Deleting' };
    return { requeueAfter: WAIT_MS * 3 };
  }

  /** The file cannot be deleted: the object goes anyway (a stuck finalizer would hold the cluster), saying what stays. */
  private leave(scope: ReconcileScope<EtcdSnapshot>, note: string): DeletionResult {
    void this.deps.recorder.event(scope.obj, {
      type: 'Warning',
      reason: 'SnapshotFileLeft',
      action: 'Delete',
      note: note.slice(0, 1024),
    });
    return { done: true };
  }

  /** The cluster's label and an owner reference to the Cluster: the snapshot records go with their cluster. */
  private belongTo(scope: ReconcileScope<EtcdSnapshot>, clusterName: string, uid: string): void {
    const meta = scope.obj.metadata;
    meta.labels = { ...meta.labels, [LABELS.clusterName]: clusterName };
    if (!(meta.ownerReferences ?? []).some((o) => o.uid === uid)) {
      meta.ownerReferences = [
        ...(meta.ownerReferences ?? []),
        { apiVersion: RESOURCES.Cluster.apiVersion, kind: RESOURCES.Cluster.kind, name: clusterName, uid },
      ];
    }
  }

  private wait(scope: ReconcileScope<EtcdSnapshot>, reason: string, message: string): ReconcileResult {
    this.setStatus(scope, { phase: 'Pending' }, { status: ConditionStatus.False, reason, message });
    return { requeueAfter: WAIT_MS };
  }

  private setStatus(
    scope: ReconcileScope<EtcdSnapshot>,
    status: Partial<EtcdSnapshotStatus>,
    ready: Omit<ConditionInput, 'type'>,
  ): void {
    const obj = scope.obj;
    obj.status = {
      ...obj.status,
      ...status,
      observedGeneration: obj.metadata.generation,
      conditions: withConditions(
        obj.status?.conditions,
        [{ type: 'Ready', ...ready }],
        obj.metadata.generation,
      ),
    };
  }
}
