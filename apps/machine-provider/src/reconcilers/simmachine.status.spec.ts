import type { SimMachine } from '@capstan/api';
import { SimConditionReason, SimConditionType } from '@capstan/sim';
import {
  isServerMachine,
  nextStatus,
  nodeCondition,
  nodeDeletedByFault,
  provisionedReady,
  waiting,
} from './simmachine.status.js';

const machine = (status?: SimMachine['status']): SimMachine => ({
  apiVersion: 'infrastructure.capstan.dev/v1alpha1',
  kind: 'SimMachine',
  metadata: { name: 'm', namespace: 'ns', generation: 2 },
  spec: {},
  ...(status && { status }),
});

describe('SimMachine status', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('sets the contract fields and keeps conditions it was not told about', () => {
    const before = machine({
      conditions: [
        {
          type: SimConditionType.BootstrapExecSucceeded,
          status: 'True',
          reason: 'BootstrapExecSucceeded',
          message: '',
          lastTransitionTime: '2025-12-31T00:00:00Z',
        },
      ],
    });
    const status = nextStatus(
      before,
      {
        ready: provisionedReady('booted'),
        provisioned: true,
        addresses: [{ type: 'Hostname', address: 'm' }],
        failureDomain: 'fd',
      },
      now,
    );
    expect(status).toMatchObject({
      initialization: { provisioned: true },
      addresses: [{ type: 'Hostname', address: 'm' }],
      failureDomain: 'fd',
      observedGeneration: 2,
    });
    const types = status.conditions!.map((c) => `${c.type}=${c.status}`);
    expect(types).toEqual(['BootstrapExecSucceeded=True', 'Ready=True', 'Paused=False']);
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      reason: 'Provisioned',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
  });

  it('reports waiting without provisioning', () => {
    const status = nextStatus(machine(), { ready: waiting('WaitingForBootstrapData', 'waiting') }, now);
    expect(status.initialization).toBeUndefined();
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WaitingForBootstrapData',
    });
  });

  it('maps what the node agent reports onto NodeRunning', () => {
    expect(nodeCondition({ phase: 'Registered', message: 'ok' })).toEqual({
      status: 'True',
      reason: SimConditionReason.NodeRegistered,
      message: 'ok',
    });
    expect(nodeCondition({ phase: 'Rejected', message: 'no' })).toMatchObject({
      status: 'False',
      reason: SimConditionReason.NodeRegistrationRejected,
    });
    expect(nodeCondition({ phase: 'Deleted', message: 'gone' })).toMatchObject({
      status: 'False',
      reason: SimConditionReason.NodeDeletedInjected,
    });
  });

  it('tells servers and hosts that died from their conditions (what survives a provider restart)', () => {
    const server = machine({
      conditions: [
        {
          type: SimConditionType.APIServerHealthy,
          status: 'False',
          reason: 'APIServerNotReady',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    expect(isServerMachine(server)).toBe(true);
    expect(isServerMachine(machine())).toBe(false);
    const dead = machine({
      conditions: [
        {
          type: SimConditionType.NodeRunning,
          status: 'False',
          reason: SimConditionReason.NodeDeletedInjected,
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    expect(nodeDeletedByFault(dead)).toBe(true);
    expect(nodeDeletedByFault(server)).toBe(false);
  });
});
