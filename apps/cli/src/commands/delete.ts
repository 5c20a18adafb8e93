import { CustomObjectsApi } from '@kubernetes/client-node';
import { Command } from 'commander';
import { condition } from '@capstan/describe';
import { getCluster } from '../describe/fetch.js';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output } from '../output.js';

const seconds = (value: string): number => {
  const match = /^(\d+)(s|m)?$/.exec(value);
  if (!match) throw new Error(`expected a duration like 300s or 10m, got "${value}"`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
};

export function deleteCommand(output: Output): Command {
  const del = new Command('delete').description('Delete workload clusters');
  del
    .command('cluster')
    .description('Delete a cluster; the core tears down workers, control plane and infrastructure in order')
    .argument('<name>', 'name of the cluster')
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--wait', 'wait until the cluster and everything it owns is gone')
    .option('--wait-timeout <duration>', 'how long --wait waits', seconds, 600)
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExample:\n  capstan delete cluster demo --wait')
    .action(async (name: string, opts: KubeconfigOptions & { namespace?: string; wait?: boolean; waitTimeout: number }) => {
      const kc = loadKubeConfig(opts);
      const namespace = namespaceOf(kc, opts.namespace);
      const api = kc.makeApiClient(CustomObjectsApi);
      await getCluster(kc, namespace, name);
      await api.deleteNamespacedCustomObject({ group: 'cluster.x-k8s.io', version: 'v1beta2', namespace, plural: 'clusters', name });
      if (!opts.wait) {
        output.line(`Cluster ${namespace}/${name} deleting`);
        return;
      }
      const progress = output.progress(`Deleting cluster ${namespace}/${name}`);
      const deadline = Date.now() + opts.waitTimeout * 1000;
      for (;;) {
        const cluster = await getCluster(kc, namespace, name).catch((error: Error) => {
          if (error instanceof CliError) return undefined;
          throw error;
        });
        if (!cluster) break;
        const deleting = condition(cluster, 'Deleting');
        progress.update(`Deleting cluster ${namespace}/${name}: ${deletionStep(cluster)}`);
        if (Date.now() > deadline) {
          progress.fail();
          throw new CliError(`Cluster ${namespace}/${name} still exists after ${opts.waitTimeout}s${deleting?.reason ? ` (${deleting.reason})` : ''}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      progress.done(`Cluster ${namespace}/${name} deleted`);
    });
  return del;
}

/**
 * Where a Cluster's deletion is. Until the core has seen the deletion, its Deleting condition still says
 * NotDeleting from before the request, so that is not shown.
 */
export function deletionStep(cluster: Parameters<typeof condition>[0]): string {
  const deleting = cluster?.metadata?.deletionTimestamp ? condition(cluster, 'Deleting') : undefined;
  if (deleting?.status !== 'True') return 'waiting for the core to start deleting';
  const message = deleting.message?.split('\n')[0];
  return message ? `${deleting.reason} (${message})` : (deleting.reason ?? 'Deleting');
}
