import { type Machine, type MachineDeployment } from '@capstan/api';
import {
  controlPlaneProgress,
  controlPlaneRollout,
  isControlPlaneUpgraded,
  isMachineDeploymentUpgraded,
  machineDeploymentProgress,
  machineDeploymentRollout,
  parseKubernetesVersion,
  updatingMachineNames,
  upgradeCommandLine,
  upgradeProblem,
  type ControlPlaneRollout,
  type MachineDeploymentRollout,
} from './rollout.js';

const KCP = 'K3sControlPlane fleet/demo-control-plane';

describe('upgradeProblem', () => {
  it.each([
    ['v1.34.5', 'v1.34.4'],
    ['v1.35.0', 'v1.34.4'],
    ['v1.35.4+k3s1', 'v1.34.4+k3s1'],
    ['v1.34.4+k3s2', 'v1.34.4+k3s1'],
    ['v1.34.4+k3s1', 'v1.34.4'],
    ['v1.34.4', 'v1.34.4'],
  ])('lets %s follow %s', (target, current) => {
    expect(upgradeProblem(target, current, KCP)).toBeUndefined();
  });

  it('refuses what is not a Kubernetes version with the rule, before comparing anything', () => {
    expect(upgradeProblem('1.35.4', 'v1.34.4', KCP)).toMatch(
      /^--kubernetes-version "1\.35\.4" is not a Kubernetes version: a semantic version vX\.Y\.Z/,
    );
    expect(upgradeProblem('v1.35', undefined, KCP)).toMatch(/is not a Kubernetes version/);
  });

  it('refuses a downgrade naming both versions', () => {
    expect(upgradeProblem('v1.34.3', 'v1.34.4', KCP)).toBe(
      '--kubernetes-version v1.34.3 is older than the version of K3sControlPlane fleet/demo-control-plane, v1.34.4: a cluster cannot be downgraded',
    );
    expect(upgradeProblem('v1.33.9', 'v1.34.0', KCP)).toMatch(/older than .* v1\.34\.0/);
    expect(upgradeProblem('v1.34.4+k3s1', 'v1.34.4+k3s2', KCP)).toMatch(/older than/);
  });

  it('refuses skipping a minor, saying which minor comes first', () => {
    expect(upgradeProblem('v1.36.0', 'v1.34.4', KCP)).toBe(
      '--kubernetes-version v1.36.0 skips a minor version: K3sControlPlane fleet/demo-control-plane is at v1.34.4, ' +
        'and K3s upgrades one minor at a time; upgrade to v1.35.x first',
    );
    expect(upgradeProblem('v2.0.0', 'v1.34.4', KCP)).toMatch(/changes the major version/);
  });

  it('cannot compare with a control plane version that is not one, and has nothing to compare without one', () => {
    expect(upgradeProblem('v1.35.4', 'latest', KCP)).toMatch(
      /has spec\.version "latest", which is not a Kubernetes version/,
    );
    expect(upgradeProblem('v1.35.4', undefined, KCP)).toBeUndefined();
  });
});

describe('parseKubernetesVersion', () => {
  it('reads the numbers and the K3s release', () => {
    expect(parseKubernetesVersion('v1.35.4+k3s2')).toEqual({ major: 1, minor: 35, patch: 4, k3sRelease: 2 });
    expect(parseKubernetesVersion('v1.35.4')).toEqual({ major: 1, minor: 35, patch: 4 });
    expect(parseKubernetesVersion('v1.35.4-rc.1')).toBeUndefined();
  });
});

describe('isControlPlaneUpgraded', () => {
  const done: ControlPlaneRollout = {
    desiredReplicas: 3,
    replicas: 3,
    upToDateReplicas: 3,
    version: 'v1.35.4',
    generation: 4,
    observedGeneration: 4,
  };

  it('is true when every desired machine is up to date at the target and none is updating', () => {
    expect(isControlPlaneUpgraded(done, 'v1.35.4', [])).toBe(true);
    // Kinds that do not report observedGeneration are judged by the rest.
    expect(isControlPlaneUpgraded({ ...done, observedGeneration: undefined }, 'v1.35.4', [])).toBe(true);
  });

  it.each<[string, ControlPlaneRollout, string[]]>([
    ['an older status.version', { ...done, version: 'v1.34.4' }, []],
    ['a machine not yet up to date', { ...done, upToDateReplicas: 2 }, []],
    ['an old machine left after a surge', { ...done, replicas: 4 }, []],
    ['a status from before the patch', { ...done, observedGeneration: 3 }, []],
    ['a machine still updating in place', done, ['demo-control-plane-x7k2p']],
    ['no status at all', { desiredReplicas: 3, generation: 1 }, []],
  ])('is false with %s', (_why, controlPlane, updating) => {
    expect(isControlPlaneUpgraded(controlPlane, 'v1.35.4', updating)).toBe(false);
  });

  it('reads the contract fields of any control plane object', () => {
    const object = {
      metadata: { name: 'demo-control-plane', generation: 4 },
      spec: { replicas: 3, version: 'v1.35.4' },
      status: { replicas: 3, upToDateReplicas: 3, version: 'v1.35.4', observedGeneration: 4 },
    };
    expect(controlPlaneRollout(object)).toEqual(done);
  });
});

describe('isMachineDeploymentUpgraded', () => {
  const done: MachineDeploymentRollout = {
    desiredReplicas: 2,
    replicas: 2,
    upToDateReplicas: 2,
    generation: 7,
    observedGeneration: 7,
  };

  it('is true once the core has seen the new template and every machine is up to date, no old one left', () => {
    expect(isMachineDeploymentUpgraded(done, [])).toBe(true);
  });

  it.each<[string, MachineDeploymentRollout, string[]]>([
    // Counters from before the patch say all is up to date with the old version.
    ['a status from before the patch', { ...done, observedGeneration: 6 }, []],
    ['no observedGeneration', { ...done, observedGeneration: undefined }, []],
    ['an old machine still there', { ...done, replicas: 3 }, []],
    ['a machine not yet up to date', { ...done, upToDateReplicas: 1 }, []],
    ['a machine updating in place', done, ['demo-md-0-abc12-x7k2p']],
  ])('is false with %s', (_why, deployment, updating) => {
    expect(isMachineDeploymentUpgraded(deployment, updating)).toBe(false);
  });

  it('reads a MachineDeployment', () => {
    const md = {
      metadata: { name: 'demo-md-0', generation: 7 },
      spec: { replicas: 2 },
      status: { replicas: 2, upToDateReplicas: 2, observedGeneration: 7 },
    } as MachineDeployment;
    expect(machineDeploymentRollout(md)).toEqual(done);
  });
});

describe('progress lines', () => {
  it('shows the control plane as updated X/Y with the version its oldest machine runs', () => {
    const rollout: ControlPlaneRollout = {
      desiredReplicas: 3,
      replicas: 4,
      upToDateReplicas: 1,
      version: 'v1.34.4',
    };
    expect(controlPlaneProgress(rollout, [])).toBe('updated 1/3 (version v1.34.4)');
    expect(controlPlaneProgress(rollout, ['demo-control-plane-a', 'demo-control-plane-b'])).toBe(
      'updated 1/3 (version v1.34.4); updating: demo-control-plane-a, demo-control-plane-b',
    );
    expect(controlPlaneProgress({ desiredReplicas: 1 }, [])).toBe('updated 0/1 (version unknown)');
  });

  it('says when the counts are from before the patch, so about the old version', () => {
    const stale = { generation: 5, observedGeneration: 4 };
    expect(
      controlPlaneProgress(
        { desiredReplicas: 1, replicas: 1, upToDateReplicas: 1, version: 'v1.34.4', ...stale },
        [],
      ),
    ).toBe('updated 1/1 (version v1.34.4); its controller has not seen the new version yet');
    expect(
      machineDeploymentProgress({ desiredReplicas: 2, replicas: 2, upToDateReplicas: 2, ...stale }, [
        'demo-md-0-x',
      ]),
    ).toBe(
      'updated 2/2 (2 machines); its controller has not seen the new version yet; updating: demo-md-0-x',
    );
  });

  it('shows a MachineDeployment as updated X/Y and how many machines it has', () => {
    expect(machineDeploymentProgress({ desiredReplicas: 2, replicas: 3, upToDateReplicas: 1 }, [])).toBe(
      'updated 1/2 (3 machines)',
    );
    expect(
      machineDeploymentProgress({ desiredReplicas: 1, replicas: 1, upToDateReplicas: 0 }, ['demo-md-0-x']),
    ).toBe('updated 0/1 (1 machine); updating: demo-md-0-x');
  });

  it('names the machines whose Updating condition is True, sorted', () => {
    const machine = (name: string, status?: string) =>
      ({
        metadata: { name },
        status: status
          ? {
              conditions: [
                {
                  type: 'Updating',
                  status,
                  reason: 'InPlaceUpdating',
                  lastTransitionTime: '2026-11-23T22:49:28Z',
                },
              ],
            }
          : {},
      }) as Machine;
    expect(
      updatingMachineNames([
        machine('m-b', 'True'),
        machine('m-c', 'False'),
        machine('m-d'),
        machine('m-a', 'True'),
      ]),
    ).toEqual(['m-a', 'm-b']);
  });
});

describe('upgradeCommandLine', () => {
  it('is the command to run again, with the namespace and any kubeconfig flags, quoted for a shell', () => {
    expect(upgradeCommandLine('demo', 'v1.35.4', { namespace: 'default' })).toBe(
      'capstan upgrade cluster demo --kubernetes-version v1.35.4 -n default',
    );
    expect(
      upgradeCommandLine('demo', 'v1.35.4+k3s1', {
        namespace: 'fleet',
        kubeconfig: "/tmp/my configs/it's",
        kubeconfigContext: 'mgmt',
      }),
    ).toBe(
      `capstan upgrade cluster demo --kubernetes-version v1.35.4+k3s1 -n fleet --kubeconfig '/tmp/my configs/it'\\''s' --kubeconfig-context mgmt`,
    );
  });
});
