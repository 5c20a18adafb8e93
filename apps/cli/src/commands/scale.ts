import { CustomObjectsApi, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { PatchStrategy } from '@capstan/kube';
import { Command } from 'commander';
import { RESOURCES, type MachineDeployment } from '@capstan/api';
import { controlPlaneRefOf, getCluster, getObject, resolveReference } from '../describe/fetch.js';
import { controlPlaneReplicasProblem, countArgument, hasEmbeddedEtcd } from '@capstan/cluster-templates';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output } from '../output.js';
import { findPool } from '../scale/pool.js';
import { listObjects } from '../tables/fetch.js';

interface ScaleTarget {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespace: string;
  name: string;
}

const isNotFound = (error: unknown) => (error as { code?: number }).code === 404;

/** Sets spec.replicas through the scale subresource (what `kubectl scale` does); returns the replicas before. */
async function scaleTo(kc: KubeConfig, target: ScaleTarget, replicas: number): Promise<number | undefined> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const { group, version, plural, namespace, name } = target;
  const current = await getObject<{ spec?: { replicas?: number } }>(kc, target, namespace, name);
  const body = { spec: { replicas } };
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  try {
    await api.patchNamespacedCustomObjectScale({ group, version, namespace, plural, name, body }, mergePatch);
  } catch (error) {
    // A control plane kind without a scale subresource still has the contract's spec.replicas.
    if (!isNotFound(error)) throw error;
    await api.patchNamespacedCustomObject({ group, version, namespace, plural, name, body }, mergePatch);
  }
  return current.spec?.replicas;
}

export function scaleCommand(output: Output): Command {
  return new Command('scale')
    .description("Scale a cluster's machine pool (a MachineDeployment) or its control plane")
    .argument('<cluster>', 'name of the cluster')
    .option('--pool <name>', 'the MachineDeployment: its name (demo-md-0) or the part after the cluster name (md-0)')
    .option('--control-plane', "the cluster's control plane (spec.controlPlaneRef)")
    .requiredOption('--replicas <n>', 'the number of machines wanted', countArgument('--replicas'))
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText(
      'after',
      `
A K3s control plane runs embedded etcd: its count must be odd (1, 3, 5, ...) to keep quorum.

Examples:
  capstan scale demo --pool md-0 --replicas 5
  capstan scale demo --pool demo-md-0 --replicas 0 -n fleet
  capstan scale demo --control-plane --replicas 3`,
    )
    .action(
      async (
        clusterName: string,
        opts: KubeconfigOptions & { pool?: string; controlPlane?: boolean; replicas: number; namespace?: string },
      ) => {
        if ((opts.pool === undefined) === (opts.controlPlane !== true)) {
          throw new CliError('give one of --pool <name> (a MachineDeployment of the cluster) or --control-plane');
        }
        const kc = loadKubeConfig(opts);
        const namespace = namespaceOf(kc, opts.namespace);
        const cluster = await getCluster(kc, namespace, clusterName);
        let target: ScaleTarget;
        if (opts.controlPlane) {
          const ref = controlPlaneRefOf(cluster);
          if (hasEmbeddedEtcd(ref)) {
            const problem = controlPlaneReplicasProblem(`--replicas for ${ref.kind} ${namespace}/${ref.name}`, opts.replicas);
            if (problem) throw new CliError(problem);
          }
          target = { group: ref.apiGroup, ...(await resolveReference(kc, ref)), kind: ref.kind, namespace, name: ref.name };
        } else {
          const pool = opts.pool ?? '';
          const deployments = await listObjects<MachineDeployment>(kc, RESOURCES.MachineDeployment, { namespace });
          const md = findPool(deployments, { namespace, name: clusterName }, pool);
          target = { ...RESOURCES.MachineDeployment, namespace, name: md.metadata.name! };
        }
        const before = await scaleTo(kc, target, opts.replicas);
        output.line(`${target.kind} ${namespace}/${target.name} scaled from ${before ?? 'unset'} to ${opts.replicas} replicas`);
      },
    );
}
