import type { CanUpdateMachineRequest, CanUpdateMachineResponse } from '@capstan/events';
import type { Cluster, Machine, MachineDeployment, MachineHealthCheck, MachineSet } from '@capstan/api';
import { BY_OWNER, getControllerOf, type IndexFunc, type Informer, type KubeClient } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { TemplateCloner } from './template-cloner.js';
import type { TemplateClusterOwnership } from '@capstan/provider-kit';

/** What the MachineSet, MachineDeployment and MachineHealthCheck controllers share: one client, one set of caches. */
export interface WorkloadContext {
  client: KubeClient;
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  machineSets: Informer<MachineSet>;
  machineDeployments: Informer<MachineDeployment>;
  machineHealthChecks: Informer<MachineHealthCheck>;
  templates: TemplateCloner;
  /** Puts the Cluster among the owners of the templates deployments and sets use. */
  templateOwnership: TemplateClusterOwnership;
  /** Asks a Machine's bootstrap provider whether a change can be applied in place (NATS request/reply). */
  askCanUpdate: (request: CanUpdateMachineRequest) => Promise<CanUpdateMachineResponse>;
  now: () => Date;
}

/** The Cluster a MachineSet, MachineDeployment or MachineHealthCheck names in `spec.clusterName`, as the cache shows it. */
export function clusterOf(
  workload: WorkloadContext,
  obj: MachineSet | MachineDeployment | MachineHealthCheck,
): Cluster | undefined {
  return workload.clusters.getByName(obj.metadata.namespace, obj.spec.clusterName);
}

/** Index of objects no controller owns, by namespace: the candidates for adoption, found without a full scan. */
export const ORPHANS_BY_NAMESPACE = 'capstan.dev/orphans-by-namespace';

export const orphansByNamespace: IndexFunc = (obj) =>
  getControllerOf(obj) ? [] : [obj.metadata?.namespace ?? ''];

/** What `owner` controls among the objects of an informer (BY_OWNER index, controller references only). */
export function controlledBy<T extends KubernetesObject>(
  informer: Informer<T>,
  owner: KubernetesObject,
): T[] {
  const uid = owner.metadata?.uid;
  if (!uid) return [];
  return informer.byIndex(BY_OWNER, uid).filter((obj) => getControllerOf(obj)?.uid === uid);
}
