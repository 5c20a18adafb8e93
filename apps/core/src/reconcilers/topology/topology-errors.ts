// Why a topology cannot be reconciled as written: the Cluster's TopologyReconciled condition says it, naming the
// ClusterClass, template, patch or variable, and nothing of the desired state is applied.

export type TopologyProblemReason = 'ReconcileFailed' | 'ClusterClassNotReconciled';

/** A problem of the class, the topology, a template, a variable or a patch (never a value: values may be secret). */
export class TopologyError extends Error {
  constructor(
    message: string,
    readonly reason: TopologyProblemReason = 'ReconcileFailed',
  ) {
    super(message);
    this.name = 'TopologyError';
  }
}
