import { machinesToDelete, sortForDeletion } from './deletion-order.js';
import { NO_NODE_GRACE_MS } from './machine-state.js';
import { machine, NOW, running } from '../../testing/machine-builder.js';

const names = (list: { metadata: { name?: string } }[]) => list.map((m) => m.metadata.name);

describe('MachineSet deletion order', () => {
  const old = running('old', { createdSecondsAgo: 5 * 24 * 3600 });
  const middle = running('middle', { createdSecondsAgo: 2 * 24 * 3600 });
  const young = running('young', { createdSecondsAgo: 3600 });

  it('Oldest deletes the oldest healthy machines first', () => {
    expect(names(machinesToDelete([young, old, middle], 2, 'Oldest', NOW))).toEqual(['old', 'middle']);
  });

  it('Newest deletes the newest healthy machines first', () => {
    expect(names(machinesToDelete([old, young, middle], 2, 'Newest', NOW))).toEqual(['young', 'middle']);
  });

  it('Random (the default) is a stable order by name among healthy machines', () => {
    expect(names(machinesToDelete([young, old, middle], 3, undefined, NOW))).toEqual([
      'middle',
      'old',
      'young',
    ]);
    expect(names(machinesToDelete([old, middle, young], 1, 'Random', NOW))).toEqual(['middle']);
  });

  it('puts deleting, delete-annotated, unhealthy and unavailable machines before healthy ones, in that order', () => {
    const deleting = running('z-deleting', { deleting: true });
    const annotated = running('z-annotated', { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } });
    const failedCheck = running('z-failed', { conditions: { HealthCheckSucceeded: 'False' } });
    const remediate = running('z-owner', { conditions: { OwnerRemediated: 'False' } });
    const nodeUnhealthy = running('z-node', { conditions: { NodeHealthy: 'False' } });
    const noNodeLong = machine({ name: 'z-nonode-old', createdSecondsAgo: NO_NODE_GRACE_MS / 1000 + 60 });
    const noNodeNew = machine({ name: 'z-nonode-new', createdSecondsAgo: 30 });
    const waiting = running('z-waiting', { conditions: { Available: 'False' } });
    const sorted = sortForDeletion(
      [
        old,
        waiting,
        noNodeNew,
        nodeUnhealthy,
        young,
        noNodeLong,
        remediate,
        failedCheck,
        annotated,
        deleting,
      ],
      'Newest',
      NOW,
    );
    expect(names(sorted)).toEqual([
      'z-deleting',
      'z-annotated',
      'z-failed',
      'z-node',
      'z-nonode-old',
      'z-owner',
      'z-nonode-new',
      'z-waiting',
      'young',
      'old',
    ]);
  });

  it('deletes nothing for a count of zero and everything for a larger count', () => {
    expect(machinesToDelete([old], 0, 'Oldest', NOW)).toEqual([]);
    expect(names(machinesToDelete([old, young], 5, 'Oldest', NOW))).toEqual(['old', 'young']);
  });
});
