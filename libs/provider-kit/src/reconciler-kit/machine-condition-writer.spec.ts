import { RESOURCES, type Machine } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import {
  MachineConditionWriter,
  removeMachineCondition,
  setMachineCondition,
} from './machine-condition-writer.js';

// The writer other controllers (MachineSet, MachineHealthCheck, K3sControlPlane) use for their conditions on
// Machines, on the in-memory API server: no write when nothing changes, a lost race merged onto the winner's write
// (never overwriting the Machine controller's conditions), removal of an owned condition, and a Machine that is gone.

const now = new Date('2026-06-01T12:00:00Z');
const upToDate = { type: 'UpToDate', status: 'False' as const, reason: 'NotUpToDate', message: 'old' };

const types = (machine: Machine | undefined) =>
  Object.fromEntries((machine?.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

describe('MachineConditionWriter', () => {
  const ns = { name: 'kit-mcw' };
  let client: KubeClient;
  const machines = () => client.resource<Machine>(RESOURCES.Machine);
  const get = (name: string) => machines().get({ namespace: ns.name, name });

  beforeAll(() => {
    client = new InMemoryApiServer([RESOURCES.Machine]).client({ fieldManager: 'kit-test' });
  });
  afterAll(() => client.close());

  /** A Machine with the Machine controller's Ready condition, as the API server stores it. */
  async function machine(
    name: string,
    extra: { type: string; status: 'True' | 'False'; reason: string }[] = [],
  ) {
    const created = await machines().create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: RESOURCES.Machine.kind,
      metadata: { name, namespace: ns.name },
      spec: {
        clusterName: 'c1',
        bootstrap: { dataSecretName: `${name}-data` },
        infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name },
      },
    } as Machine);
    const conditions = [{ type: 'Ready', status: 'True', reason: 'Ready' }, ...extra].map((c) => ({
      ...c,
      message: '',
      lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, 'Z'),
    }));
    return machines().patchStatus({ namespace: ns.name, name: created.metadata.name! }, { conditions });
  }

  it('writes nothing when the Machine already says the same', async () => {
    const read = await machine('same');
    const writer = new MachineConditionWriter(machines(), ['UpToDate', 'OwnerRemediated']);
    const written = await writer.write(read, (m) => setMachineCondition(m, upToDate, now));
    expect(written!.metadata.resourceVersion).not.toBe(read.metadata.resourceVersion);
    const again = await writer.write(written!, (m) => setMachineCondition(m, upToDate, now));
    const removedNothing = await writer.write(written!, (m) => removeMachineCondition(m, 'OwnerRemediated'));
    expect(again!.metadata.resourceVersion).toBe(written!.metadata.resourceVersion);
    expect(removedNothing!.metadata.resourceVersion).toBe(written!.metadata.resourceVersion);
    expect((await get('same')).metadata.resourceVersion).toBe(written!.metadata.resourceVersion);
  });

  it("merges onto the Machine controller's write it raced with, and never overwrites it", async () => {
    const read = await machine('raced');
    // The Machine controller writes after this writer read: the writer's patch is guarded by the old version.
    await machines().patchStatus(
      { namespace: ns.name, name: 'raced' },
      {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'NotReady',
            message: 'node down',
            lastTransitionTime: '2026-06-01T12:00:00Z',
          },
        ],
      },
    );
    const writer = new MachineConditionWriter(machines(), ['UpToDate']);
    const written = await writer.write(read, (m) => setMachineCondition(m, upToDate, now));
    expect(types(written)).toEqual({ Ready: 'False/NotReady', UpToDate: 'False/NotUpToDate' });
    expect(types(await get('raced'))).toEqual(types(written));
  });

  it('removes a condition it owns, and leaves a Machine that is gone alone', async () => {
    const read = await machine('owned', [
      { type: 'OwnerRemediated', status: 'False', reason: 'WaitingForRemediation' },
    ]);
    const writer = new MachineConditionWriter(machines(), ['OwnerRemediated']);
    const written = await writer.write(read, (m) => removeMachineCondition(m, 'OwnerRemediated'));
    expect(types(written)).toEqual({ Ready: 'True/Ready' });
    expect(types(await get('owned'))).toEqual({ Ready: 'True/Ready' });

    await machines().delete({ namespace: ns.name, name: 'owned' });
    const ghost = await writer.write(written!, (m) =>
      setMachineCondition(m, { ...upToDate, type: 'OwnerRemediated' }, now),
    );
    expect(ghost).toBeUndefined();
  });
});
