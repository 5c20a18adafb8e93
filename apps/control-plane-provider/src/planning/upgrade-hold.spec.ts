import type { K3sControlPlane, K3sControlPlaneUpgradeStatus } from '@capstan/api';
import { desiredVersionOf, heldVersion } from './upgrade-hold.js';

const kcp = (
  spec: Partial<K3sControlPlane['spec']>,
  running?: string,
  upgrade?: Partial<K3sControlPlaneUpgradeStatus>,
): Pick<K3sControlPlane, 'spec' | 'status'> => ({
  spec: {
    version: 'v1.35.4',
    machineTemplate: { spec: { infrastructureRef: { apiGroup: 'g', kind: 'K', name: 'n' } } },
    ...spec,
  },
  status: {
    ...(running && { version: running }),
    ...(upgrade && {
      upgrade: {
        fromVersion: 'v1.34.4',
        toVersion: 'v1.35.4',
        phase: 'SavingSnapshot',
        startedAt: 't',
        phaseSince: 't',
        ...upgrade,
      },
    }),
  },
});

describe('machines held at their version while an upgrade waits for its snapshot', () => {
  const guarded = { upgradePolicy: { snapshotBefore: true } };

  it('holds a new version until the snapshot is saved', () => {
    expect(heldVersion(kcp(guarded, 'v1.34.4'))).toBe('v1.34.4');
    expect(heldVersion(kcp(guarded, 'v1.34.4', { phase: 'SavingSnapshot' }))).toBe('v1.34.4');
    expect(desiredVersionOf(kcp(guarded, 'v1.34.4', { phase: 'SavingSnapshot' }))).toBe('v1.34.4');
    expect(heldVersion(kcp(guarded, 'v1.34.4', { phase: 'Upgrading' }))).toBeUndefined();
    expect(desiredVersionOf(kcp(guarded, 'v1.34.4', { phase: 'Upgrading' }))).toBe('v1.35.4');
  });

  it('holds nothing without the policy, without a version change, or on the way back', () => {
    expect(heldVersion(kcp({}, 'v1.34.4'))).toBeUndefined();
    expect(heldVersion(kcp({ upgradePolicy: { rollbackOnFailure: true } }, 'v1.34.4'))).toBeUndefined();
    expect(heldVersion(kcp(guarded, 'v1.35.4'))).toBeUndefined();
    expect(heldVersion(kcp(guarded, undefined))).toBeUndefined();
    // Rolling back: spec.version is the old one again and the machines run the new one; nothing holds them.
    expect(
      heldVersion(kcp({ ...guarded, version: 'v1.34.4' }, 'v1.35.4', { phase: 'RollingBack' })),
    ).toBeUndefined();
    // A new upgrade after a finished one is held again.
    expect(heldVersion(kcp({ ...guarded, version: 'v1.36.1' }, 'v1.35.4', { phase: 'Succeeded' }))).toBe(
      'v1.35.4',
    );
  });
});
