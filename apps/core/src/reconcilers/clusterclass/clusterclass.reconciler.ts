import {
  ConditionStatus,
  withConditions,
  type ClusterClass,
  type ClusterClassStatusVariable,
} from '@capstan/api';
import type { ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';

// Upstream's ClusterClass controller, for inline variables: the class's effective variable definitions go to
// status.variables (each `from: inline`), and VariablesReady says the topology controller may use them for this
// generation (it waits for observedGeneration to match). Definitions discovered from Runtime SDK extensions
// (DiscoverVariables) are not made here.

export const VARIABLES_READY = 'VariablesReady';
export const CLUSTER_CLASS_CONDITIONS = [VARIABLES_READY] as const;

export class ClusterClassReconciler implements ReconcilerParts<ClusterClass> {
  constructor(private readonly clock: () => Date = () => new Date()) {}

  async reconcileNormal(scope: ReconcileScope<ClusterClass>): Promise<void> {
    const clusterClass = scope.obj;
    const variables: ClusterClassStatusVariable[] = (clusterClass.spec.variables ?? []).map(
      ({ name, ...definition }) => ({
        name,
        definitions: [{ from: 'inline', ...structuredClone(definition) }],
      }),
    );
    const { variables: _previous, ...status } = clusterClass.status ?? {};
    clusterClass.status = {
      ...status,
      ...(variables.length > 0 ? { variables } : {}),
      observedGeneration: clusterClass.metadata?.generation,
      conditions: withConditions(
        clusterClass.status?.conditions,
        [{ type: VARIABLES_READY, status: ConditionStatus.True, reason: VARIABLES_READY }],
        clusterClass.metadata?.generation,
        this.clock(),
      ),
    };
  }
}
