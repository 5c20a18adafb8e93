import { type MachineDeployment } from '@capstan/api';
import { CliError } from '../output.js';

/** A pool's short name: the MachineDeployment's name without the `<cluster>-` prefix the templates give it. */
export function poolName(cluster: string, deployment: string): string {
  return deployment.startsWith(`${cluster}-`) ? deployment.slice(cluster.length + 1) : deployment;
}

/**
 * The cluster's MachineDeployment a user means by `--pool`: its full name (`demo-md-0`) or the short one (`md-0`).
 * Refused with the cluster's pools named when none matches.
 */
export function findPool(
  deployments: readonly MachineDeployment[],
  cluster: { namespace: string; name: string },
  pool: string,
): MachineDeployment {
  const own = deployments.filter((md) => md.spec.clusterName === cluster.name && md.metadata.namespace === cluster.namespace);
  const found =
    own.find((md) => md.metadata.name === pool) ?? own.find((md) => md.metadata.name === `${cluster.name}-${pool}`);
  if (found) return found;
  const names = own
    .map((md) => md.metadata.name ?? '')
    .sort()
    .map((name) => `${name} (${poolName(cluster.name, name)})`);
  throw new CliError(
    `Cluster ${cluster.namespace}/${cluster.name} has no MachineDeployment "${pool}" or "${cluster.name}-${pool}"; ` +
      (names.length > 0 ? `its pools: ${names.join(', ')}` : 'it has no MachineDeployments'),
  );
}
