import { type ServiceContext } from '@capstan/provider-kit';
import { type WorkloadClusters } from '../remote/workload-clusters.js';

/** Registers the MachineSet, MachineDeployment and MachineHealthCheck controllers (filled in by their issue). */
export function registerWorkloadControllers(_context: ServiceContext, _deps: { workloadClusters: WorkloadClusters }): void {
  // The MachineSet, MachineDeployment and MachineHealthCheck controllers are registered here.
}
