import type { K3sControlPlane, Machine } from '@capstan/api';
import { certificateRow } from './certs.js';

describe('capstan certs rows', () => {
  const now = new Date('2026-11-28T10:00:00Z');
  const machine = (expiry?: string): Machine =>
    ({
      metadata: {
        namespace: 'fleet',
        name: 'demo-cp-a',
        ownerReferences: [{ apiVersion: 'v1', kind: 'K3sControlPlane', name: 'demo-cp', uid: 'u' }],
      },
      spec: { clusterName: 'demo' },
      ...(expiry && { status: { certificatesExpiryDate: expiry } }),
    }) as Machine;
  const kcp = {
    spec: { rollout: { before: { certificatesExpiryDays: 30 } } },
    status: { certificateRotation: { phase: 'Finished', reason: 'ExpiringSoon', startTime: '' } },
  } as unknown as K3sControlPlane;

  it('shows the expiry, the days left, the window and the last rotation', () => {
    expect(
      certificateRow(machine('2026-12-13T10:00:00Z'), new Map([['fleet/demo-cp', kcp]]), now, false),
    ).toEqual(['demo', 'demo-cp-a', '2026-12-13T10:00:00Z', '15d', '30d', 'Finished (ExpiringSoon)']);
  });

  it('says EXPIRED, and <none> for what a machine has not reported', () => {
    expect(certificateRow(machine('2026-11-01T00:00:00Z'), new Map(), now, true)).toEqual([
      'fleet',
      'demo',
      'demo-cp-a',
      '2026-11-01T00:00:00Z',
      'EXPIRED',
      '<none>',
      '<none>',
    ]);
    expect(certificateRow(machine(), new Map(), now, false).slice(2, 4)).toEqual(['<none>', '<none>']);
  });
});
