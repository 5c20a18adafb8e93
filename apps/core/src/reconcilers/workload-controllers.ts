import type { V1Namespace } from '@kubernetes/client-node';
import {
  RESOURCES,
  type Cluster,
  type ExtensionConfig,
  type Machine,
  type MachineDeployment,
  type MachineHealthCheck,
  type MachineSet,
} from '@capstan/api';
import { type CanUpdateMachineRequest, type CanUpdateMachineResponse } from '@capstan/events';
import { ProviderKinds, TemplateClusterOwnership, type ControllerHost } from '@capstan/provider-kit';
import { NAMESPACES } from '@capstan/kube';
import type { WorkloadClusters } from '../remote/workload-clusters.js';
import { extensionConfigController } from '../runtime/extensionconfig.controller.js';
import { RuntimeClient } from '../runtime/runtime-client.js';
import { clusterClassController } from './clusterclass/clusterclass.controller.js';
import { clusterResourceSetController } from './clusterresourceset/clusterresourceset.controller.js';
import { machineDeploymentController } from './machinedeployment/machinedeployment.controller.js';
import { machineHealthCheckController } from './machinehealthcheck/machinehealthcheck.controller.js';
import { machineSetController } from './machineset/machineset.controller.js';
import { TemplateCloner, type TemplateObject } from './shared/template-cloner.js';
import { ORPHANS_BY_NAMESPACE, orphansByNamespace, type WorkloadContext } from './shared/workload-context.js';
import { topologyController } from './topology/topology.controller.js';

/**
 * Registers the MachineSet, MachineDeployment, MachineHealthCheck, ClusterClass, ExtensionConfig, topology and
 * ClusterResourceSet controllers of the core service; they share the service's client and caches. The MachineHealthCheck reads Nodes, and the ClusterResourceSet
 * applies add-ons, through `workloadClusters`.
 */
export function registerWorkloadControllers(
  host: ControllerHost,
  deps: {
    workloadClusters: WorkloadClusters;
    /** Asks a Machine's bootstrap provider whether a change can be applied in place (NATS request/reply). */
    askCanUpdate: (request: CanUpdateMachineRequest) => Promise<CanUpdateMachineResponse>;
    now?: () => Date;
    /** How often a Reconcile ClusterResourceSet reads its resources again (default 30 s; tests shorten it). */
    clusterResourceSetPeriodMs?: number;
  },
): void {
  const templates = new TemplateCloner(host.client, new ProviderKinds(host.client), (type) =>
    host.manager.informer<TemplateObject>(type),
  );
  const workload: WorkloadContext = {
    client: host.client,
    clusters: host.manager.informer<Cluster>(RESOURCES.Cluster),
    machines: host.manager.informer<Machine>(RESOURCES.Machine),
    machineSets: host.manager.informer<MachineSet>(RESOURCES.MachineSet),
    machineDeployments: host.manager.informer<MachineDeployment>(RESOURCES.MachineDeployment),
    machineHealthChecks: host.manager.informer<MachineHealthCheck>(RESOURCES.MachineHealthCheck),
    templates,
    templateOwnership: new TemplateClusterOwnership(
      host.client,
      (ref) => templates.resolve(ref.apiGroup, ref.kind),
      (type) => host.manager.informer(type),
    ),
    askCanUpdate: deps.askCanUpdate,
    now: deps.now ?? (() => new Date()),
  };
  // Adoption looks at objects no controller owns: indexed, so no reconcile scans the whole namespace.
  if (!workload.machines.hasIndexer(ORPHANS_BY_NAMESPACE)) {
    workload.machines.addIndexer(ORPHANS_BY_NAMESPACE, orphansByNamespace);
  }
  if (!workload.machineSets.hasIndexer(ORPHANS_BY_NAMESPACE)) {
    workload.machineSets.addIndexer(ORPHANS_BY_NAMESPACE, orphansByNamespace);
  }
  machineSetController(workload).register(host);
  machineDeploymentController(workload).register(host);
  machineHealthCheckController(workload, deps.workloadClusters).register(host);
  clusterClassController({ now: workload.now }).register(host);
  extensionConfigController({ now: workload.now }).register(host);
  // Created here, before the manager starts, so the manager waits for both caches.
  const runtime = new RuntimeClient({
    extensionConfigs: host.manager.informer<ExtensionConfig>(RESOURCES.ExtensionConfig),
    namespaces: host.manager.informer<V1Namespace>(NAMESPACES),
    logger: host.logger,
  });
  topologyController(workload, { runtime }).register(host);
  clusterResourceSetController(deps.workloadClusters, {
    now: workload.now,
    reconcilePeriodMs: deps.clusterResourceSetPeriodMs,
  }).register(host);
}
