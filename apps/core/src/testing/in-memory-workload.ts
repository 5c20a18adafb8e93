import { type KubernetesObject } from '@kubernetes/client-node';
import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import {
  CanUpdateMachineError,
  type CanUpdateMachineRequest,
  type CanUpdateMachineResponse,
} from '@capstan/events';
import { CUSTOM_RESOURCE_DEFINITIONS, EVENTS_V1, NAMESPACES, SECRETS } from '@capstan/kube';
import { InMemoryApiServer } from '@capstan/kube/testing';
import { inMemoryControllerHost, type InMemoryControllerHost } from '@capstan/provider-kit/testing';
import { GENERIC_PROVIDER_CRDS, GENERIC_PROVIDER_KINDS } from '@capstan/testing';
import { ExternalObjects } from '../external/external-objects.js';
import { ProviderHints } from '../external/provider-hints.js';
import { indexReferences } from '../external/reference-index.js';
import { clusterController } from '../reconcilers/cluster/cluster.controller.js';
import { machineController } from '../reconcilers/machine/machine.controller.js';
import { registerWorkloadControllers } from '../reconcilers/workload-controllers.js';
import { WorkloadClusters } from '../remote/workload-clusters.js';
import { resourceOf, TEST_FIELD_MANAGER, type WorkloadTestBed } from './workload-env.js';

/** The namespace every in-memory workload test writes to (the in-memory server needs no Namespace object). */
export const IN_MEMORY_NAMESPACE = 'workload';

export interface InMemoryWorkload extends WorkloadTestBed {
  readonly server: InMemoryApiServer;
  /** The core's side: the host the controllers run on, and its client (field manager `capstan-core`). */
  readonly host: InMemoryControllerHost;
  stop(): Promise<void>;
}

export interface InMemoryWorkloadOptions {
  /**
   * Also run the Cluster and Machine controllers (the whole core), reading provider objects on every change as with
   * `--watch-external-providers` (no hand-off events here). Default: only the workload controllers.
   */
  wholeCore?: boolean;
  /** The workload controllers' clock. */
  now?: () => Date;
  /** Answers a MachineSet's or MachineDeployment's in-place question; default: no provider answers, as on NATS. */
  askCanUpdate?: (request: CanUpdateMachineRequest) => Promise<CanUpdateMachineResponse>;
}

/**
 * The workload controllers (MachineSet, MachineDeployment, MachineHealthCheck, ClusterClass, topology,
 * ClusterResourceSet; with `wholeCore` the Cluster and Machine
 * controllers too) on the in-memory API server
 * (`@capstan/kube/testing`, held to the real API server's contract), with the generic provider kinds and their CRDs
 * served: the seam for table tests of their reconcile orchestration. `client` plays everyone else (users, the
 * Machine controller, providers), as `startWorkloadEnv` does on the real servers; what crosses components (events on
 * NATS, workload clusters) stays on those.
 */
export async function startInMemoryWorkload(
  options: InMemoryWorkloadOptions = {},
): Promise<InMemoryWorkload> {
  const server = new InMemoryApiServer([
    RESOURCES.Cluster,
    RESOURCES.Machine,
    RESOURCES.MachineSet,
    RESOURCES.MachineDeployment,
    RESOURCES.MachineHealthCheck,
    RESOURCES.ClusterResourceSet,
    RESOURCES.ClusterResourceSetBinding,
    RESOURCES.ClusterClass,
    { type: RESOURCES.ExtensionConfig, statusSubresource: true },
    { type: NAMESPACES, statusSubresource: false },
    ...GENERIC_PROVIDER_KINDS.map((kind) => resourceOf(kind.kind)),
    { type: CUSTOM_RESOURCE_DEFINITIONS, statusSubresource: false },
    { type: SECRETS, statusSubresource: false },
    { type: EVENTS_V1, statusSubresource: false },
  ]);
  const client = server.client({ fieldManager: TEST_FIELD_MANAGER });
  // The provider kinds resolve through their CRDs' contract labels, as on a real management cluster.
  const crds = client.resource<KubernetesObject>(CUSTOM_RESOURCE_DEFINITIONS);
  for (const crd of GENERIC_PROVIDER_CRDS) await crds.create(crd as KubernetesObject);
  const host = inMemoryControllerHost(server.client({ fieldManager: 'capstan-core' }), { name: 'core' });
  const workloadClusters = new WorkloadClusters({ manager: host.manager, logger: host.logger });
  if (options.wholeCore) {
    indexReferences(
      host.manager.informer<Cluster>(RESOURCES.Cluster),
      host.manager.informer<Machine>(RESOURCES.Machine),
    );
    const external = new ExternalObjects({
      client: host.client,
      manager: host.manager,
      logger: host.logger,
      watch: true,
      hints: new ProviderHints(),
    });
    clusterController({ external, workloads: workloadClusters }).register(host);
    machineController({ external, workloads: workloadClusters }).register(host);
  }
  registerWorkloadControllers(host, {
    workloadClusters,
    askCanUpdate:
      options.askCanUpdate ??
      ((request) =>
        Promise.reject(
          new CanUpdateMachineError(
            `no answer from the ${request.bootstrapConfig.kind} provider`,
            'in-memory',
          ),
        )),
    now: options.now,
  });
  await host.manager.start();
  return {
    server,
    client,
    host,
    ns: { name: IN_MEMORY_NAMESPACE },
    stop: async () => {
      await host.stop();
      await workloadClusters.stop();
      await host.client.close();
      await client.close();
    },
  };
}
