import { computeMachineHealthCheckV1Beta1Status } from './machinehealthcheck.v1beta1-status.js';

// status.deprecated.v1beta1 of a MachineHealthCheck against upstream's machinehealthcheck_controller.go.

const t0 = new Date('2026-03-01T12:00:00Z');
const t1 = new Date('2026-03-01T12:10:00Z');

describe('MachineHealthCheck status.deprecated.v1beta1', () => {
  it('is RemediationAllowed, or TooManyUnhealthy (Warning) with the v1beta2 message, keeping its time while unchanged', () => {
    const allowed = computeMachineHealthCheckV1Beta1Status(undefined, { allowed: true, remaining: 2 }, t0);
    expect(allowed).toEqual({ conditions: [{ type: 'RemediationAllowed', status: 'True', lastTransitionTime: '2026-03-01T12:00:00Z' }] });
    expect(computeMachineHealthCheckV1Beta1Status(allowed, { allowed: true, remaining: 1 }, t1)).toEqual(allowed);

    const message =
      'Remediation is not allowed, the number of not started or unhealthy machines exceeds unhealthyLessThanOrEqualTo (total: 3, unhealthy: 2, unhealthyLessThanOrEqualTo: 1)';
    expect(computeMachineHealthCheckV1Beta1Status(allowed, { allowed: false, remaining: 0, message }, t1)).toEqual({
      conditions: [
        {
          type: 'RemediationAllowed',
          status: 'False',
          severity: 'Warning',
          lastTransitionTime: '2026-03-01T12:10:00Z',
          reason: 'TooManyUnhealthy',
          message,
        },
      ],
    });
  });
});
