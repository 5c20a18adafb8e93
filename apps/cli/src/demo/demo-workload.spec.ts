import type { V1Pod } from '@kubernetes/client-node';
import { podsTable } from './demo-workload.js';

describe('podsTable', () => {
  it('prints what kubectl get pods -o wide prints, sorted by name', () => {
    const now = new Date('2026-11-24T10:00:30Z');
    const pod = (name: string, node: string, ip: string, waiting?: string): V1Pod => ({
      metadata: { name, creationTimestamp: new Date('2026-11-24T10:00:00Z') },
      spec: { nodeName: node, containers: [{ name: 'nginx' }] },
      status: {
        phase: waiting ? 'Pending' : 'Running',
        podIP: waiting ? undefined : ip,
        containerStatuses: [
          {
            name: 'nginx',
            image: 'nginx',
            imageID: '',
            ready: !waiting,
            restartCount: 0,
            state: waiting ? { waiting: { reason: waiting } } : { running: {} },
          },
        ],
      },
    });
    expect(podsTable([pod('web-b', 'demo-md-1', '10.42.2.2'), pod('web-a', 'demo-md-0', '10.42.1.2', 'ContainerCreating')], now)).toBe(
      [
        'NAME    READY   STATUS              RESTARTS   AGE   IP          NODE',
        'web-a   0/1     ContainerCreating   0          30s   <none>      demo-md-0',
        'web-b   1/1     Running             0          30s   10.42.2.2   demo-md-1',
      ].join('\n'),
    );
  });
});
