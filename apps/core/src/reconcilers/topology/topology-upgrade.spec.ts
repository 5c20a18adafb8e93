import { decideVersions, upgradeConcurrency, type MachineDeploymentState } from './topology-upgrade.js';

// Upstream's computeControlPlaneVersion / computeMachineDeploymentVersion scenarios (desired_state_test.go), without
// Runtime SDK hooks: the control plane first, workers once it has arrived, in order, `upgrade-concurrency` at a time.
describe('decideVersions', () => {
  const OLD = 'v1.33.2';
  const NEW = 'v1.34.4';
  const md = (topologyName: string, over: Partial<MachineDeploymentState> = {}): MachineDeploymentState => ({
    topologyName,
    version: OLD,
    upgrading: false,
    deferred: false,
    holdsSequence: false,
    ...over,
  });
  const stable = (version: string) => ({ version, statusVersion: version, settling: false });

  it('creates a new control plane at the topology version', () => {
    expect(
      decideVersions({
        topologyVersion: NEW,
        controlPlane: undefined,
        machineDeployments: [],
        concurrency: 1,
      }).controlPlaneVersion,
    ).toBe(NEW);
  });

  it('keeps the version of a control plane that is still provisioning, upgrading or settling', () => {
    for (const controlPlane of [
      { version: OLD, settling: false },
      { version: OLD, statusVersion: 'v1.32.0', settling: false },
      { version: OLD, statusVersion: OLD, settling: true },
    ]) {
      const decision = decideVersions({
        topologyVersion: NEW,
        controlPlane,
        machineDeployments: [md('md-0')],
        concurrency: 1,
      });
      expect(decision.controlPlaneVersion).toBe(OLD);
      expect(decision.machineDeploymentVersions.get('md-0')).toBe(OLD);
    }
  });

  it('moves a stable control plane first and keeps the workers until it has arrived', () => {
    const decision = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(OLD),
      machineDeployments: [md('md-0')],
      concurrency: 1,
    });
    expect(decision.controlPlaneVersion).toBe(NEW);
    expect(decision.controlPlaneUpgrading).toBe(true);
    expect(decision.machineDeploymentVersions.get('md-0')).toBe(OLD);
    expect(decision.upgradePending).toEqual(['md-0']);
  });

  it('does not move the control plane while a worker has not caught up with it', () => {
    for (const worker of [md('md-0', { upgrading: true }), md('md-0', { version: 'v1.32.0' })]) {
      const decision = decideVersions({
        topologyVersion: NEW,
        controlPlane: stable(OLD),
        machineDeployments: [worker],
        concurrency: 1,
      });
      expect(decision.controlPlaneVersion).toBe(OLD);
    }
  });

  it('moves the workers in order, upgrade-concurrency at a time, once the control plane has arrived', () => {
    const workers = [md('md-0'), md('md-1'), md('md-2')];
    const one = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: workers,
      concurrency: 1,
    });
    expect([...one.machineDeploymentVersions]).toEqual([
      ['md-0', NEW],
      ['md-1', OLD],
      ['md-2', OLD],
    ]);
    expect(one.upgradePending).toEqual(['md-1', 'md-2']);
    const two = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: workers,
      concurrency: 2,
    });
    expect(two.upgradePending).toEqual(['md-2']);
  });

  it('counts a worker still rolling out towards the concurrency, and lets the next one go once it is done', () => {
    const rolling = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: [md('md-0', { version: NEW, upgrading: true }), md('md-1')],
      concurrency: 1,
    });
    expect(rolling.machineDeploymentVersions.get('md-1')).toBe(OLD);
    expect(rolling.machineDeploymentsUpgrading).toEqual(['md-0']);
    const done = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: [md('md-0', { version: NEW }), md('md-1')],
      concurrency: 1,
    });
    expect(done.machineDeploymentVersions.get('md-1')).toBe(NEW);
  });

  it('skips a deferred worker and holds every worker from a held one on', () => {
    const decision = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: [
        md('md-0', { deferred: true }),
        md('md-1'),
        md('md-2', { holdsSequence: true }),
        md('md-3'),
      ],
      concurrency: 5,
    });
    expect([...decision.machineDeploymentVersions]).toEqual([
      ['md-0', OLD],
      ['md-1', NEW],
      ['md-2', OLD],
      ['md-3', OLD],
    ]);
    expect(decision.deferred).toEqual(['md-0', 'md-2', 'md-3']);
  });

  it('creates a new worker only once the control plane has arrived at the topology version', () => {
    const moving = decideVersions({
      topologyVersion: NEW,
      controlPlane: { version: NEW, statusVersion: OLD, settling: true },
      machineDeployments: [md('md-new', { version: undefined })],
      concurrency: 1,
    });
    expect(moving.createPending).toEqual(['md-new']);
    const arrived = decideVersions({
      topologyVersion: NEW,
      controlPlane: stable(NEW),
      machineDeployments: [md('md-new', { version: undefined })],
      concurrency: 1,
    });
    expect(arrived.createPending).toEqual([]);
  });

  it('reads upgrade-concurrency from the Cluster, 1 when unset or not a positive integer', () => {
    expect(upgradeConcurrency(undefined)).toBe(1);
    expect(upgradeConcurrency({ 'topology.cluster.x-k8s.io/upgrade-concurrency': '3' })).toBe(3);
    for (const value of ['0', '-2', '1.5', 'many'])
      expect(upgradeConcurrency({ 'topology.cluster.x-k8s.io/upgrade-concurrency': value })).toBe(1);
  });
});
