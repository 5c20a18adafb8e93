import { RESOURCES, type Cluster } from '@capstan/api';
import { Manager, type KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { eventually } from '@capstan/testing';
import { pino } from 'pino';
import { FleetView, type FleetChange } from './fleet-view.js';

// The fleet as the dashboard keeps it, on the in-memory API server: one summary per Cluster, a change passed on only
// when a field the fleet shows changed.

describe('FleetView', () => {
  let server: InMemoryApiServer;
  let client: KubeClient;
  let manager: Manager;
  let fleet: FleetView;
  const changes: FleetChange[] = [];
  const clusters = () => client.resource<Cluster>(RESOURCES.Cluster);

  beforeEach(async () => {
    server = new InMemoryApiServer([RESOURCES.Cluster]);
    client = server.client();
    manager = new Manager({ client: server.client(), logger: pino({ level: 'silent' }) });
    fleet = new FleetView(manager);
    changes.length = 0;
    fleet.subscribe((change) => changes.push(change));
    await clusters().create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: 'b', namespace: 'fleet' },
      spec: { topology: { classRef: { name: 'standard' }, version: 'v1.34.4' } },
    } as Cluster);
    await manager.start();
    await eventually(() => fleet.hasSynced() && fleet.list().length === 1, { message: 'the fleet listed' });
  });
  afterEach(async () => {
    await manager.stop();
    await client.close();
  });

  it('summarizes each Cluster and passes on changes a reader would see, not every write', async () => {
    expect(fleet.list()).toEqual([
      expect.objectContaining({
        namespace: 'fleet',
        name: 'b',
        version: 'v1.34.4',
        clusterClass: 'standard',
        paused: false,
      }),
    ]);
    const seen = changes.length;
    // An annotation is not shown (labels are: the fleet filters by them).
    await clusters().mergePatch({ namespace: 'fleet', name: 'b' }, { metadata: { annotations: { note: 'x' } } });
    await clusters().patchStatus(
      { namespace: 'fleet', name: 'b' },
      {
        phase: 'Provisioned',
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'Available',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    );
    const update = await eventually(
      () => changes.slice(seen).find((c) => c.type === 'upsert' && c.cluster.phase === 'Provisioned'),
      {
        message: 'the status change',
      },
    );
    expect(update).toMatchObject({
      cluster: { conditions: { Available: { status: 'True', reason: 'Available' } } },
    });
    // The annotation write changed nothing the fleet shows.
    expect(changes.slice(seen)).toHaveLength(1);

    await clusters().delete({ namespace: 'fleet', name: 'b' });
    await eventually(() => changes.some((c) => c.type === 'delete'), { message: 'the delete' });
    expect(fleet.list()).toEqual([]);
    expect(fleet.namespaces()).toEqual([]);
  });
});
