import { ConditionStatus, ConditionType, type Machine } from '@capstan/api';
import { machinesReadyCondition } from './machine-conditions.js';

function machine(name: string, ready?: { status: ConditionStatus; message: string }): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'default' },
    spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimMachine', name } },
    status: ready
      ? { conditions: [{ type: ConditionType.Ready, status: ready.status, reason: 'R', message: ready.message, lastTransitionTime: '2026-11-25T00:00:00Z' }] }
      : {},
  } as Machine;
}

describe('MachinesReady over many Machines', () => {
  const waiting = { status: ConditionStatus.False, message: 'waiting for bootstrap data' };
  const booting = { status: ConditionStatus.False, message: 'booting' };

  it('says the same whatever order the Machines come in (a reordered message would be one more status write)', () => {
    const machines = [machine('md-c', waiting), machine('md-a', booting), machine('md-b', waiting), machine('md-d')];
    const messages = new Set(
      [machines, [...machines].reverse(), [machines[2]!, machines[0]!, machines[3]!, machines[1]!]].map(
        (order) => machinesReadyCondition(order).message,
      ),
    );
    expect([...messages]).toEqual([
      '* Machine md-a: booting\n* Machines md-b, md-c: waiting for bootstrap data\nAnd 1 Machine more',
    ]);
  });

  it('names failing Machines before silent ones, each group by name', () => {
    const condition = machinesReadyCondition([machine('z'), machine('y', waiting), machine('x')]);
    expect(condition.status).toBe(ConditionStatus.False);
    expect(condition.message).toBe('* Machine y: waiting for bootstrap data\n* Machines x, z: Ready condition not yet reported');
  });
});
