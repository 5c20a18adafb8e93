import { parseUnhealthyRange, remediationAllowance } from './remediation-allowance.js';

describe('remediation short-circuit', () => {
  it('allows everything without triggerIf', () => {
    expect(remediationAllowance(undefined, 5, 5)).toEqual({ allowed: true, remaining: 0 });
  });

  it('compares unhealthy Machines with unhealthyLessThanOrEqualTo (number or percent, rounded down)', () => {
    expect(remediationAllowance({ unhealthyLessThanOrEqualTo: 2 }, 5, 1)).toEqual({
      allowed: true,
      remaining: 1,
    });
    const refused = remediationAllowance({ unhealthyLessThanOrEqualTo: '40%' }, 5, 3);
    expect(refused.allowed).toBe(false);
    expect(refused.message).toBe(
      'Remediation is not allowed, the number of not started or unhealthy machines exceeds unhealthyLessThanOrEqualTo (total: 5, unhealthy: 3, unhealthyLessThanOrEqualTo: 40%)',
    );
    expect(remediationAllowance({ unhealthyLessThanOrEqualTo: '49%' }, 5, 2)).toEqual({
      allowed: true,
      remaining: 0,
    });
  });

  it('requires the unhealthy count to fall in unhealthyInRange', () => {
    expect(parseUnhealthyRange('[2-4]')).toEqual({ min: 2, max: 4 });
    expect(parseUnhealthyRange('[4-2]')).toBeUndefined();
    expect(remediationAllowance({ unhealthyInRange: '[2-4]' }, 10, 3)).toEqual({
      allowed: true,
      remaining: 1,
    });
    expect(remediationAllowance({ unhealthyInRange: '[2-4]' }, 10, 1).allowed).toBe(false);
    expect(remediationAllowance({ unhealthyInRange: '[2-4]' }, 10, 5).allowed).toBe(false);
  });
});
