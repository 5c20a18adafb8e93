import type { ControlPlaneMachine } from './control-plane-machine.js';

/** A healthy, up-to-date control plane machine for planner and status tests, changed by `overrides`. */
export function testMachine(name: string, overrides: Partial<ControlPlaneMachine> = {}): ControlPlaneMachine {
  return {
    name,
    createdAt: 0,
    deleting: false,
    ready: true,
    available: true,
    hasNode: true,
    upToDate: true,
    outdatedReasons: [],
    needsRemediation: false,
    deleteRequested: false,
    ...overrides,
  };
}
