import { Command, Option } from 'commander';
import { loadKubeConfig, type KubeconfigOptions } from '../kubeconfig.js';
import { type Output } from '../output.js';
import { clusterRows, clustersTable } from '../tables/clusters.js';
import { fetchClusterListing } from '../tables/fetch.js';
import { asList } from '../tables/table.js';

export type GetFormat = 'json' | 'yaml' | 'wide';

export const outputOption = (): Option =>
  new Option('-o, --output <format>', 'json or yaml: the objects as a v1 List; wide: more columns').choices(['json', 'yaml', 'wide']);

/** kubectl's "No resources found": on stderr, so a script reading the table from stdout sees no rows. */
export function noneFound(what: string, namespace: string | undefined): void {
  process.stderr.write(`No ${what} found ${namespace ? `in namespace ${namespace}` : 'in any namespace'}.\n`);
}

export function getClustersCommand(output: Output): Command {
  return new Command('clusters')
    .alias('cluster')
    .description('List workload clusters: phase, version, control plane and worker machines ready/desired')
    .option('-n, --namespace <namespace>', 'only the clusters of this namespace (default: all namespaces)')
    .option('-A, --all-namespaces', 'the clusters of every namespace (the default)')
    .addOption(outputOption())
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText(
      'after',
      `
Columns: CONTROL PLANE is ready/desired control plane machines, WORKERS is ready/desired machines summed over the
cluster's MachineDeployments; VERSION is the control plane's. -o wide adds ENDPOINT, INFRASTRUCTURE, AVAILABLE.

Examples:
  capstan get clusters
  capstan get clusters -n fleet -o wide
  capstan get clusters -o json | jq -r '.items[].metadata.name'`,
    )
    .action(async (opts: KubeconfigOptions & { namespace?: string; allNamespaces?: boolean; output?: GetFormat }) => {
      const kc = loadKubeConfig(opts);
      const namespace = opts.allNamespaces ? undefined : opts.namespace;
      const listing = await fetchClusterListing(kc, namespace);
      if (opts.output === 'json' || opts.output === 'yaml') {
        output.data(asList(listing.clusters), opts.output);
        return;
      }
      if (listing.clusters.length === 0) {
        noneFound('clusters', namespace);
        return;
      }
      output.line(clustersTable(clusterRows(listing), { wide: opts.output === 'wide' }));
    });
}
