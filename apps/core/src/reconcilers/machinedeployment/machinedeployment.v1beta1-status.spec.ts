import {
  getV1Beta1Condition,
  type MachineDeployment,
  type MachineDeploymentStatus,
  type MachineSet,
  type MachineSetV1Beta1DeprecatedStatus,
} from '@capstan/api';
import { NOW, running } from '../../testing/machine-builder.js';
import { computeMachineDeploymentStatus } from './machinedeployment.status.js';

// status.deprecated.v1beta1 of a MachineDeployment, through computeMachineDeploymentStatus, against upstream's
// syncDeploymentStatus / calculateV1Beta1Status.

const now = new Date(NOW);
const later = new Date(NOW + 60_000);

const deployment = (
  replicas: number,
  status?: MachineDeploymentStatus,
  deleting = false,
): MachineDeployment =>
  ({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'MachineDeployment',
    metadata: {
      name: 'md',
      namespace: 'ns',
      generation: 2,
      ...(deleting ? { deletionTimestamp: new Date(NOW) } : {}),
    },
    spec: { clusterName: 'demo', replicas, selector: { matchLabels: { pool: 'a' } } },
    ...(status ? { status } : {}),
  }) as unknown as MachineDeployment;

const machineSet = (
  name: string,
  replicas: number,
  actual: number,
  v1beta1: MachineSetV1Beta1DeprecatedStatus,
): MachineSet =>
  ({
    metadata: { name },
    spec: { replicas },
    status: { replicas: actual, deprecated: { v1beta1 } },
  }) as unknown as MachineSet;

const readySet = (ready: boolean) =>
  machineSet('md-new', 2, 2, {
    readyReplicas: 2,
    availableReplicas: ready ? 2 : 1,
    fullyLabeledReplicas: 2,
    conditions: [
      ready
        ? { type: 'Ready', status: 'True', lastTransitionTime: '2026-06-01T11:00:00Z' }
        : {
            type: 'Ready',
            status: 'False',
            severity: 'Warning',
            reason: 'ScalingUp',
            message: 'Scaling up MachineSet to 2 replicas (actual 1)',
            lastTransitionTime: '2026-06-01T11:00:00Z',
          },
    ],
  });

function compute(
  md: MachineDeployment,
  sets: MachineSet[],
  current: MachineSet | undefined,
  maxUnavailable: number,
  at = now,
) {
  return computeMachineDeploymentStatus({
    deployment: md,
    cluster: undefined,
    machineSets: sets,
    ...(current ? { currentMachineSet: current } : {}),
    machines: [running('a'), running('b'), running('c')],
    isUpToDate: () => true,
    limits: { replicas: md.spec.replicas ?? 1, maxSurge: 1, maxUnavailable },
    now: at,
  });
}
const v1beta1 = (status: MachineDeploymentStatus) => status.deprecated?.v1beta1;
const condition = (status: MachineDeploymentStatus, type: string) =>
  getV1Beta1Condition(v1beta1(status)?.conditions, type);

describe('MachineDeployment status.deprecated.v1beta1', () => {
  it("sums its MachineSets' v1beta1 counters; updatedReplicas are the current set's", () => {
    const old = machineSet('md-old', 1, 1, {
      readyReplicas: 1,
      availableReplicas: 1,
      fullyLabeledReplicas: 1,
    });
    const status = compute(deployment(3), [old, readySet(false)], readySet(false), 1);
    expect(v1beta1(status)).toMatchObject({
      updatedReplicas: 2,
      readyReplicas: 3,
      availableReplicas: 2,
      unavailableReplicas: 1,
    });
  });

  it('is Available with replicas - maxUnavailable available, MachineSetReady mirroring the current set, Ready = Available', () => {
    const status = compute(deployment(2), [readySet(false)], readySet(false), 1);
    expect(condition(status, 'Available')?.status).toBe('True');
    expect(condition(status, 'MachineSetReady')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'ScalingUp',
    });
    expect(condition(status, 'Ready')?.status).toBe('True');

    const ready = compute(deployment(2, status), [readySet(true)], readySet(true), 1, later);
    expect(condition(ready, 'MachineSetReady')).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-06-01T12:01:00Z',
    });
    expect(condition(ready, 'Available')?.lastTransitionTime).toBe(
      condition(status, 'Available')?.lastTransitionTime,
    );
  });

  it('is not Available below it (Warning, quoting the v1beta2 availableReplicas), and waits for a MachineSet it lacks', () => {
    const status = compute(deployment(3), [readySet(false)], undefined, 0);
    expect(condition(status, 'Available')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'WaitingForAvailableMachines',
      message: 'Minimum availability requires 3 replicas, current 3 available',
    });
    expect(condition(status, 'MachineSetReady')).toMatchObject({
      status: 'False',
      severity: 'Info',
      reason: 'WaitingForMachineSet',
      message: 'MachineSet not found',
    });
    expect(condition(status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'WaitingForAvailableMachines',
    });
  });

  it('leaves it as it was while the MachineDeployment is being deleted', () => {
    const up = compute(deployment(2), [readySet(true)], readySet(true), 1);
    const going = compute(deployment(2, up, true), [], undefined, 1, later);
    expect(going.deprecated).toEqual(up.deprecated);
  });
});
