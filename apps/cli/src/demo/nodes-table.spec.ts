import { nodesTable } from './nodes-table.js';

describe('nodesTable', () => {
  it('prints nodes as kubectl get nodes does', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    const table = nodesTable(
      [
        {
          metadata: { name: 'demo-md-0-b', creationTimestamp: new Date('2026-11-21T11:58:00Z') },
          status: { conditions: [{ type: 'Ready', status: 'False' }], nodeInfo: { kubeletVersion: 'v1.34.4+k3s1' } as never },
        },
        {
          metadata: { name: 'demo-control-plane-x', labels: { 'node-role.kubernetes.io/control-plane': 'true', 'node-role.kubernetes.io/master': 'true' }, creationTimestamp: new Date('2026-11-21T11:55:00Z') },
          status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.34.4+k3s1' } as never },
        },
      ],
      now,
    );
    expect(table.split('\n')).toEqual([
      'NAME                   STATUS     ROLES                  AGE   VERSION',
      'demo-control-plane-x   Ready      control-plane,master   5m    v1.34.4+k3s1',
      'demo-md-0-b            NotReady   <none>                 2m    v1.34.4+k3s1',
    ]);
  });
});
