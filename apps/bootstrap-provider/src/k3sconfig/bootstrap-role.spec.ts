import { decideBootstrap, WaitingReason, type BootstrapFacts } from './bootstrap-role.js';

const ready: BootstrapFacts = {
  controlPlaneMachine: true,
  designatedInitServer: false,
  infrastructureProvisioned: true,
  endpointKnown: true,
  controlPlaneInitialized: true,
};

describe('decideBootstrap', () => {
  it('waits for the cluster infrastructure and its endpoint, whatever the role', () => {
    for (const controlPlaneMachine of [true, false]) {
      expect(
        decideBootstrap({ ...ready, controlPlaneMachine, infrastructureProvisioned: false }),
      ).toMatchObject({
        action: 'wait',
        reason: WaitingReason.ClusterInfrastructure,
      });
      expect(decideBootstrap({ ...ready, controlPlaneMachine, endpointKnown: false })).toEqual({
        action: 'wait',
        reason: WaitingReason.ClusterInfrastructure,
        message: 'Waiting for the cluster control plane endpoint',
      });
    }
  });

  it('lets only the designated control plane machine initialize an uninitialized cluster', () => {
    const uninitialized = { ...ready, controlPlaneInitialized: false };
    expect(decideBootstrap({ ...uninitialized, designatedInitServer: true })).toEqual({
      action: 'render',
      role: 'init-server',
    });
    expect(decideBootstrap(uninitialized)).toMatchObject({
      action: 'wait',
      reason: WaitingReason.ControlPlaneInitialized,
    });
    // A worker never initializes, even if someone annotated its config.
    expect(
      decideBootstrap({ ...uninitialized, controlPlaneMachine: false, designatedInitServer: true }),
    ).toMatchObject({
      action: 'wait',
      reason: WaitingReason.ControlPlaneInitialized,
    });
  });

  it('joins servers and agents once the control plane is initialized, the designated machine included', () => {
    expect(decideBootstrap(ready)).toEqual({ action: 'render', role: 'join-server' });
    expect(decideBootstrap({ ...ready, designatedInitServer: true })).toEqual({
      action: 'render',
      role: 'join-server',
    });
    expect(decideBootstrap({ ...ready, controlPlaneMachine: false })).toEqual({
      action: 'render',
      role: 'agent',
    });
  });
});
