import { RESOURCES } from '@capstan/api';
import { eventHandlerModule } from '@capstan/provider-kit';
import { referencedSimRoute } from '@capstan/sim';
import { SIM_CLUSTER_CONTROLLER } from '../reconcilers/simcluster.reconciler.js';

/** `cluster.created` names the Cluster's infrastructure: a SimCluster is reconciled at once (it only enqueues). */
export const ClusterLifecycleModule = eventHandlerModule('ClusterLifecycleHandler', {
  'cluster.created': referencedSimRoute(RESOURCES.SimCluster.kind, SIM_CLUSTER_CONTROLLER),
});
