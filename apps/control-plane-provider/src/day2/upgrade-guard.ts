import type { V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  LABELS,
  RESOURCES,
  withConditions,
  type Cluster,
  type EtcdSnapshot,
  type K3sControlPlane,
  type K3sControlPlaneUpgradeStatus,
  type UpgradePhase,
} from '@capstan/api';
import { isAlreadyExists, type EventRecorder, type Informer, type ResourceClient } from '@capstan/kube';
import type { ReconcileScope } from '@capstan/provider-kit';
import { heldVersion } from '../planning/upgrade-hold.js';
import { failingGate } from './workload-gates.js';

// Upgrades that roll themselves back (docs/day2.md), beyond Rancher and upstream: a change of spec.version under
// spec.upgradePolicy takes an etcd snapshot first (the machines are held at their version meanwhile), lets the
// control plane roll out, then watches health gates for healthySeconds; a gate failing past its tolerance, or a
// rollout past its deadline, sends the control plane back to the version it had and restores the snapshot.

/** The condition the guard keeps on the K3sControlPlane: True when the last guarded upgrade went well. */
export const UPGRADE_CONDITION = 'UpgradeHealthy';

/** On a pre-upgrade EtcdSnapshot: the version it was taken before. */
export const PRE_UPGRADE_ANNOTATION = 'controlplane.capstan.dev/pre-upgrade-to';

const DEFAULTS = { healthySeconds: 60, failureToleranceSeconds: 30, timeoutSeconds: 1800 };
/** How often gates are looked at while an upgrade is verified. */
const GATE_INTERVAL_MS = 3_000;
const WAIT_MS = 5_000;

export interface UpgradeGuardDeps {
  snapshots: Pick<Informer<EtcdSnapshot>, 'getByName'>;
  snapshotClient: ResourceClient<EtcdSnapshot>;
  controlPlaneClient: ResourceClient<K3sControlPlane>;
  /** Cluster Secrets (with the cluster-name label): the admin kubeconfig among them. */
  secrets: Pick<Informer<V1Secret>, 'getByName'>;
  recorder: EventRecorder;
  /** Gates through a kubeconfig (a real workload client by default). */
  gates?: typeof failingGate;
}

const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export class UpgradeGuard {
  constructor(private readonly deps: UpgradeGuardDeps) {}

  /** Moves the guarded upgrade on; returns when to look again. */
  async reconcile(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const policy = kcp.spec.upgradePolicy;
    if (!policy) return undefined;
    let upgrade = kcp.status?.upgrade;
    const running = kcp.status?.version;
    const isNew =
      running !== undefined &&
      running !== kcp.spec.version &&
      upgrade?.toVersion !== kcp.spec.version &&
      !this.rollingBackTo(upgrade, kcp.spec.version);
    if (isNew) {
      upgrade = {
        fromVersion: running,
        toVersion: kcp.spec.version,
        phase: policy.snapshotBefore ? 'SavingSnapshot' : 'Upgrading',
        startedAt: iso(now),
        phaseSince: iso(now),
        message: policy.snapshotBefore
          ? `saving an etcd snapshot before upgrading from ${running} to ${kcp.spec.version}`
          : `upgrading from ${running} to ${kcp.spec.version}`,
      };
      this.set(scope, upgrade, now);
    }
    if (!upgrade) return undefined;
    switch (upgrade.phase) {
      case 'SavingSnapshot':
        return this.saveSnapshot(scope, cluster, upgrade, now);
      case 'Upgrading':
        return this.awaitRollout(scope, cluster, upgrade, now);
      case 'Verifying':
        return this.verify(scope, cluster, upgrade, now);
      case 'RollingBack':
        return this.awaitRollback(scope, upgrade, now);
      default:
        return undefined;
    }
  }

  private rollingBackTo(upgrade: K3sControlPlaneUpgradeStatus | undefined, version: string): boolean {
    return (
      upgrade?.fromVersion === version && (upgrade.phase === 'RollingBack' || upgrade.phase === 'RolledBack')
    );
  }

  private async saveSnapshot(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const name =
      upgrade.snapshotName ??
      `${cluster.metadata.name}-pre-upgrade-${Math.floor(Date.parse(upgrade.startedAt) / 1000)}`;
    if (!upgrade.snapshotName) {
      try {
        await this.deps.snapshotClient.create({
          apiVersion: RESOURCES.EtcdSnapshot.apiVersion,
          kind: RESOURCES.EtcdSnapshot.kind,
          metadata: {
            name,
            namespace: kcp.metadata.namespace,
            labels: { [LABELS.clusterName]: cluster.metadata.name! },
            annotations: { [PRE_UPGRADE_ANNOTATION]: upgrade.toVersion },
          },
          spec: { clusterName: cluster.metadata.name!, trigger: 'OnDemand' },
        });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
      this.set(scope, { ...upgrade, snapshotName: name }, now);
      return WAIT_MS;
    }
    const snapshot = this.deps.snapshots.getByName(kcp.metadata.namespace, name);
    if (snapshot?.status?.phase === 'Succeeded') {
      // A snapshot kept on a server goes with it: a rollout that replaces the server leaves nothing to roll back to.
      const local =
        snapshot.status.location?.startsWith('file://') === true && kcp.spec.rollout?.inPlace !== 'Required';
      const caveat = local
        ? `; it is kept on ${snapshot.status.machineName}, which a replacing rollout removes (spec.etcd.s3 keeps it)`
        : '';
      this.set(
        scope,
        {
          ...upgrade,
          phase: 'Upgrading',
          phaseSince: iso(now),
          message: `snapshot ${name} saved${caveat}; upgrading from ${upgrade.fromVersion} to ${upgrade.toVersion}`,
        },
        now,
      );
      void this.deps.recorder.event(kcp, {
        type: 'Normal',
        reason: 'UpgradeStarted',
        action: 'Upgrade',
        note: `snapshot ${name} saved; upgrading to ${upgrade.toVersion}`,
      });
      return WAIT_MS;
    }
    if (snapshot?.status?.phase === 'Failed') {
      // Nothing changed yet: the version goes back, and the status says why the upgrade did not start.
      const reason =
        snapshot.status.conditions?.find((c) => c.type === 'Ready')?.message ?? 'no reason given';
      await this.deps.controlPlaneClient.mergePatch(
        { namespace: kcp.metadata.namespace, name: kcp.metadata.name! },
        { spec: { version: upgrade.fromVersion } },
      );
      this.set(
        scope,
        {
          ...upgrade,
          phase: 'Failed',
          phaseSince: iso(now),
          message: `the upgrade to ${upgrade.toVersion} did not start: the pre-upgrade snapshot failed (${reason}); spec.version is back at ${upgrade.fromVersion}`,
        },
        now,
      );
      return undefined;
    }
    return WAIT_MS;
  }

  private async awaitRollout(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const rolledOut = heldVersion(kcp) === undefined && allServersRun(kcp, upgrade.toVersion);
    if (rolledOut) {
      this.set(
        scope,
        {
          ...upgrade,
          phase: 'Verifying',
          phaseSince: iso(now),
          message: `every server runs ${upgrade.toVersion}; watching the health gates`,
        },
        now,
      );
      return GATE_INTERVAL_MS;
    }
    const timeout = (kcp.spec.upgradePolicy?.timeoutSeconds ?? DEFAULTS.timeoutSeconds) * 1000;
    if (now.getTime() - Date.parse(upgrade.phaseSince) > timeout) {
      return this.fail(
        scope,
        cluster,
        upgrade,
        now,
        `the servers did not all reach ${upgrade.toVersion} within ${timeout / 1000}s`,
      );
    }
    return WAIT_MS;
  }

  private async verify(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const policy = kcp.spec.upgradePolicy ?? {};
    const kubeconfig = this.deps.secrets.getByName(
      kcp.metadata.namespace,
      `${cluster.metadata.name}-kubeconfig`,
    )?.data?.['value'];
    const problem = kubeconfig
      ? await (this.deps.gates ?? failingGate)(
          Buffer.from(kubeconfig, 'base64').toString('utf8'),
          upgrade.toVersion,
          policy.workloadChecks ?? [],
        )
      : `the Secret ${cluster.metadata.name}-kubeconfig is missing`;
    if (problem) {
      const failingSince = upgrade.failingSince ?? iso(now);
      const tolerance = (policy.failureToleranceSeconds ?? DEFAULTS.failureToleranceSeconds) * 1000;
      if (now.getTime() - Date.parse(failingSince) >= tolerance) {
        return this.fail(
          scope,
          cluster,
          upgrade,
          now,
          `the health gate failed for ${Math.round((now.getTime() - Date.parse(failingSince)) / 1000)}s: ${problem}`,
        );
      }
      this.set(
        scope,
        {
          ...upgrade,
          failingSince,
          message: `a health gate fails (tolerated for ${tolerance / 1000}s): ${problem}`,
        },
        now,
      );
      return GATE_INTERVAL_MS;
    }
    const healthyFor = (policy.healthySeconds ?? DEFAULTS.healthySeconds) * 1000;
    const since = Date.parse(upgrade.failingSince ? iso(now) : upgrade.phaseSince);
    const { failingSince: _cleared, ...passing } = upgrade;
    if (now.getTime() - since >= healthyFor) {
      this.set(
        scope,
        {
          ...passing,
          phase: 'Succeeded',
          phaseSince: iso(now),
          message: `upgraded from ${upgrade.fromVersion} to ${upgrade.toVersion}; the health gates held for ${healthyFor / 1000}s`,
        },
        now,
      );
      void this.deps.recorder.event(kcp, {
        type: 'Normal',
        reason: 'UpgradeSucceeded',
        action: 'Upgrade',
        note: `upgraded to ${upgrade.toVersion}`,
      });
      return undefined;
    }
    // A gate that recovers restarts the healthy window.
    this.set(
      scope,
      {
        ...passing,
        ...(upgrade.failingSince && { phaseSince: iso(now) }),
        message: `the health gates pass; ${Math.ceil((healthyFor - (now.getTime() - since)) / 1000)}s to go`,
      },
      now,
    );
    return GATE_INTERVAL_MS;
  }

  /** A failed upgrade: back to the old version, and to the snapshot's data, when the policy says so. */
  private async fail(
    scope: ReconcileScope<K3sControlPlane>,
    cluster: Cluster,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
    why: string,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    const { failingSince: _cleared, ...rest } = upgrade;
    if (kcp.spec.upgradePolicy?.rollbackOnFailure !== true) {
      this.set(
        scope,
        {
          ...rest,
          phase: 'Failed',
          phaseSince: iso(now),
          message: `the upgrade to ${upgrade.toVersion} failed: ${why}`,
        },
        now,
      );
      void this.deps.recorder.event(kcp, {
        type: 'Warning',
        reason: 'UpgradeFailed',
        action: 'Upgrade',
        note: why.slice(0, 1024),
      });
      return undefined;
    }
    const message = `the upgrade to ${upgrade.toVersion} failed: ${why}; rolling back to ${upgrade.fromVersion}${upgrade.snapshotName ? ` and restoring snapshot ${upgrade.snapshotName}` : ''}`;
    // Recorded first: a reconcile that stops after this write finds RollingBack and finishes the spec changes.
    this.set(scope, { ...rest, phase: 'RollingBack', phaseSince: iso(now), message }, now);
    await scope.patchNow();
    await this.ensureRollbackSpec(scope.obj, upgrade);
    void this.deps.recorder.event(kcp, {
      type: 'Warning',
      reason: 'UpgradeRollingBack',
      action: 'Upgrade',
      note: message.slice(0, 1024),
    });
    void cluster;
    return WAIT_MS;
  }

  /** The rollback's spec: the old version, and a restore of the pre-upgrade snapshot (once: its name says it is asked). */
  private async ensureRollbackSpec(
    kcp: K3sControlPlane,
    upgrade: K3sControlPlaneUpgradeStatus,
  ): Promise<void> {
    const patch: { version?: string; etcdSnapshotRestore?: { name: string; generation: number } } = {};
    if (kcp.spec.version !== upgrade.fromVersion) patch.version = upgrade.fromVersion;
    if (upgrade.snapshotName && kcp.spec.etcdSnapshotRestore?.name !== upgrade.snapshotName) {
      const generation =
        Math.max(
          kcp.spec.etcdSnapshotRestore?.generation ?? 0,
          kcp.status?.etcdSnapshotRestore?.generation ?? 0,
        ) + 1;
      patch.etcdSnapshotRestore = { name: upgrade.snapshotName, generation };
    }
    if (Object.keys(patch).length === 0) return;
    await this.deps.controlPlaneClient.mergePatch(
      { namespace: kcp.metadata.namespace, name: kcp.metadata.name! },
      { spec: patch },
    );
  }

  private async awaitRollback(
    scope: ReconcileScope<K3sControlPlane>,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
  ): Promise<number | undefined> {
    const kcp = scope.obj;
    await this.ensureRollbackSpec(kcp, upgrade);
    const status = kcp.status;
    const restored =
      !upgrade.snapshotName ||
      (status?.etcdSnapshotRestore?.name === upgrade.snapshotName &&
        status.etcdSnapshotRestore.phase !== 'Started' &&
        status.etcdSnapshotRestore.phase !== 'Restoring');
    if (!restored || !allServersRun(kcp, upgrade.fromVersion)) return WAIT_MS;
    const restoreFailed = status?.etcdSnapshotRestore?.phase === 'Failed';
    const why =
      upgrade.message?.replace(/; rolling back to .*$/, '') ?? `the upgrade to ${upgrade.toVersion} failed`;
    const message = restoreFailed
      ? `${why}; back at ${upgrade.fromVersion}, but restoring ${upgrade.snapshotName} failed: ${status?.etcdSnapshotRestore?.message ?? ''}`
      : `${why}; rolled back to ${upgrade.fromVersion}${upgrade.snapshotName ? ` with the data of snapshot ${upgrade.snapshotName}` : ''}`;
    this.set(
      scope,
      { ...upgrade, phase: restoreFailed ? 'Failed' : 'RolledBack', phaseSince: iso(now), message },
      now,
    );
    void this.deps.recorder.event(kcp, {
      type: 'Warning',
      reason: restoreFailed ? 'UpgradeRollbackIncomplete' : 'UpgradeRolledBack',
      action: 'Upgrade',
      note: message.slice(0, 1024),
    });
    return undefined;
  }

  private set(
    scope: ReconcileScope<K3sControlPlane>,
    upgrade: K3sControlPlaneUpgradeStatus,
    now: Date,
  ): void {
    const healthy = upgrade.phase === 'Succeeded';
    const reason: UpgradePhase = upgrade.phase;
    scope.obj.status = {
      ...scope.obj.status,
      upgrade,
      conditions: withConditions(
        scope.obj.status?.conditions,
        [
          {
            type: UPGRADE_CONDITION,
            status: healthy ? ConditionStatus.True : ConditionStatus.False,
            reason,
            message: (upgrade.message ?? '').slice(0, 1024),
          },
        ],
        scope.obj.metadata.generation,
        now,
      ),
    };
  }
}

/** Every server machine, and no more, runs `version` and is up to date (the main controller's status says so). */
function allServersRun(kcp: K3sControlPlane, version: string): boolean {
  const status = kcp.status;
  const wanted = kcp.spec.replicas ?? 1;
  return (
    status?.version === version &&
    (status.upToDateReplicas ?? 0) === wanted &&
    (status.replicas ?? 0) === wanted
  );
}
