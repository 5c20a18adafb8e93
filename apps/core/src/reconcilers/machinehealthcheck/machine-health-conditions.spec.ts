import { running } from '../../testing/machine-builder.js';
import {
  MHC_FIELD_MANAGER,
  appliedByHealthCheck,
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
    // OwnerRemediated is there but someone else wrote it: nothing for the health check to do.
    expect(healthConditionsChanged(machine, healthy)).toBe(false);
    machine.metadata.managedFields = [
      {
        manager: MHC_FIELD_MANAGER,
        operation: 'Apply',
        subresource: 'status',
        fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"OwnerRemediated"}': {} } } },
      },
    ];
    expect(appliedByHealthCheck(machine, 'OwnerRemediated')).toBe(true);
    expect(healthConditionsChanged(machine, healthy)).toBe(true);
  });
});

describe('writing the health check conditions onto a Machine', () => {
  it("replaces what changed, removes what it wrote and no longer wants, and keeps everyone else's", () => {
    const machine = running('m', {
      conditions: { HealthCheckSucceeded: 'True', ExternallyRemediated: 'False' },
    });
    machine.metadata.managedFields = [
      {
        manager: MHC_FIELD_MANAGER,
        operation: 'Update',
        subresource: 'status',
        fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"ExternallyRemediated"}': {} } } },
      },
    ];
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
