import { Command, Option } from 'commander';
import { buildTree, renderTree, treeRows } from '@capstan/describe';
import { fetchClusterObjects } from '../describe/fetch.js';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { type Output } from '../output.js';

export function describeCommand(output: Output): Command {
  const describe = new Command('describe').description('Describe workload clusters');
  describe
    .command('cluster')
    .description('Show the state of a cluster and its machines as a tree')
    .argument('<name>', 'name of the cluster')
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--show-conditions <kinds>', 'list the conditions of these kinds: all, a kind (Machine) or kind/name; comma-separated')
    .option('--grouping <bool>', 'group machines with the same status into one row', 'true')
    .addOption(new Option('-c, --color', 'force colour even when not printing to a terminal'))
    .addOption(new Option('-o, --output <format>', 'print the objects as data').choices(['json', 'yaml']))
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExamples:\n  capstan describe cluster demo\n  capstan describe cluster demo --show-conditions all\n  capstan describe cluster demo -o yaml')
    .action(
      async (
        name: string,
        opts: KubeconfigOptions & { namespace?: string; showConditions?: string; grouping: string; color?: boolean; output?: 'json' | 'yaml' },
      ) => {
        const kc = loadKubeConfig(opts);
        const objects = await fetchClusterObjects(kc, namespaceOf(kc, opts.namespace), name);
        if (opts.output) {
          output.data(objects, opts.output);
          return;
        }
        const tree = buildTree(objects, {
          showConditions: opts.showConditions?.split(',').map((s) => s.trim()).filter(Boolean),
          grouping: opts.grouping !== 'false',
        });
        output.line(renderTree(treeRows(tree), opts.color ?? output.colour));
      },
    );
  return describe;
}
