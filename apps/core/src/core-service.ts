import { askCanUpdateMachine } from '@capstan/events';
import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { type ServiceContext, type ServiceDefinition } from '@capstan/provider-kit';
import { ExternalObjects } from './external/external-objects.js';
import { ProviderHints } from './external/provider-hints.js';
import { indexReferences } from './external/reference-index.js';
import { handoffModule } from './handoff/handoff.listener.js';
import { clusterController } from './reconcilers/cluster/cluster.controller.js';
import { machineController } from './reconcilers/machine/machine.controller.js';
import { registerWorkloadControllers } from './reconcilers/workload-controllers.js';
import { WorkloadClusters } from './remote/workload-clusters.js';
import { CoreWebhook } from './webhook/core-webhook.js';
import { WEBHOOK_FLAGS_HELP, type WebhookSettings } from './webhook/webhook-flags.js';

export interface CoreServiceOptions {
  /**
   * Reconcile Clusters and Machines on every change of the provider objects they reference (for third-party
   * providers that publish no hand-off events), not only on hand-off events and resyncs. The core reads provider
   * objects from its cache either way. Default: `WATCH_EXTERNAL_PROVIDERS=true` in the environment.
   */
  watchExternalProviders?: boolean;
  /** Serve the v1beta1 <-> v1beta2 conversion webhook (docs/compatibility.md); unset: none. */
  webhook?: WebhookSettings;
}

/**
 * The core service: the Cluster API controllers for Cluster and Machine (this file's wiring), MachineSet,
 * MachineDeployment and MachineHealthCheck (registerWorkloadControllers), and the hand-off consumer.
 */
export function createCoreService(options: CoreServiceOptions = {}): ServiceDefinition {
  const watchExternalProviders =
    options.watchExternalProviders ?? process.env['WATCH_EXTERNAL_PROVIDERS'] === 'true';
  // Shared by the hand-off routes, which note the versions events name, and the reads that settle them.
  const hints = new ProviderHints();
  return {
    name: 'core',
    helpText: [
      'Core flags:',
      '  --watch-external-providers  reconcile on every change of the provider objects Clusters and Machines',
      '                              reference (also WATCH_EXTERNAL_PROVIDERS=true), not only on hand-off events',
      WEBHOOK_FLAGS_HELP,
    ].join('\n'),
    consumes: 'handoff.>',
    modules: [handoffModule(hints)],
    setup(context: ServiceContext) {
      const { manager } = context;
      indexReferences(
        manager.informer<Cluster>(RESOURCES.Cluster),
        manager.informer<Machine>(RESOURCES.Machine),
      );

      const workloadClusters = new WorkloadClusters({
        manager,
        logger: context.logger,
        fieldManager: context.client.fieldManager,
      });
      manager.shards?.addReleaseHook((stillOwned) => workloadClusters.release(stillOwned));
      const external = new ExternalObjects({
        client: context.client,
        manager,
        logger: context.logger,
        watch: watchExternalProviders,
        hints,
      });
      clusterController({ external, workloads: workloadClusters }).register(context);
      machineController({ external, workloads: workloadClusters }).register(context);
      registerWorkloadControllers(context, {
        workloadClusters,
        askCanUpdate: (request) => askCanUpdateMachine(context.bus.nc, context.topology.root, request),
      });
      const webhook =
        options.webhook &&
        new CoreWebhook(
          context.client,
          // Replicas share the webhook's certificates through a Secret in the core's own namespace.
          { ...options.webhook, namespace: context.options.leaderElectionNamespace },
          context.logger.child({ component: 'conversion-webhook' }),
        );
      webhook?.start();
      context.logger.info(
        { watchExternalProviders, webhook: options.webhook !== undefined },
        'core controllers registered',
      );
      return async () => {
        await webhook?.stop();
        await workloadClusters.stop();
      };
    },
  };
}

export const coreService: ServiceDefinition = createCoreService();

export { coreCommandLine } from './core-command-line.js';
