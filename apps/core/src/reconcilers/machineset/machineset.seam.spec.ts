import { RESOURCES, type Machine, type MachineSet } from '@capstan/api';
import { getControllerOf } from '@capstan/kube';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import { createReadyCluster, createTemplates, eventually, machineTemplate, MachinePlayer } from '../../testing/workload-env.js';

describe('MachineSet controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  let player: MachinePlayer;
  beforeEach(async () => {
    bed = await startInMemoryWorkload();
    await createReadyCluster(bed, 'demo');
    await createTemplates(bed, 'workers');
    player = await new MachinePlayer(bed, { availableAfterMs: 20, releaseAfterMs: 20 }).start();
  });
  afterEach(async () => {
    await player.stop();
    await bed.stop();
  });

  it('creates its replicas and reports them available', async () => {
    await bed.client.resource<MachineSet>(RESOURCES.MachineSet).create({
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: RESOURCES.MachineSet.kind,
      metadata: { name: 'pool', namespace: bed.ns.name },
      spec: {
        clusterName: 'demo',
        replicas: 2,
        selector: { matchLabels: { pool: 'pool' } },
        template: machineTemplate('demo', 'workers', { pool: 'pool' }),
      },
    } as MachineSet);
    await eventually('2 available', async () => {
      const set = await bed.client.resource<MachineSet>(RESOURCES.MachineSet).get({ namespace: bed.ns.name, name: 'pool' });
      return set.status?.availableReplicas === 2 ? set : undefined;
    }, 10_000);
    const machines = (await bed.client.resource<Machine>(RESOURCES.Machine).list({ namespace: bed.ns.name })).items;
    expect(machines.map((m) => getControllerOf(m)?.name)).toEqual(['pool', 'pool']);
  });
});
