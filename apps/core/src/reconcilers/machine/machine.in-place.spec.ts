import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { IN_PLACE_ANNOTATIONS, toRFC3339, type Machine } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import { pino } from 'pino';
import type { WorkloadClusterAccess } from '../../remote/workload-clusters.js';
import { machine as buildMachine } from '../../testing/machine-builder.js';
import { reconcileInPlaceUpdate, type MachineWriteScope } from './machine.in-place.js';
import type { NodeLookup } from './machine.node.js';
import type { MachineObservation } from './machine.status.js';

// The Machine controller's half of an in-place update, for what the workload cluster lets it see: an update that
// restarts K3s waits for a drain it cannot do (the cluster does not answer), and goes on without one only where
// upstream's drain on deletion does (the Node is gone: nothing is left on it to evict).

const log = pino({ level: 'silent' });
const now = new Date('2026-06-01T12:00:00Z');
const TARGET = 'abc123';

function updatingMachine(options: { restart: boolean; nodeRef?: string }): Machine {
  const m = buildMachine({
    name: 'w1',
    annotations: {
      [IN_PLACE_ANNOTATIONS.updateInProgress]: TARGET,
      ...(options.restart && { [IN_PLACE_ANNOTATIONS.restart]: 'true' }),
    },
    ...(options.nodeRef && { nodeRef: options.nodeRef }),
    conditions: { Ready: 'True', Available: 'True' },
  });
  m.spec.providerID = 'sim://w1';
  return m;
}

/** The reconcile's copy of the Machine; an early write keeps it (nothing here may need one). */
function scopeOf(m: Machine): MachineWriteScope {
  return { obj: m, patchNow: () => Promise.resolve(m) };
}

const observation = (m: Machine): MachineObservation => ({
  machine: m,
  bootstrap: { state: 'unset' },
  infrastructure: { state: 'unset' },
  node: { state: 'waiting', message: 'not looked up' },
});

async function step(m: Machine, lookup: NodeLookup) {
  const result = await reconcileInPlaceUpdate(scopeOf(m), observation(m), lookup, now, log);
  return { result, readyToUpdate: m.metadata.annotations?.[IN_PLACE_ANNOTATIONS.readyToUpdate] };
}

describe('reconcileInPlaceUpdate: the drain before a restart', () => {
  it('waits, and says why, while the workload cluster does not answer: the Node cannot be drained', async () => {
    const m = updatingMachine({ restart: true, nodeRef: 'node-w1' });
    const down = 'the API server of cluster ns/demo did not answer yet: connect ECONNREFUSED';
    const { result, readyToUpdate } = await step(m, { observation: { state: 'connectionDown', message: down } });
    expect(readyToUpdate).toBeUndefined();
    expect(result.updating).toMatchObject({ status: 'True', reason: 'InPlaceUpdating' });
    expect(result.updating.message).toContain('Cannot drain Node node-w1 before the update');
    expect(result.updating.message).toContain(down);
    expect(result.requeueAfter).toBeGreaterThan(0);
  });

  it('waits while the workload cluster has no kubeconfig to reach it, once the Machine had a Node', async () => {
    const m = updatingMachine({ restart: true, nodeRef: 'node-w1' });
    const { result, readyToUpdate } = await step(m, {
      observation: { state: 'waiting', message: 'Secret demo-kubeconfig does not exist' },
    });
    expect(readyToUpdate).toBeUndefined();
    expect(result.updating.message).toContain('Cannot drain Node node-w1 before the update: Secret demo-kubeconfig does not exist');
    expect(result.requeueAfter).toBeGreaterThan(0);
  });

  it('goes on without a drain when the Node of its nodeRef is gone, as upstream drain does, and says so', async () => {
    const m = updatingMachine({ restart: true, nodeRef: 'node-w1' });
    const { result, readyToUpdate } = await step(m, { observation: { state: 'notFound' } });
    expect(readyToUpdate).toBe(TARGET);
    expect(result.updating.message).toContain('Node node-w1 not found: not drained');
  });

  it('needs no drain when the update does not restart K3s, reachable or not', async () => {
    const m = updatingMachine({ restart: false, nodeRef: 'node-w1' });
    const { readyToUpdate } = await step(m, { observation: { state: 'connectionDown', message: 'down' } });
    expect(readyToUpdate).toBe(TARGET);
  });

  it('needs no drain for a Machine that never had a Node (no providerID yet)', async () => {
    const m = updatingMachine({ restart: true });
    delete m.spec.providerID;
    const { readyToUpdate } = await step(m, {
      observation: { state: 'waiting', message: 'Waiting for GenericInfrastructureMachine to report spec.providerID' },
    });
    expect(readyToUpdate).toBe(TARGET);
  });

  it('looks again a second after evicting pods, backing off from when it cordoned the node, up to every 5 s', async () => {
    const node: V1Node = { metadata: { name: 'node-w1' }, spec: { unschedulable: true } };
    const pods: V1Pod[] = [{ metadata: { namespace: 'default', name: 'web-1' }, spec: { nodeName: 'node-w1', containers: [] } }];
    const client = {
      resource: () => ({ listAll: () => Promise.resolve({ items: pods }) }),
      request: () => Promise.resolve({}),
    } as unknown as KubeClient;
    const access = { namespace: 'ns', cluster: 'demo', client } as WorkloadClusterAccess;
    const draining = async (cordonedSecondsAgo: number) => {
      const m = updatingMachine({ restart: true, nodeRef: 'node-w1' });
      m.metadata.annotations![IN_PLACE_ANNOTATIONS.cordoned] = toRFC3339(new Date(now.getTime() - cordonedSecondsAgo * 1000));
      const { result, readyToUpdate } = await step(m, { observation: { state: 'found', node }, access });
      expect(readyToUpdate).toBeUndefined();
      expect(result.updating.message).toContain('Draining Node node-w1 before the update: evicting Pods default/web-1');
      return result.requeueAfter;
    };
    expect(await draining(0)).toBe(1_000);
    expect(await draining(3)).toBe(3_000);
    expect(await draining(60)).toBe(5_000);
  });
});
