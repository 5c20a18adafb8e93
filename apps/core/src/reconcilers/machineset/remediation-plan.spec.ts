import { planRemediation, remediationsInFlight } from './remediation-plan.js';
import { machine, running } from '../../testing/machine-builder.js';

const names = (list: { metadata: { name?: string } }[]) => list.map((m) => m.metadata.name);

describe('MachineSet remediation plan', () => {
  const unhealthy = (name: string, createdSecondsAgo: number) =>
    running(name, {
      createdSecondsAgo,
      conditions: { HealthCheckSucceeded: 'False', OwnerRemediated: 'False' },
    });

  it('remediates machines marked by a health check, newest first, within maxInFlight', () => {
    const plan = planRemediation(
      [unhealthy('a', 300), running('ok'), unhealthy('b', 100), unhealthy('c', 200)],
      2,
    );
    expect(names(plan.remediate)).toEqual(['b', 'c']);
    expect(names(plan.deferred)).toEqual(['a']);
  });

  it('counts remediations still deleting against maxInFlight', () => {
    const inFlight = machine({ name: 'gone', deleting: true, conditions: { OwnerRemediated: 'False' } });
    inFlight.status!.conditions![0]!.reason = 'MachineDeleting';
    expect(remediationsInFlight([inFlight])).toBe(1);
    const plan = planRemediation([inFlight, unhealthy('a', 10)], 1);
    expect(plan.remediate).toEqual([]);
    expect(names(plan.deferred)).toEqual(['a']);
  });

  it('leaves machines alone that only failed the check without an OwnerRemediated request', () => {
    const plan = planRemediation([running('x', { conditions: { HealthCheckSucceeded: 'False' } })], Infinity);
    expect(plan.remediate).toEqual([]);
  });

  it('drops OwnerRemediated from machines that are healthy again', () => {
    const recovered = running('r', {
      conditions: { HealthCheckSucceeded: 'True', OwnerRemediated: 'False' },
    });
    expect(names(planRemediation([recovered], Infinity).recovered)).toEqual(['r']);
  });
});
