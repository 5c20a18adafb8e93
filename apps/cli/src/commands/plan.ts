import { CoreV1Api } from '@kubernetes/client-node';
import { Command, Option } from 'commander';
import { decodeSecretData, planSecretName } from '@capstan/node-agent';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output, type OutputFormat } from '../output.js';
import { planView, renderPlanView } from '../plan/plan-view.js';

export function planCommand(output: Output): Command {
  const plan = new Command('plan').description("Machine plans: what each machine's node agent applies");
  plan
    .command('show')
    .description("Show a machine's plan, its state, probe statuses and saved output")
    .argument('<machine>', 'name of the Machine')
    .option('-n, --namespace <namespace>', 'namespace of the Machine')
    .option('--show-content', 'print file contents (they may hold secrets); by default only size and checksum')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'))
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText('after', '\nExample:\n  capstan plan show demo-md-0-x7k2p -n default')
    .action(
      async (
        machine: string,
        opts: KubeconfigOptions & { namespace?: string; showContent?: boolean; output: OutputFormat },
      ) => {
        const kc = loadKubeConfig(opts);
        const namespace = namespaceOf(kc, opts.namespace);
        const name = planSecretName(machine);
        let secret;
        try {
          secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name, namespace });
        } catch (error) {
          if ((error as { code?: number }).code === 404) {
            throw new CliError(`Machine ${namespace}/${machine} has no plan Secret (${name}): it has no node agent, or is not bootstrapped yet`);
          }
          throw error;
        }
        const view = planView(`${namespace}/${name}`, decodeSecretData(secret.data), opts.showContent === true);
        if (opts.output === 'text') output.line(renderPlanView(view));
        else output.data(view, opts.output);
      },
    );
  return plan;
}
