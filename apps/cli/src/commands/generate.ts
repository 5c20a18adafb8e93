import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { countArgument, generateCluster, templateVariables, UnknownTemplateError } from '@capstan/cluster-templates';
import { MissingVariablesError } from '@capstan/manifests';
import { CliError, type Output } from '../output.js';

function readFrom(source: string): string {
  return readFileSync(source === '-' ? 0 : source, 'utf8');
}

export function generateCommand(output: Output): Command {
  const generate = new Command('generate').description('Generate YAML for a workload cluster');
  generate
    .command('cluster')
    .description('Generate the objects of a workload cluster from a template')
    .argument('<name>', 'name of the cluster')
    .option('--kubernetes-version <version>', 'Kubernetes version of the cluster (KUBERNETES_VERSION)')
    .option(
      '--control-plane-machine-count <n>',
      'control plane machines (CONTROL_PLANE_MACHINE_COUNT); odd for K3s embedded etcd',
      countArgument('--control-plane-machine-count'),
    )
    .option('--worker-machine-count <n>', 'worker machines (WORKER_MACHINE_COUNT)', countArgument('--worker-machine-count'))
    .addOption(new Option('-i, --infrastructure <name>', 'infrastructure provider').default('sim'))
    .option('-f, --flavor <flavor>', 'template flavor: cluster-template-<infrastructure>-<flavor>.yaml')
    .option('-n, --target-namespace <namespace>', 'namespace of the cluster objects (NAMESPACE)')
    .option('--from <file>', 'read the template from a file, or - for stdin')
    .option('--list-variables', 'list the variables the template needs, and exit')
    .addHelpText(
      'after',
      `
Examples:
  capstan generate cluster demo --kubernetes-version v1.34.4 --worker-machine-count 2 | kubectl apply -f -
  KUBERNETES_VERSION=v1.34.4 capstan generate cluster demo -n fleet --control-plane-machine-count 3
  capstan generate cluster demo --list-variables

Refused before anything is printed: a name or namespace that is not an RFC 1123 label (63 characters at most),
a version that is not vX.Y.Z[+k3sN], a negative count, an even control plane count (K3s embedded etcd: quorum).`,
    )
    .action(
      (
        name: string,
        opts: {
          kubernetesVersion?: string;
          controlPlaneMachineCount?: number;
          workerMachineCount?: number;
          infrastructure: string;
          flavor?: string;
          targetNamespace?: string;
          from?: string;
          listVariables?: boolean;
        },
      ) => {
        const templateText = opts.from ? readFrom(opts.from) : undefined;
        if (opts.listVariables) {
          const vars = templateVariables({ infrastructure: opts.infrastructure, flavor: opts.flavor, templateText });
          output.line('Required Variables:');
          for (const v of vars.required) output.line(`  - ${v.name}`);
          output.line('');
          output.line('Optional Variables:');
          for (const v of vars.optional) output.line(`  - ${v.name.padEnd(32)} (defaults to "${v.defaultValue}")`);
          return;
        }
        let yaml: string;
        try {
          yaml = generateCluster({
            clusterName: name,
            infrastructure: opts.infrastructure,
            flavor: opts.flavor,
            targetNamespace: opts.targetNamespace,
            kubernetesVersion: opts.kubernetesVersion,
            controlPlaneMachineCount: opts.controlPlaneMachineCount,
            workerMachineCount: opts.workerMachineCount,
            templateText,
            env: process.env,
          });
        } catch (error) {
          // The user's input, not a bug: one line, no stack trace.
          if (error instanceof UnknownTemplateError || error instanceof MissingVariablesError) throw new CliError(error.message);
          throw error;
        }
        output.line(yaml.trimEnd());
      },
    );
  return generate;
}
