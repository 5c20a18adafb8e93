import type { Cluster, MachineDeployment } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import type { ExternalObjects } from '../../external/external-objects.js';
import { OK_TO_DELETE_ANNOTATION } from '../topology/topology-hooks.js';
import { nextDeletionStep, WAITING_FOR_BEFORE_DELETE_HOOK } from './cluster.deletion.js';

describe('nextDeletionStep of a topology Cluster', () => {
  const cluster = (annotations: Record<string, string>): Cluster =>
    ({
      metadata: { name: 'c', namespace: 'fleet', annotations },
      spec: { topology: { classRef: { name: 'k' }, version: 'v1.34.4' } },
    }) as unknown as Cluster;
  const md = { metadata: { name: 'c-md-0', namespace: 'fleet' } } as MachineDeployment;
  const deleted: string[] = [];
  const deps = {
    client: {
      resource: () => ({
        delete: async (ref: { name: string }) => {
          deleted.push(ref.name);
        },
      }),
    } as unknown as KubeClient,
    external: {} as ExternalObjects,
  };
  const state = (c: Cluster) => ({ cluster: c, machines: [], machineSets: [], machineDeployments: [md] });

  it('deletes nothing until BeforeClusterDelete has let the Cluster go', async () => {
    const step = await nextDeletionStep(state(cluster({})), deps);
    expect(step).toMatchObject({ reason: WAITING_FOR_BEFORE_DELETE_HOOK, done: false });
    expect(deleted).toEqual([]);
    const next = await nextDeletionStep(state(cluster({ [OK_TO_DELETE_ANNOTATION]: '' })), deps);
    expect(next.reason).toBe('WaitingForWorkersDeletion');
    expect(deleted).toEqual(['c-md-0']);
  });
});
