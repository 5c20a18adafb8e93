import type { V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  LABELS,
  RESOURCES,
  withConditions,
  type Cluster,
  type ConditionInput,
  type EtcdSnapshot,
  type K3sConfig,
  type K3sControlPlane,
  type K3sControlPlaneEtcdRestoreSpec,
  type K3sControlPlaneEtcdRestoreStatus,
} from '@capstan/api';
import {
  canonicalJson,
  isAlreadyExists,
  type EventRecorder,
  type Informer,
  type JsonPatchOperation,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import type { ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import { CronScheduleError, nextCronTime, parseCronSchedule } from './cron-schedule.js';
import { clusterResetCommand, type S3Target } from './etcd-commands.js';
import { clusterOfControlPlane, etcdServers, planSecretOf, type EtcdCaches } from './etcd-servers.js';
import { advancePlanOperation } from './plan-operation.js';
import { S3CredentialsError, s3TargetOf } from './s3-credentials.js';
import { timestampMs } from '../planning/machine-facts.js';
import { UpgradeGuard } from './upgrade-guard.js';
import { CertificateRotation } from './certificate-rotation.js';
import { EncryptionKeyRotation } from './encryption-key-rotation.js';
import type { failingGate } from './workload-gates.js';

/** The conditions of the etcd operations controller on a K3sControlPlane (a second controller of the kind). */
export const EtcdCondition = {
  SnapshotsScheduled: 'EtcdSnapshotsScheduled',
  SnapshotRestored: 'EtcdSnapshotRestored',
  /** Set False when one of its reconciles fails part way. */
  OperationsReconciled: 'EtcdOperationsReconciled',
} as const;

/** On a Cluster this controller paused for a restore: the restore's generation (only it unpauses). */
export const PAUSED_FOR_RESTORE_ANNOTATION = 'controlplane.capstan.dev/paused-for-etcd-restore';

/** On a Scheduled EtcdSnapshot: the schedule time it was taken for (the next one is computed from it). */
export const SCHEDULED_AT_ANNOTATION = 'controlplane.capstan.dev/scheduled-at';

const DEFAULT_RETENTION = 5;
/** Schedule times looked at to find the latest one due (a week of a five-minute schedule is 2016). */
const MAX_CATCH_UP_STEPS = 100_000;
const WAIT_MS = 10_000;

export interface Day2ReconcilerDeps {
  caches: EtcdCaches;
  snapshots: Pick<Informer<EtcdSnapshot>, 'list' | 'getByName'>;
  snapshotClient: ResourceClient<EtcdSnapshot>;
  clusterClient: ResourceClient<Cluster>;
  controlPlaneClient: ResourceClient<K3sControlPlane>;
  /** Where a server's certificate expiry is written (its K3sConfig's certificates-expiry annotation). */
  configClient: ResourceClient<K3sConfig>;
  /** The upgrade guard's health gates (a real workload client by default). */
  gates?: typeof failingGate;
  secrets: ResourceClient<V1Secret>;
  recorder: EventRecorder;
  now?: () => Date;
}

/**
 * The etcd operations of a K3sControlPlane, beside its own controller (Rancher's planner runs them before its full
 * reconcile): scheduled snapshots and their retention, and restores asked for in `spec.etcdSnapshotRestore`. It
 * runs while the Cluster is paused: a restore pauses it, and must finish.
 */
export class Day2Reconciler implements ReconcilerParts<K3sControlPlane> {
  private readonly upgrades: UpgradeGuard;
  private readonly certificates: CertificateRotation;
  private readonly encryptionKeys: EncryptionKeyRotation;

  constructor(private readonly deps: Day2ReconcilerDeps) {
    this.encryptionKeys = new EncryptionKeyRotation({
      caches: deps.caches,
      secrets: deps.secrets,
      recorder: deps.recorder,
    });
    this.certificates = new CertificateRotation({
      caches: deps.caches,
      secrets: deps.secrets,
      configs: deps.configClient,
      recorder: deps.recorder,
    });
    this.upgrades = new UpgradeGuard({
      snapshots: deps.snapshots,
      snapshotClient: deps.snapshotClient,
      controlPlaneClient: deps.controlPlaneClient,
      secrets: deps.caches.secrets,
      recorder: deps.recorder,
      ...(deps.gates && { gates: deps.gates }),
    });
  }

  private clock(): Date {
    return (this.deps.now ?? (() => new Date()))();
  }

  async reconcileNormal(scope: ReconcileScope<K3sControlPlane>): Promise<ReconcileResult | void> {
    const kcp = scope.obj;
    const cluster = clusterOfControlPlane(this.deps.caches, kcp);
    if (!cluster) return;
    const delays = [
      await this.restore(scope, cluster),
      await this.schedule(scope, cluster),
      await this.upgrades.reconcile(scope, cluster, this.clock()),
      await this.certificates.reconcile(scope, this.clock()),
      await this.encryptionKeys.reconcile(scope, this.clock()),
    ].filter((d): d is number => d !== undefined);
    return delays.length > 0 ? { requeueAfter: Math.min(...delays) } : undefined;
  }

  // --- scheduled snapshots ---------------------------------------------------------------------------------------

  private async schedule(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const cron = kcp.spec.etcd?.snapshotScheduleCron;
    if (!cron) {
      scope.obj.status = {
        ...scope.obj.status,
        conditions: (scope.obj.status?.conditions ?? []).filter(
          (c) => c.type !== EtcdCondition.SnapshotsScheduled,
        ),
      };
      return undefined;
    }
    let schedule;
    try {
      schedule = parseCronSchedule(cron);
    } catch (error) {
      if (!(error instanceof CronScheduleError)) throw error;
      this.condition(scope, {
        type: EtcdCondition.SnapshotsScheduled,
        status: ConditionStatus.False,
        reason: 'InvalidSchedule',
        message: `spec.etcd.snapshotScheduleCron: ${error.message}`,
      });
      return undefined;
    }
    if (kcp.status?.initialization?.controlPlaneInitialized !== true) {
      this.condition(scope, {
        type: EtcdCondition.SnapshotsScheduled,
        status: ConditionStatus.False,
        reason: 'WaitingForControlPlane',
        message: 'snapshots start once the control plane is initialized',
      });
      return undefined;
    }
    const namespace = kcp.metadata.namespace!;
    const clusterName = cluster.metadata.name!;
    const scheduled = this.deps.snapshots
      .list(namespace)
      .filter((s) => s.spec.clusterName === clusterName && s.spec.trigger === 'Scheduled')
      .sort((a, b) => scheduledAt(b) - scheduledAt(a));
    const now = this.clock();
    // From the last snapshot's time (or the control plane's creation), to the latest time due: times missed while
    // the provider was down make one snapshot, not one each.
    let due = nextCronTime(
      schedule,
      new Date(
        scheduled[0]
          ? scheduledAt(scheduled[0])
          : timestampMs(kcp.metadata.creationTimestamp) || now.getTime(),
      ),
    );
    let latest: Date | undefined;
    for (let steps = 0; due && due.getTime() <= now.getTime() && steps < MAX_CATCH_UP_STEPS; steps++) {
      latest = due;
      due = nextCronTime(schedule, due);
    }
    if (latest) await this.createScheduled(namespace, clusterName, latest);
    if (due && due.getTime() <= now.getTime()) due = nextCronTime(schedule, now);
    await this.prune(scheduled, kcp.spec.etcd?.snapshotRetention ?? DEFAULT_RETENTION);
    if (!due) {
      this.condition(scope, {
        type: EtcdCondition.SnapshotsScheduled,
        status: ConditionStatus.False,
        reason: 'InvalidSchedule',
        message: `spec.etcd.snapshotScheduleCron "${cron}" names no time in the next five years`,
      });
      return undefined;
    }
    this.condition(scope, {
      type: EtcdCondition.SnapshotsScheduled,
      status: ConditionStatus.True,
      reason: 'Scheduled',
      message: `next snapshot at ${due.toISOString()}; keeping ${kcp.spec.etcd?.snapshotRetention ?? DEFAULT_RETENTION}`,
    });
    return Math.max(1000, due.getTime() - now.getTime());
  }

  /** One Scheduled snapshot per due time: its name says the time, so a repeated reconcile makes no second one. */
  private async createScheduled(namespace: string, clusterName: string, due: Date): Promise<void> {
    const name = `${clusterName}-etcd-snapshot-${Math.floor(due.getTime() / 1000)}`.slice(0, 253);
    try {
      await this.deps.snapshotClient.create({
        apiVersion: RESOURCES.EtcdSnapshot.apiVersion,
        kind: RESOURCES.EtcdSnapshot.kind,
        metadata: {
          name,
          namespace,
          labels: { [LABELS.clusterName]: clusterName },
          annotations: { [SCHEDULED_AT_ANNOTATION]: due.toISOString() },
        },
        spec: { clusterName, trigger: 'Scheduled' },
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }

  /** Scheduled snapshots beyond the retention go, oldest first (their files with them); running ones stay. */
  private async prune(newestFirst: readonly EtcdSnapshot[], retention: number): Promise<void> {
    const settled = newestFirst.filter(
      (s) =>
        !s.metadata.deletionTimestamp && (s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed'),
    );
    for (const old of settled.slice(retention)) {
      await this.deps.snapshotClient
        .delete({ namespace: old.metadata.namespace, name: old.metadata.name! })
        .catch(() => undefined);
    }
  }

  // --- restore ---------------------------------------------------------------------------------------------------

  private async restore(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const wanted = kcp.spec.etcdSnapshotRestore;
    if (!wanted) return undefined;
    const recorded = kcp.status?.etcdSnapshotRestore;
    let status: K3sControlPlaneEtcdRestoreStatus =
      recorded && recorded.generation === wanted.generation && recorded.name === wanted.name
        ? recorded
        : { name: wanted.name, generation: wanted.generation, phase: 'Started' };
    if (status !== recorded) this.setRestore(scope, status);
    if (status.phase === 'Finished' || status.phase === 'Failed') return undefined;

    const namespace = kcp.metadata.namespace!;
    const snapshot = this.deps.snapshots.getByName(namespace, wanted.name);
    const refuse = (message: string) => this.finishRestore(scope, cluster, status, 'Failed', message);
    if (!snapshot) return refuse(`EtcdSnapshot ${namespace}/${wanted.name} does not exist`);
    if (snapshot.spec.clusterName !== cluster.metadata.name) {
      return refuse(
        `EtcdSnapshot ${wanted.name} is a snapshot of cluster ${snapshot.spec.clusterName}, not of ${cluster.metadata.name}: a cluster restores only its own snapshots`,
      );
    }
    if (snapshot.status?.phase !== 'Succeeded' || !snapshot.status.fileName) {
      return refuse(
        `EtcdSnapshot ${wanted.name} has not been saved (phase ${snapshot.status?.phase ?? 'Pending'}); choose one that Succeeded`,
      );
    }
    const inS3 = snapshot.status.location?.startsWith('s3://') === true;
    let s3: S3Target | undefined;
    if (inS3) {
      try {
        s3 = await s3TargetOf(this.deps.secrets, kcp);
      } catch (error) {
        if (error instanceof S3CredentialsError)
          return refuse(`cannot download ${snapshot.status.fileName}: ${error.message}`);
        throw error;
      }
      if (!s3)
        return refuse(`EtcdSnapshot ${wanted.name} is in S3, and spec.etcd.s3 no longer names the store`);
    }
    const servers = etcdServers(this.deps.caches, kcp);
    const server = status.machineName
      ? servers.find((m) => m.metadata.name === status.machineName)
      : inS3
        ? servers[0]
        : servers.find((m) => m.metadata.name === snapshot.status?.machineName);
    if (!server) {
      if (!inS3 && !status.machineName) {
        return refuse(
          `EtcdSnapshot ${wanted.name} is kept on machine ${snapshot.status.machineName}, which no longer runs: only snapshots in S3 outlive their server`,
        );
      }
      return WAIT_MS;
    }
    const secret = planSecretOf(this.deps.caches, server);
    if (!secret) return WAIT_MS;

    if (status.phase === 'Started') {
      if (wanted.restoreConfig === 'All' && !snapshot.status.k3sConfigSpec) {
        return refuse(
          `EtcdSnapshot ${wanted.name} does not record the configuration it was saved with (it was saved before snapshots recorded it): restore it with restoreConfig KubernetesVersion or None`,
        );
      }
      await this.restoreConfiguration(kcp, wanted, snapshot);
      await this.pause(cluster, wanted.generation);
      status = { ...status, phase: 'Restoring', machineName: server.metadata.name! };
      this.setRestore(
        scope,
        status,
        'Restoring',
        `restoring ${snapshot.status.fileName} on ${server.metadata.name}; the Cluster is paused`,
      );
      void this.deps.recorder.event(kcp, {
        type: 'Normal',
        reason: 'EtcdRestoreStarted',
        action: 'Restore',
        note: `restoring ${snapshot.status.fileName} on ${server.metadata.name}`,
      });
    }
    const command = clusterResetCommand(snapshot.status.fileName, s3);
    const outcome = await advancePlanOperation(this.deps.secrets, secret, {
      id: `restore-${kcp.metadata.uid}-${wanted.generation}`,
      instruction: command.instruction,
      files: command.files,
      secrets: s3 ? [s3.secretKey, s3.accessKey] : [],
    });
    if (outcome.state === 'succeeded') {
      return this.finishRestore(
        scope,
        cluster,
        status,
        'Finished',
        `restored ${snapshot.status.fileName} (saved ${snapshot.status.createdAt ?? 'earlier'}) on ${server.metadata.name}`,
      );
    }
    if (outcome.state === 'failed') {
      return this.finishRestore(
        scope,
        cluster,
        status,
        'Failed',
        `the restore failed on ${server.metadata.name}: ${outcome.message}. The snapshot is checked before anything changes, so the cluster keeps the data it had; fix the cause and raise spec.etcdSnapshotRestore.generation to try again`,
      );
    }
    if (outcome.state === 'busy')
      this.setRestore(scope, status, 'Restoring', `waiting for ${server.metadata.name}: ${outcome.message}`);
    return WAIT_MS * 3;
  }

  /**
   * Rancher's restoreRKEConfig, before the reset (the rollout to what comes back waits for the restore, which pauses
   * the Cluster): KubernetesVersion sets spec.version back to the version the snapshot was saved with; All also puts
   * back spec.k3sConfigSpec as it was then (replaced whole: a merge would keep fields added since).
   */
  private async restoreConfiguration(
    kcp: K3sControlPlane,
    wanted: K3sControlPlaneEtcdRestoreSpec,
    snapshot: EtcdSnapshot,
  ): Promise<void> {
    const restoreConfig = wanted.restoreConfig ?? 'None';
    if (restoreConfig === 'None') return;
    const ref = { namespace: kcp.metadata.namespace!, name: kcp.metadata.name! };
    const restored: string[] = [];
    const version = snapshot.status?.kubernetesVersion;
    const patch: JsonPatchOperation[] = [];
    if (version && kcp.spec.version !== version) {
      patch.push({ op: 'add', path: '/spec/version', value: version });
      restored.push(`spec.version set back to ${version}`);
    }
    const config = snapshot.status?.k3sConfigSpec;
    if (
      restoreConfig === 'All' &&
      config &&
      canonicalJson(config) !== canonicalJson(kcp.spec.k3sConfigSpec ?? {})
    ) {
      patch.push({ op: 'add', path: '/spec/k3sConfigSpec', value: config });
      restored.push('spec.k3sConfigSpec set back');
    }
    if (patch.length === 0) return;
    await this.deps.controlPlaneClient.jsonPatch(ref, patch);
    void this.deps.recorder.event(kcp, {
      type: 'Normal',
      reason: 'EtcdRestoreConfiguration',
      action: 'Restore',
      note: `${restored.join(' and ')}: what ${wanted.name} was saved with (restoreConfig ${restoreConfig})`,
    });
  }

  private async finishRestore(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    status: K3sControlPlaneEtcdRestoreStatus,
    phase: 'Finished' | 'Failed',
    message: string,
  ): Promise<undefined> {
    await this.unpause(cluster, status.generation);
    this.setRestore(
      scope,
      { ...status, phase, message: message.slice(0, 2048) },
      phase === 'Finished' ? 'Restored' : 'RestoreFailed',
      message,
    );
    void this.deps.recorder.event(scope.obj, {
      type: phase === 'Finished' ? 'Normal' : 'Warning',
      reason: phase === 'Finished' ? 'EtcdRestored' : 'EtcdRestoreFailed',
      action: 'Restore',
      note: message.slice(0, 1024),
    });
    return undefined;
  }

  private setRestore(
    scope: ReconcileScope<K3sControlPlane>,
    status: K3sControlPlaneEtcdRestoreStatus,
    reason = 'Started',
    message = `restore of ${status.name} started`,
  ): void {
    scope.obj.status = { ...scope.obj.status, etcdSnapshotRestore: status };
    this.condition(scope, {
      type: EtcdCondition.SnapshotRestored,
      status: status.phase === 'Finished' ? ConditionStatus.True : ConditionStatus.False,
      reason,
      message,
    });
  }

  /** Rancher pauses the CAPI Cluster while its servers reset: nothing replaces, scales or remediates meanwhile. */
  private async pause(cluster: Cluster, generation: number): Promise<void> {
    if (cluster.spec?.paused === true) return;
    await this.deps.clusterClient.mergePatch(
      { namespace: cluster.metadata.namespace, name: cluster.metadata.name! },
      {
        metadata: { annotations: { [PAUSED_FOR_RESTORE_ANNOTATION]: String(generation) } },
        spec: { paused: true },
      },
    );
  }

  /** Unpauses only what the restore paused (a Cluster its owner paused stays paused). */
  private async unpause(cluster: Cluster, generation: number): Promise<void> {
    if (cluster.metadata.annotations?.[PAUSED_FOR_RESTORE_ANNOTATION] !== String(generation)) return;
    await this.deps.clusterClient.mergePatch(
      { namespace: cluster.metadata.namespace, name: cluster.metadata.name! },
      { metadata: { annotations: { [PAUSED_FOR_RESTORE_ANNOTATION]: null } }, spec: { paused: false } },
    );
  }

  private condition(scope: ReconcileScope<K3sControlPlane>, input: ConditionInput): void {
    scope.obj.status = {
      ...scope.obj.status,
      conditions: withConditions(
        scope.obj.status?.conditions,
        [input],
        scope.obj.metadata.generation,
        this.clock(),
      ),
    };
  }
}

/** The schedule time of a Scheduled snapshot (its annotation; its creation when that is missing or not a time). */
const scheduledAt = (snapshot: EtcdSnapshot): number =>
  Date.parse(snapshot.metadata.annotations?.[SCHEDULED_AT_ANNOTATION] ?? '') ||
  timestampMs(snapshot.metadata.creationTimestamp);
