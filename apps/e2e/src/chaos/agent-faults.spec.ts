import { applicationsOf } from './agent-faults.js';

// The agent phase's verdict: a plan applied twice is counted from its instruction's side effects in the machine.
describe('applicationsOf', () => {
  it('counts one run, and a run resumed after a kill, as no double application', () => {
    expect(applicationsOf(['start 0 1', 'end 0'], 0, 0)).toEqual({ runs: 1, resumesAfterKill: 0, double: false });
    expect(applicationsOf(['start 0 1', 'start 0 2', 'end 0'], 0, 1)).toEqual({ runs: 2, resumesAfterKill: 1, double: false });
  });

  it('counts a run again without a kill, or two complete runs, as a double application', () => {
    // The plan ran again because its report failed (issue 32, finding 8).
    expect(applicationsOf(['start 0 1', 'end 0', 'start 0 2', 'end 0'], 0, 0).double).toBe(true);
    // A kill allowed one resumed run; the orphan of the killed run completed as well.
    expect(applicationsOf(['start 0 1', 'start 0 2', 'end 0', 'end 0'], 0, 1).double).toBe(true);
    expect(applicationsOf(['start 1 1', 'end 1', 'start 0 1', 'end 0'], 0, 0).double).toBe(false);
  });
});
