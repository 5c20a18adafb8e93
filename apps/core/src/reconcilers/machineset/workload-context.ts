import type { Cluster, Machine, MachineDeployment, MachineHealthCheck, MachineSet } from '@capstan/api';
import type { EventPublisher } from '@capstan/events';
import type { Informer, KubeClient } from '@capstan/kube';
import type { TemplateCloner } from './template-cloner.js';

/** What the MachineSet, MachineDeployment and MachineHealthCheck controllers share: one client, one set of caches. */
export interface WorkloadContext {
  client: KubeClient;
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  machineSets: Informer<MachineSet>;
  machineDeployments: Informer<MachineDeployment>;
  machineHealthChecks: Informer<MachineHealthCheck>;
  templates: TemplateCloner;
  publisher: EventPublisher;
  now: () => Date;
}
