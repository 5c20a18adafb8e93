import { LABELS, RESOURCES, type Machine } from '@capstan/api';
import { Manager, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { eventually } from '@capstan/testing';
import { pino } from 'pino';
import { MachineView } from './machine-view.js';

// The Machines as Cluster pages show them, on the in-memory API server: rows grouped by Cluster, a listener woken only
// when a row of its Cluster changed.

const machine = (namespace: string, name: string, clusterName: string, controlPlane = false): Machine =>
  ({
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: 'Machine',
    metadata: { name, namespace, labels: controlPlane ? { [LABELS.controlPlane]: '' } : {} },
    spec: {
      clusterName,
      version: 'v1.34.4',
      bootstrap: { configRef: { apiGroup: 'bootstrap.capstan.dev', kind: 'K3sConfig', name } },
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name },
    },
  }) as Machine;

describe('MachineView', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let manager: Manager;
  let view: MachineView;
  const machines = () => client.resource<Machine>(RESOURCES.Machine);

  beforeEach(async () => {
    server = new InMemoryApiServer([RESOURCES.Machine]);
    client = server.client();
    manager = new Manager({ client: server.client(), logger: pino({ level: 'silent' }) });
    view = new MachineView(manager);
    await machines().create(machine('team-a', 'demo-md-0-x', 'demo'));
    await machines().create(machine('team-a', 'demo-cp-0', 'demo', true));
    await machines().create(machine('team-a', 'other-cp-0', 'other', true));
    await machines().create(machine('team-b', 'demo-cp-0', 'demo', true));
    await manager.start();
    await eventually(() => view.hasSynced() && view.machinesOf('team-a', 'demo').length === 2, {
      message: 'the Machines listed',
    });
  });
  afterEach(async () => {
    await manager.stop();
    await client.close();
  });

  it("keeps each Cluster's rows apart, control plane first, and wakes its listeners only on a change they show", async () => {
    expect(view.machinesOf('team-a', 'demo')).toEqual([
      expect.objectContaining({
        namespace: 'team-a',
        name: 'demo-cp-0',
        controlPlane: true,
        bootstrap: { kind: 'K3sConfig', name: 'demo-cp-0' },
        infrastructure: { kind: 'SimMachine', name: 'demo-cp-0' },
      }),
      expect.objectContaining({ name: 'demo-md-0-x', controlPlane: false, deleting: false }),
    ]);
    expect(view.machinesOf('team-b', 'demo').map((m) => m.namespace)).toEqual(['team-b']);

    let woken = 0;
    const unsubscribe = view.subscribe('team-a', 'demo', () => woken++);
    await machines().mergePatch(
      { namespace: 'team-a', name: 'demo-md-0-x' },
      { metadata: { annotations: { a: 'b' } } },
    );
    await machines().patchStatus({ namespace: 'team-a', name: 'other-cp-0' }, { phase: 'Running' });
    await machines().patchStatus({ namespace: 'team-a', name: 'demo-md-0-x' }, { phase: 'Running' });
    await eventually(() => view.machinesOf('team-a', 'demo')[1]?.phase === 'Running', {
      message: 'the phase',
    });
    // The annotation and the other Cluster's Machine changed nothing this Cluster's page shows.
    expect(woken).toBe(1);

    await machines().delete({ namespace: 'team-a', name: 'demo-md-0-x' });
    await eventually(() => view.machinesOf('team-a', 'demo').length === 1, { message: 'the delete' });
    expect(woken).toBe(2);
    unsubscribe();
  });
});
