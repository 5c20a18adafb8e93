import type { Machine } from '@capstan/api';
import { CONTROL_PLANE_ANNOTATIONS, formatRemediationRecord } from './annotations.js';
import { controlPlaneMachineFrom } from './machine-facts.js';
import { machineSpecHash } from './spec-hash.js';

const kcpSpec = {
  version: 'v1.31.4',
  machineTemplate: {
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachineTemplate', name: 'cp' },
    },
  },
  k3sConfigSpec: { serverConfig: { disableComponents: ['traefik'] } },
};
const hash = machineSpecHash({ spec: kcpSpec });

function machine(
  overrides: {
    version?: string;
    annotations?: Record<string, string>;
    created?: string;
    conditions?: { type: string; status: string }[];
  } = {},
): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name: 'cp-a',
      creationTimestamp: (overrides.created ?? '2026-01-01T00:00:00Z') as unknown as Date,
      annotations: overrides.annotations ?? { [CONTROL_PLANE_ANNOTATIONS.specHash]: hash },
    },
    spec: {
      clusterName: 'demo',
      version: overrides.version ?? 'v1.31.4',
      bootstrap: {},
      infrastructureRef: { apiGroup: 'infrastructure.capstan.dev', kind: 'SimMachine', name: 'cp-a' },
    },
    status: {
      conditions: (overrides.conditions ?? []).map((c) => ({
        ...c,
        reason: 'X',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      })) as never,
      nodeRef: { name: 'node-a' },
    },
  };
}

const now = Date.parse('2026-02-01T00:00:00Z');

describe('controlPlaneMachineFrom', () => {
  it('is up to date with the same version and spec hash', () => {
    expect(controlPlaneMachineFrom(machine(), { specHash: hash, version: 'v1.31.4' }, now)).toMatchObject({
      upToDate: true,
      outdatedReasons: [],
      hasNode: true,
      createdAt: Date.parse('2026-01-01T00:00:00Z'),
    });
  });

  it('names why a machine is out of date: version, template or config, rollout.after', () => {
    const desired = { specHash: hash, version: 'v1.32.0' };
    expect(controlPlaneMachineFrom(machine(), desired, now).outdatedReasons).toEqual([
      'version v1.31.4 -> v1.32.0',
    ]);
    const changed = machineSpecHash({ spec: { ...kcpSpec, k3sConfigSpec: {} } });
    expect(
      controlPlaneMachineFrom(machine(), { specHash: changed, version: 'v1.31.4' }, now).outdatedReasons,
    ).toEqual(['machine template or K3s config changed']);
    const after = Date.parse('2026-01-15T00:00:00Z');
    expect(
      controlPlaneMachineFrom(machine(), { specHash: hash, version: 'v1.31.4', rolloutAfter: after }, now)
        .upToDate,
    ).toBe(false);
    // Not yet due, or the machine is newer than rollout.after.
    expect(
      controlPlaneMachineFrom(machine(), { specHash: hash, version: 'v1.31.4', rolloutAfter: now + 1 }, now)
        .upToDate,
    ).toBe(true);
    expect(
      controlPlaneMachineFrom(
        machine({ created: '2026-01-20T00:00:00Z' }),
        { specHash: hash, version: 'v1.31.4', rolloutAfter: after },
        now,
      ).upToDate,
    ).toBe(true);
  });

  it('reads readiness, remediation requests and the remediation a machine replaces', () => {
    const record = { machine: 'cp-old', time: '2026-01-01T00:00:00Z', retryCount: 2 };
    const facts = controlPlaneMachineFrom(
      machine({
        annotations: {
          [CONTROL_PLANE_ANNOTATIONS.remediationFor]: formatRemediationRecord(record),
          'cluster.x-k8s.io/delete-machine': '',
        },
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'OwnerRemediated', status: 'False' },
        ],
      }),
      { specHash: hash, version: 'v1.31.4' },
      now,
    );
    expect(facts).toMatchObject({
      ready: true,
      available: false,
      needsRemediation: true,
      deleteRequested: true,
      remediationFor: record,
    });
  });

  it('hashes specs independently of key order', () => {
    const reordered = {
      k3sConfigSpec: kcpSpec.k3sConfigSpec,
      machineTemplate: kcpSpec.machineTemplate,
      version: 'v1.31.4',
    };
    expect(machineSpecHash({ spec: reordered })).toBe(hash);
    expect(machineSpecHash({ spec: { ...kcpSpec, version: 'v1.31.5' } })).not.toBe(hash);
  });
});
