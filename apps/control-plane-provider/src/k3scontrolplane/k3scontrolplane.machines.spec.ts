import { RESOURCES, type Machine } from '@capstan/api';
import { CONTROL_PLANE_ANNOTATIONS } from '../planning/annotations.js';
import { testKcp } from '../testing/control-plane-scope.js';
import { testMachine } from '../planning/testing.js';
import { machinesWithOutdatedTemplateFields, ownedMachines, upToDateCondition } from './k3scontrolplane.machines.js';
import { machineTemplateFieldsHash } from './machine-objects.js';

const kcp = testKcp({
  machineTemplate: { ...testKcp().spec.machineTemplate, metadata: { labels: { team: 'a' } } },
});

function machine(
  name: string,
  options: { hash?: string; deleting?: boolean; controller?: string } = {},
): Machine {
  return {
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: RESOURCES.Machine.kind,
    metadata: {
      name,
      namespace: 'ns',
      ...(options.hash && { annotations: { [CONTROL_PLANE_ANNOTATIONS.templateFieldsHash]: options.hash } }),
      ...(options.deleting && { deletionTimestamp: new Date('2026-01-01T00:00:00Z') }),
      ownerReferences: [
        {
          apiVersion: RESOURCES.K3sControlPlane.apiVersion,
          kind: 'K3sControlPlane',
          name: 'demo-cp',
          uid: options.controller ?? 'kcp-uid',
          controller: true,
        },
      ],
    },
    spec: { clusterName: 'demo', bootstrap: {}, infrastructureRef: { apiGroup: 'x', kind: 'X', name } },
  } as Machine;
}

describe('control plane machines', () => {
  it('syncs template fields only to live machines that do not carry the current ones', () => {
    const current = machineTemplateFieldsHash(kcp);
    const machines = [
      machine('fresh'),
      machine('outdated', { hash: 'old' }),
      machine('current', { hash: current }),
      machine('deleting', { hash: 'old', deleting: true }),
    ];
    expect(machinesWithOutdatedTemplateFields(kcp, machines).map((m) => m.metadata.name)).toEqual([
      'fresh',
      'outdated',
    ]);
  });

  it('are the machines it is the controller of', () => {
    const indexed = [machine('ours'), machine('theirs', { controller: 'other-uid' })];
    const owned = ownedMachines({ byIndex: () => indexed }, kcp);
    expect(owned.map((m) => m.metadata.name)).toEqual(['ours']);
  });
});

describe('the UpToDate condition of a control plane machine', () => {
  it('is True for an up-to-date machine, and False with each reason otherwise', () => {
    expect(upToDateCondition(testMachine('a'))).toEqual({ type: 'UpToDate', status: 'True', reason: 'UpToDate' });
    expect(
      upToDateCondition(testMachine('b', { upToDate: false, outdatedReasons: ['Version v1.31.4, v1.32.0 required', 'rollout.after passed'] })),
    ).toEqual({
      type: 'UpToDate',
      status: 'False',
      reason: 'NotUpToDate',
      message: '* Version v1.31.4, v1.32.0 required\n* rollout.after passed',
    });
  });
});
