import type { K3sConfig, Machine } from '@capstan/api';
import type { EventRecorder, KubeClient, ObjectRef, ResourceClient } from '@capstan/kube';
import { CONTROL_PLANE_ANNOTATIONS, parseRemediationRecord } from '../planning/annotations.js';
import { testMachine } from '../planning/testing.js';
import { TestScope, testCluster, testKcp } from '../testing/control-plane-scope.js';
import { MachineExpectations } from './expectations.js';
import {
  ControlPlaneScaler,
  EXPECTATION_RECHECK_MS,
  maxSurgeOf,
  planInputFor,
  scaleRequeueDelays,
  TEMPLATE_RECHECK_MS,
  type ScaleResult,
} from './k3scontrolplane.scale.js';
import type { ProviderKinds } from '@capstan/provider-kit';

const now = Date.parse('2026-01-01T00:00:00Z');

describe('planning input', () => {
  it('takes maxSurge 0 or 1 from the rollout strategy, 1 by default', () => {
    expect(maxSurgeOf(testKcp())).toBe(1);
    expect(maxSurgeOf(testKcp({ rollout: { strategy: { rollingUpdate: { maxSurge: 0 } } } }))).toBe(0);
    expect(maxSurgeOf(testKcp({ rollout: { strategy: { rollingUpdate: { maxSurge: '0' } } } }))).toBe(0);
  });

  it('offers only the failure domains meant for control plane machines', () => {
    const cluster = testCluster({
      status: {
        failureDomains: [
          { name: 'fd-a', controlPlane: true },
          { name: 'fd-x', controlPlane: false },
          { name: 'fd-y' },
        ],
      },
    });
    const input = planInputFor(testKcp({ replicas: undefined }), cluster, [], true, now);
    expect(input).toMatchObject({ desiredReplicas: 1, initialized: true, failureDomains: ['fd-a'], now });
  });
});

describe('scaleRequeueDelays', () => {
  const idle: ScaleResult = { plan: { action: { type: 'none' } }, settled: true, execution: {} };

  it('asks for nothing while a watch event will bring the next step', () => {
    expect(scaleRequeueDelays(testKcp(), idle, now)).toEqual([]);
  });

  it('looks again for the cache, a deferred remediation, a missing template and rollout.after', () => {
    const waiting: ScaleResult = {
      plan: { action: { type: 'wait', message: 'deferred', retryAt: now + 5_000 } },
      settled: false,
      execution: { retryAfterMs: TEMPLATE_RECHECK_MS },
    };
    const kcp = testKcp({ rollout: { after: new Date(now + 60_000).toISOString() } });
    expect(scaleRequeueDelays(kcp, waiting, now)).toEqual([
      EXPECTATION_RECHECK_MS,
      5_000,
      TEMPLATE_RECHECK_MS,
      61_000,
    ]);
    // A rollout.after in the past is due now: the machines' facts already say they are out of date.
    const past = testKcp({ rollout: { after: new Date(now - 1).toISOString() } });
    expect(scaleRequeueDelays(past, idle, now)).toEqual([]);
  });
});

describe('ControlPlaneScaler', () => {
  it('records a remediation on the K3sControlPlane before deleting the unhealthy machine', async () => {
    const test = new TestScope(testKcp({ remediation: { maxRetry: 2 } }), {
      facts: [testMachine('a', { needsRemediation: true }), testMachine('b'), testMachine('c')],
      now: new Date(now),
    });
    const deleted: string[] = [];
    const machineClient = {
      delete: async (ref: ObjectRef) => {
        deleted.push(`${ref.name} after ${test.written.length} write(s)`);
        return {};
      },
    };
    const expectations = new MachineExpectations();
    const scaler = new ControlPlaneScaler({
      // Remediation deletes a machine and creates nothing: the other clients are never called.
      client: {} as KubeClient,
      recorder: {} as EventRecorder,
      machineClient: machineClient as unknown as ResourceClient<Machine>,
      configClient: {} as ResourceClient<K3sConfig>,
      machines: { getByName: () => undefined },
      kinds: {} as ProviderKinds,
      expectations,
    });

    const result = await scaler.reconcile(test.scope, true);

    expect(result.plan.action).toEqual({ type: 'remediate', machine: 'a', retryCount: 0 });
    expect(deleted).toEqual(['a after 1 write(s)']);
    const recorded = test.written[0]!.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.remediationInProgress];
    expect(parseRemediationRecord(recorded)).toEqual({
      machine: 'a',
      time: '2026-01-01T00:00:00Z',
      retryCount: 0,
    });
    expect(result.execution.lastRemediation).toEqual(parseRemediationRecord(recorded));
    expect(test.recorded).toEqual(['MachineRemediated: Deleted unhealthy machine a (retry 0)']);
    // Until the cache shows the deletion, nothing more is planned.
    expect(expectations.satisfied(test.kit.key, () => 'present')).toBe(false);
  });
});
