import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { getCluster } from '../describe/fetch.js';
import { CliError, type Output } from '../output.js';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { getClustersCommand } from './get-clusters.js';
import { getMachinesCommand } from './get-machines.js';

/** Reads `<cluster>-kubeconfig` (key `value`), as `clusterctl get kubeconfig` does. */
export async function workloadKubeconfig(kc: KubeConfig, namespace: string, cluster: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const secretName = `${cluster}-kubeconfig`;
  let secret;
  try {
    secret = await core.readNamespacedSecret({ name: secretName, namespace });
  } catch (error) {
    if ((error as { code?: number }).code === 404) {
      // No secret is only the control plane's fault when the Cluster exists: getCluster says "not found" otherwise.
      await getCluster(kc, namespace, cluster);
      throw new CliError(`Secret ${namespace}/${secretName} not found: cluster ${cluster} has no kubeconfig yet (is its control plane initialized?)`);
    }
    throw error;
  }
  const value = secret.data?.['value'];
  if (!value) throw new CliError(`Secret ${namespace}/${secretName} has no "value" key`);
  return Buffer.from(value, 'base64').toString('utf8');
}

export function getCommand(output: Output): Command {
  const get = new Command('get')
    .description('Get information from the management cluster')
    .addHelpText(
      'after',
      '\nExamples:\n  capstan get clusters\n  capstan get machines -c demo -o wide\n  capstan get kubeconfig demo > demo.kubeconfig',
    );
  get
    .command('kubeconfig')
    .description("Print a workload cluster's admin kubeconfig")
    .argument('<cluster>', 'name of the cluster')
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExample:\n  capstan get kubeconfig demo > demo.kubeconfig && kubectl --kubeconfig demo.kubeconfig get nodes')
    .action(async (cluster: string, opts: KubeconfigOptions & { namespace?: string }) => {
      const kc = loadKubeConfig(opts);
      output.line((await workloadKubeconfig(kc, namespaceOf(kc, opts.namespace), cluster)).trimEnd());
    });
  get.addCommand(getClustersCommand(output));
  get.addCommand(getMachinesCommand(output));
  return get;
}
