import { type Cluster, type Condition } from '@capstan/api';
import { OwnWrites } from '@capstan/kube';
import { RECONCILE_SUCCEEDED_CONDITION, type ConditionPolicy } from './condition-policy.js';
import { primaryPredicate } from './define-controller.js';

/** The primary predicate of a declared controller that names only its conditions (the default test on updates). */
const worthReconciling = <T extends Cluster>(ownWrites: OwnWrites, conditions: ConditionPolicy) =>
  primaryPredicate<T>({ conditions }, ownWrites);

const condition = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: status === 'True' ? type : `Not${type}`,
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

function cluster(resourceVersion: string, conditions: Condition[], spec: Cluster['spec'] = {}): Cluster {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { namespace: 'ns', name: 'c', resourceVersion },
    spec,
    status: { conditions },
  };
}

describe('worthReconciling', () => {
  const before = cluster('1', [condition('Available', 'False'), condition('Foreign', 'False')]);

  it('reconciles adds and deletes, and updates of spec or of a condition someone else owns', () => {
    const predicate = worthReconciling<Cluster>(new OwnWrites(), { owned: ['Available'] });
    expect(predicate({ type: 'add', object: before })).toBe(true);
    expect(predicate({ type: 'delete', object: before })).toBe(true);
    const foreign = cluster('2', [condition('Available', 'False'), condition('Foreign', 'True')]);
    expect(predicate({ type: 'update', oldObject: before, object: foreign })).toBe(true);
    const spec = cluster('2', before.status!.conditions!, { paused: true });
    expect(predicate({ type: 'update', oldObject: before, object: spec })).toBe(true);
  });

  it("skips status writes touching only the controller's conditions and the kit's, and the controller's own writes", () => {
    const ownWrites = new OwnWrites();
    const predicate = worthReconciling<Cluster>(ownWrites, { owned: ['Available'] });
    const owned = cluster('2', [
      condition('Available', 'True'),
      condition('Foreign', 'False'),
      condition('Paused', 'False'),
      condition(RECONCILE_SUCCEEDED_CONDITION, 'False'),
    ]);
    expect(predicate({ type: 'update', oldObject: before, object: owned })).toBe(false);
    const written = cluster('3', [condition('Available', 'False'), condition('Foreign', 'True')], {
      paused: true,
    });
    ownWrites.record(written, '1');
    expect(predicate({ type: 'update', oldObject: before, object: written })).toBe(false);
  });
});
