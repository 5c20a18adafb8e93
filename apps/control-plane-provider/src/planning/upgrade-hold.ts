import type { K3sControlPlane } from '@capstan/api';

/**
 * The version the machines are held at while an upgrade under `spec.upgradePolicy.snapshotBefore` waits for its
 * snapshot (docs/day2.md): the one they run, until the day-2 controller records the snapshot saved (status.upgrade
 * past SavingSnapshot). Undefined when nothing is held: no policy, no version change, or a rollback going back.
 */
export function heldVersion(kcp: Pick<K3sControlPlane, 'spec' | 'status'>): string | undefined {
  if (kcp.spec.upgradePolicy?.snapshotBefore !== true) return undefined;
  const running = kcp.status?.version;
  if (!running || running === kcp.spec.version) return undefined;
  const upgrade = kcp.status?.upgrade;
  if (
    upgrade?.fromVersion === kcp.spec.version &&
    (upgrade.phase === 'RollingBack' || upgrade.phase === 'RolledBack')
  )
    return undefined;
  if (upgrade?.toVersion === kcp.spec.version)
    return upgrade.phase === 'SavingSnapshot' ? upgrade.fromVersion : undefined;
  return running;
}

/** The version the control plane's machines should run now: spec.version, unless an upgrade is held for its snapshot. */
export function desiredVersionOf(kcp: Pick<K3sControlPlane, 'spec' | 'status'>): string {
  return heldVersion(kcp) ?? kcp.spec.version;
}
