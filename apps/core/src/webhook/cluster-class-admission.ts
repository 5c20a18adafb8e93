import { RESOURCES, type Cluster, type ClusterClass, type ValidationIssue } from '@capstan/api';
import type { KubeClient } from '@capstan/kube';
import type { AdmissionVerdict } from './admission-verdict.js';
import { usesClusterClass } from '../reconcilers/topology/cluster-class-ref.js';

// Upstream's ClusterClass webhook rules about the Clusters using a class (core/webhooks/admission/clusterclass.go):
// an update may not take away a worker class or a Kubernetes version a Cluster uses, and a class in use cannot be
// deleted. The rules about the class alone are libs/api's validateClusterClass and the CRD's CEL rules (which also
// keep template API groups and kinds fixed).

/** Names listed in a refusal; the rest are counted. */
const LISTED_CLUSTERS = 3;
const READ_TIMEOUT_MS = 5_000;

export class ClusterClassAdmission {
  constructor(private readonly client: KubeClient) {}

  async reviewUpdate(clusterClass: ClusterClass, old: ClusterClass): Promise<ValidationIssue[]> {
    const removed = (list: 'machineDeployments' | 'machinePools') => {
      const kept = new Set((clusterClass.spec.workers?.[list] ?? []).map((worker) => worker.class));
      return new Set(
        (old.spec.workers?.[list] ?? []).map((worker) => worker.class).filter((name) => !kept.has(name)),
      );
    };
    const removedDeployments = removed('machineDeployments');
    const removedPools = removed('machinePools');
    const versions = clusterClass.spec.kubernetesVersions ?? [];
    if (removedDeployments.size === 0 && removedPools.size === 0 && versions.length === 0) return [];
    const issues: ValidationIssue[] = [];
    for (const cluster of await this.clustersUsing(old)) {
      const topology = cluster.spec!.topology!;
      if (versions.length > 0 && !versions.includes(topology.version))
        issues.push({
          path: 'spec.kubernetesVersions',
          message: `Kubernetes Version ${topology.version} is used by Cluster "${cluster.metadata.name}" but not set in ClusterClass`,
        });
      for (const md of topology.workers?.machineDeployments ?? [])
        if (removedDeployments.has(md.class))
          issues.push({
            path: 'spec.workers.machineDeployments',
            message: `MachineDeploymentClass "${md.class}" cannot be deleted because it is used by Cluster "${cluster.metadata.name}"`,
          });
      for (const mp of topology.workers?.machinePools ?? [])
        if (removedPools.has(mp.class))
          issues.push({
            path: 'spec.workers.machinePools',
            message: `MachinePoolClass "${mp.class}" cannot be deleted because it is used by Cluster "${cluster.metadata.name}"`,
          });
    }
    return issues;
  }

  async reviewDelete(clusterClass: ClusterClass): Promise<AdmissionVerdict> {
    const users = await this.clustersUsing(clusterClass);
    if (users.length === 0) return { issues: [], warnings: [] };
    const names = users.slice(0, LISTED_CLUSTERS).map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
    const more = users.length > LISTED_CLUSTERS ? `, ... (${users.length - LISTED_CLUSTERS} more)` : '';
    return {
      issues: [],
      warnings: [],
      forbidden: `ClusterClass cannot be deleted because it is used by Cluster(s): ${names.join(', ')}${more}`,
    };
  }

  /** The Clusters whose topology names this class (in any namespace: classRef.namespace may point across). */
  private async clustersUsing(clusterClass: ClusterClass): Promise<Cluster[]> {
    const { items } = await this.client
      .resource<Cluster>(RESOURCES.Cluster)
      .listAll({ signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    return items.filter((cluster) => usesClusterClass(cluster, clusterClass));
  }
}
