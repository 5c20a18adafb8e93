import { running } from '../../testing/machine-builder.js';
import {
  writtenByHealthCheck,
  desiredHealthConditions,
  healthConditionsChanged,
  withHealthConditions,
} from './machine-health-conditions.js';

const failed = {
  type: 'HealthCheckSucceeded',
  status: 'False' as const,
  reason: 'UnhealthyNode',
  message: 'Health check failed',
};
const now = new Date('2026-06-01T12:00:00Z');

describe('conditions a health check writes on a Machine', () => {
  it('asks the owner to remediate an unhealthy Machine', () => {
    const conditions = desiredHealthConditions(
      running('m'),
      { healthCheck: failed, requestOwnerRemediation: true },
      now,
    );
    expect(conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['HealthCheckSucceeded', 'False', 'UnhealthyNode'],
      ['OwnerRemediated', 'False', 'WaitingForRemediation'],
    ]);
  });

  it('keeps a remediation the owner has under way as it is', () => {
    const machine = running('m', { conditions: { OwnerRemediated: 'False' } });
    machine.status!.conditions!.find((c) => c.type === 'OwnerRemediated')!.reason = 'MachineDeleting';
    const conditions = desiredHealthConditions(
      machine,
      { healthCheck: failed, requestOwnerRemediation: true },
      now,
    );
    expect(conditions[1]).toBe(machine.status!.conditions!.find((c) => c.type === 'OwnerRemediated'));
  });

  it('writes nothing when the Machine already says so, and removes what it applied and no longer wants', () => {
    const machine = running('m', { conditions: { HealthCheckSucceeded: 'True', OwnerRemediated: 'False' } });
    machine.status!.conditions!.find((c) => c.type === 'HealthCheckSucceeded')!.reason =
      'HealthCheckSucceeded';
    const healthy = desiredHealthConditions(
      machine,
      {
        healthCheck: {
          type: 'HealthCheckSucceeded',
          status: 'True',
          reason: 'HealthCheckSucceeded',
          message: '',
        },
      },
      now,
    );
    // OwnerRemediated is there but the owner took it over (a reason of its own): nothing for the health check to do.
    const ownerRemediated = machine.status!.conditions!.find((c) => c.type === 'OwnerRemediated')!;
    expect(writtenByHealthCheck(ownerRemediated)).toBe(false);
    expect(healthConditionsChanged(machine, healthy)).toBe(false);
    // Still the health check's request (its reason): the Machine is healthy again, so the request goes.
    ownerRemediated.reason = 'WaitingForRemediation';
    expect(writtenByHealthCheck(ownerRemediated)).toBe(true);
    expect(healthConditionsChanged(machine, healthy)).toBe(true);
    expect(withHealthConditions(machine, healthy).map((c) => c.type)).not.toContain('OwnerRemediated');
  });
});

describe('writing the health check conditions onto a Machine', () => {
  it("replaces what changed, removes what it wrote and no longer wants, and keeps everyone else's", () => {
    const machine = running('m', {
      conditions: { HealthCheckSucceeded: 'True', ExternallyRemediated: 'False' },
    });
    // The health check's own external remediation request, which it no longer wants.
    machine.status!.conditions!.find((c) => c.type === 'ExternallyRemediated')!.reason =
      'WaitingForRemediation';
    const before = structuredClone(machine.status!.conditions!);
    const desired = desiredHealthConditions(
      machine,
      { healthCheck: failed, requestOwnerRemediation: true },
      now,
    );
    const written = withHealthConditions(machine, desired);
    expect(written.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['Available', 'True'],
      ['NodeHealthy', 'True'],
      ['HealthCheckSucceeded', 'False'],
      ['OwnerRemediated', 'False'],
    ]);
    // The Machine controller's conditions stay exactly as it wrote them.
    expect(written.slice(0, 3)).toEqual(before.slice(0, 3));
    expect(machine.status!.conditions).toEqual(before);
  });
});
