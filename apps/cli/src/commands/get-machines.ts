import { Command } from 'commander';
import { LABELS, RESOURCES, type Machine } from '@capstan/api';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { type Output } from '../output.js';
import { listObjects } from '../tables/fetch.js';
import { machineRows, machinesTable } from '../tables/machines.js';
import { asList } from '../tables/table.js';
import { noneFound, outputOption, type GetFormat } from './get-clusters.js';

export function getMachinesCommand(output: Output): Command {
  return new Command('machines')
    .alias('machine')
    .description('List machines: their cluster, node, provider ID, phase and version')
    .option('-c, --cluster <name>', 'only the machines of this cluster')
    .option('-n, --namespace <namespace>', 'namespace of the machines (default: the kubeconfig context\'s, else default)')
    .option('-A, --all-namespaces', 'the machines of every namespace')
    .addOption(outputOption())
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText(
      'after',
      `
-o wide adds UP TO DATE, READY and PLAN APPLIED: the status of each Machine's condition of that name
(PlanApplied: its node agent applied the current machine plan; see capstan plan show).

Examples:
  capstan get machines -c demo
  capstan get machines -A -o wide
  capstan get machines -n fleet -o yaml`,
    )
    .action(
      async (opts: KubeconfigOptions & { cluster?: string; namespace?: string; allNamespaces?: boolean; output?: GetFormat }) => {
        const kc = loadKubeConfig(opts);
        const namespace = opts.allNamespaces ? undefined : namespaceOf(kc, opts.namespace);
        // The core labels every Machine with its cluster: the API server filters, however many machines there are.
        const labelSelector = opts.cluster ? `${LABELS.clusterName}=${opts.cluster}` : undefined;
        const machines = await listObjects<Machine>(kc, RESOURCES.Machine, { namespace, labelSelector });
        if (opts.output === 'json' || opts.output === 'yaml') {
          output.data(asList(machines), opts.output);
          return;
        }
        if (machines.length === 0) {
          noneFound(opts.cluster ? `machines of cluster ${opts.cluster}` : 'machines', namespace);
          return;
        }
        output.line(machinesTable(machineRows(machines), { wide: opts.output === 'wide', allNamespaces: namespace === undefined }));
      },
    );
}
