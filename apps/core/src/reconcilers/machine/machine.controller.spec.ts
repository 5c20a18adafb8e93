import { type Machine } from '@capstan/api';
import { OwnWrites } from '@capstan/kube';
import { primaryPredicate } from '@capstan/provider-kit';
import { providerIdChanged } from './machine.controller.js';
import { MACHINE_OWN_CONDITIONS } from './machine.status.js';

const machineWorthReconciling = (ownWrites: OwnWrites) =>
  primaryPredicate<Machine>(
    { conditions: { owned: MACHINE_OWN_CONDITIONS }, reconcileOwnWrite: providerIdChanged },
    ownWrites,
  );

function machine(resourceVersion: string, providerID?: string, labels: Record<string, string> = {}): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { namespace: 'ns', name: 'm', resourceVersion, labels },
    spec: {
      clusterName: 'c',
      bootstrap: {},
      infrastructureRef: { apiGroup: 'g', kind: 'K', name: 'n' },
      providerID,
    },
  } as Machine;
}

describe("the Machine controller's primary predicate", () => {
  it("reconciles the Machine's own write that first sets spec.providerID: a Node may have registered meanwhile", () => {
    const ownWrites = new OwnWrites();
    const predicate = machineWorthReconciling(ownWrites);
    const before = machine('1');
    const withProviderID = machine('2', 'test://ns/m');
    ownWrites.record(withProviderID, '1');
    expect(predicate({ type: 'update', oldObject: before, object: withProviderID })).toBe(true);
  });

  it('still skips its other own writes', () => {
    const ownWrites = new OwnWrites();
    const predicate = machineWorthReconciling(ownWrites);
    const before = machine('1', 'test://ns/m');
    const relabelled = machine('2', 'test://ns/m', { 'cluster.x-k8s.io/cluster-name': 'c' });
    ownWrites.record(relabelled, '1');
    expect(predicate({ type: 'update', oldObject: before, object: relabelled })).toBe(false);
  });
});
