import { getV1Beta1Condition, type Machine, type MachineSet, type MachineSetStatus } from '@capstan/api';
import { iso, machine, NOW } from '../../testing/machine-builder.js';
import { computeMachineSetStatus, type MachineSetObservation } from './machineset.status.js';

// status.deprecated.v1beta1 of a MachineSet, through computeMachineSetStatus, against upstream's
// reconcileV1Beta1Status.

const now = new Date(NOW);

const set = (replicas: number, status?: MachineSetStatus, deleting = false): MachineSet => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'MachineSet',
  metadata: { name: 'ms', namespace: 'ns', uid: 'ms-uid', generation: 4, ...(deleting ? { deletionTimestamp: new Date(NOW) } : {}) },
  spec: {
    clusterName: 'demo',
    replicas,
    selector: { matchLabels: { pool: 'a' } },
    template: {
      metadata: { labels: { pool: 'a', tier: 'web' } },
      spec: {
        clusterName: 'demo',
        bootstrap: { dataSecretName: 'd' },
        infrastructureRef: { apiGroup: 'i', kind: 'K', name: 'n' },
        minReadySeconds: 30,
      },
    },
  },
  ...(status ? { status } : {}),
});

/** A Machine whose Node has been Ready for `readyFor` seconds (none: no Node), its v1beta1 Ready as given. */
function member(name: string, readyFor: number | undefined, v1beta1Ready: { status: string; reason?: string; severity?: string; message?: string }): Machine {
  const m = machine({
    name,
    labels: { pool: 'a', tier: 'web' },
    ...(readyFor === undefined ? {} : { nodeRef: `node-${name}`, conditions: { NodeReady: 'True' }, transitionSecondsAgo: readyFor }),
  });
  m.status!.deprecated = { v1beta1: { conditions: [{ type: 'Ready', lastTransitionTime: iso(600), ...v1beta1Ready }] } };
  return m;
}

const observe = (machineSet: MachineSet, machines: Machine[], extra: Partial<MachineSetObservation> = {}) =>
  computeMachineSetStatus({ machineSet, cluster: undefined, machines, isUpToDate: () => true, now, ...extra });
const v1beta1 = (status: MachineSetStatus) => status.deprecated?.v1beta1 ?? {};
const condition = (status: MachineSetStatus, type: string) => getV1Beta1Condition(v1beta1(status).conditions, type);

describe('MachineSet status.deprecated.v1beta1', () => {
  it('counts fully labeled, ready (Node Ready) and available (for minReadySeconds) Machines', () => {
    const unlabeled = member('d', 300, { status: 'True' });
    unlabeled.metadata.labels = { pool: 'a' };
    const status = observe(set(4), [
      member('a', 300, { status: 'True' }),
      member('b', 10, { status: 'True' }),
      member('c', undefined, { status: 'False', severity: 'Info', reason: 'WaitingForInfrastructure', message: '1 of 2 completed' }),
      unlabeled,
    ]);
    expect(v1beta1(status)).toMatchObject({ fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 2 });
    expect(condition(status, 'MachinesReady')).toMatchObject({
      status: 'False',
      severity: 'Info',
      reason: 'WaitingForInfrastructure @ Machine/c',
      message: '3 of 4 completed',
    });
    // All 4 exist, but one has no ready Node yet: not Resized yet.
    expect(condition(status, 'Resized')).toBeUndefined();
    expect(condition(status, 'MachinesCreated')?.status).toBe('True');
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForInfrastructure @ Machine/c' });
  });

  it('is Resized only once all its Machines are ready; says ScalingUp / ScalingDown (Warning) with the counts', () => {
    const up = observe(set(3), [member('a', 300, { status: 'True' })]);
    expect(condition(up, 'Resized')).toMatchObject({
      status: 'False',
      severity: 'Warning',
      reason: 'ScalingUp',
      message: 'Scaling up MachineSet to 3 replicas (actual 1)',
    });
    expect(condition(up, 'MachinesCreated')).toBeUndefined();
    expect(condition(up, 'Ready')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'ScalingUp' });

    const created = observe(set(1, up), [member('a', 300, { status: 'True' })]);
    expect(condition(created, 'Resized')?.status).toBe('True');
    expect(condition(created, 'Ready')).toMatchObject({ status: 'True' });
    expect(created.deprecated).toEqual(observe(set(1, created), [member('a', 300, { status: 'True' })]).deprecated);

    const down = observe(set(0, undefined, true), [member('a', 300, { status: 'True' })]);
    expect(condition(down, 'Resized')).toMatchObject({ reason: 'ScalingDown', message: 'Scaling down MachineSet to 0 replicas (actual 1)' });

    const notReadyYet = observe(set(1), [member('a', undefined, { status: 'True' })]);
    expect(condition(notReadyYet, 'Resized')).toBeUndefined();
  });

  it('says which template it could not clone (Error) until it has its Machines, and is MachinesReady without any', () => {
    const failed = observe(set(2), [], {
      creationFailure: { stage: 'infrastructure', message: 'simmachinetemplates.x "n" not found' },
    });
    expect(condition(failed, 'MachinesCreated')).toMatchObject({
      status: 'False',
      severity: 'Error',
      reason: 'InfrastructureTemplateCloningFailed',
      message: 'simmachinetemplates.x "n" not found',
    });
    expect(condition(failed, 'MachinesReady')?.status).toBe('True');
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', severity: 'Error', reason: 'InfrastructureTemplateCloningFailed' });
    expect(v1beta1(failed)).toMatchObject({ fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0 });
  });
});
