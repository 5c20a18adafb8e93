import { type ServiceDefinition } from '@capstan/provider-kit';
import { simClusterOptionsFromEnv, type SimClusterOptions } from '@capstan/sim';
import { ClusterLifecycleModule } from './events/cluster-lifecycle.handler.js';
import { simClusterController } from './reconcilers/simcluster.controller.js';

export const CLUSTER_PROVIDER = 'cluster-provider';

/** The infrastructure cluster provider: SimCluster (ARCHITECTURE §9). */
export function createClusterProviderService(
  options: SimClusterOptions = simClusterOptionsFromEnv(),
): ServiceDefinition {
  return {
    name: CLUSTER_PROVIDER,
    consumes: 'lifecycle.cluster.>',
    modules: [ClusterLifecycleModule],
    setup(context) {
      simClusterController(options).register(context);
    },
  };
}
