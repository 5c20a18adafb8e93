import type { Condition, SimMachine } from '@capstan/api';
import { SimConditionReason, SimConditionType } from '@capstan/sim';
import { deletedEvent, hasTransitions, machineTransitions, transitionEvents } from './simmachine.handoff.js';

const at = '2026-01-01T00:00:00Z';
const ready = (reason: string, message = '', observedGeneration = 1): Condition => ({
  type: 'Ready',
  status: reason === 'Provisioned' ? 'True' : 'False',
  reason,
  message,
  observedGeneration,
  lastTransitionTime: at,
});
const node = (reason: string, message = ''): Condition => ({
  type: SimConditionType.NodeRunning,
  status: 'False',
  reason,
  message,
  lastTransitionTime: at,
});

const simMachine = (status?: SimMachine['status'], providerID?: string): SimMachine => ({
  apiVersion: 'infrastructure.capstan.dev/v1alpha1',
  kind: 'SimMachine',
  metadata: { name: 'm', namespace: 'ns', uid: 'u-1', resourceVersion: '42', generation: 1 },
  spec: providerID ? { providerID } : {},
  ...(status && { status }),
});

describe('SimMachine hand-off', () => {
  const owners = { clusterName: 'alpha', machineName: 'm' };

  it('announces provisioned once: when the write makes the machine provisioned', () => {
    const before = simMachine({ conditions: [ready('Booting')] });
    const after = simMachine(
      {
        conditions: [ready('Provisioned')],
        initialization: { provisioned: true },
        addresses: [{ type: 'Hostname', address: 'm' }],
        failureDomain: 'fd-1',
      },
      'sim://ns/m',
    );
    const transitions = machineTransitions(before, after);
    expect(transitions).toEqual({ provisioned: true });
    expect(transitionEvents(after, transitions, owners)).toEqual([
      {
        name: 'infrastructure-machine.provisioned',
        data: expect.objectContaining({
          clusterName: 'alpha',
          machineName: 'm',
          resourceVersion: '42',
          providerID: 'sim://ns/m',
          addresses: [{ type: 'Hostname', address: 'm' }],
          failureDomain: 'fd-1',
        }),
      },
    ]);
    // Read back after a restart: nothing changes, nothing is announced.
    expect(hasTransitions(machineTransitions(after, after))).toBe(false);
  });

  it('announces a failure when Ready turns to it, again for another message or generation only', () => {
    const failed = simMachine({ conditions: [ready(SimConditionReason.ProvisioningFailed, 'fire')] });
    const transitions = machineTransitions(simMachine(), failed);
    expect(transitions).toEqual({
      provisioned: false,
      failed: { reason: SimConditionReason.ProvisioningFailed, message: 'fire' },
    });
    expect(transitionEvents(failed, transitions, owners)).toEqual([
      {
        name: 'infrastructure-machine.failed',
        data: expect.objectContaining({ reason: 'ProvisioningFailed', message: 'fire', machineName: 'm' }),
      },
    ]);
    expect(machineTransitions(failed, failed).failed).toBeUndefined();
    const other = simMachine({ conditions: [ready(SimConditionReason.BootstrapDataInvalid, 'bad yaml')] });
    expect(machineTransitions(failed, other).failed).toEqual({
      reason: 'BootstrapDataInvalid',
      message: 'bad yaml',
    });
    const nextGeneration = simMachine({
      conditions: [ready(SimConditionReason.ProvisioningFailed, 'fire', 2)],
    });
    expect(machineTransitions(failed, nextGeneration).failed).toBeDefined();
    // Waiting is no failure.
    expect(
      machineTransitions(simMachine(), simMachine({ conditions: [ready('Booting')] })).failed,
    ).toBeUndefined();
  });

  it('caps the failure message the event carries', () => {
    const long = 'x'.repeat(2000);
    const failed = simMachine({ conditions: [ready(SimConditionReason.ProvisioningFailed, long)] });
    const [event] = transitionEvents(failed, machineTransitions(simMachine(), failed), owners);
    expect((event!.data as { message: string }).message).toHaveLength(1024);
  });

  it('notices an injected fault when NodeRunning turns to it', () => {
    const registered = simMachine({ conditions: [node(SimConditionReason.NodeRegistered)] });
    const notReady = simMachine({
      conditions: [node(SimConditionReason.NodeNotReadyInjected, 'Node m NotReady')],
    });
    expect(machineTransitions(registered, notReady).fault).toBe('Node m NotReady');
    expect(machineTransitions(notReady, notReady).fault).toBeUndefined();
    const gone = simMachine({ conditions: [node(SimConditionReason.NodeDeletedInjected)] });
    expect(machineTransitions(notReady, gone).fault).toBe(SimConditionReason.NodeDeletedInjected);
  });

  it('announces nothing for a machine without a cluster or a provider ID', () => {
    const after = simMachine({ initialization: { provisioned: true } });
    const transitions = machineTransitions(simMachine(), after);
    expect(transitionEvents(after, transitions, owners)).toEqual([]);
    expect(transitionEvents(simMachine(undefined, 'sim://ns/m'), transitions, {})).toEqual([]);
  });

  it('announces the deletion when the machine has a cluster', () => {
    expect(deletedEvent(simMachine(), owners)).toMatchObject({
      name: 'infrastructure-machine.deleted',
      data: { clusterName: 'alpha', machineName: 'm' },
    });
    expect(deletedEvent(simMachine(), { clusterName: 'alpha' })?.data).not.toHaveProperty('machineName');
    expect(deletedEvent(simMachine(), {})).toBeUndefined();
  });
});
