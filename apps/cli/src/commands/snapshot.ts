import { CustomObjectsApi, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { Command } from 'commander';
import { getCondition, LABELS, RESOURCES, type EtcdSnapshot, type K3sControlPlane } from '@capstan/api';
import { PatchStrategy } from '@capstan/kube';
import { controlPlaneRefOf, getCluster, getObject } from '../describe/fetch.js';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output } from '../output.js';
import { listObjects } from '../tables/fetch.js';
import { asList, cell, creationAge, renderTable } from '../tables/table.js';
import { followOperation } from './follow-operation.js';
import { noneFound, outputOption, type GetFormat } from './get-clusters.js';

// `capstan snapshot`: etcd snapshots of K3s clusters (docs/day2.md), as EtcdSnapshot objects: list them, take one,
// restore one (spec.etcdSnapshotRestore of the control plane), delete one (and its file).

type Options = KubeconfigOptions & { namespace?: string };

export const kubeconfigOptions = (command: Command): Command =>
  command
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig');

const { group, version, plural } = RESOURCES.EtcdSnapshot;

/** One row of `capstan snapshot list`. */
export function snapshotRow(snapshot: EtcdSnapshot, now: Date): string[] {
  const ready = getCondition(snapshot.status?.conditions, 'Ready');
  return [
    cell(snapshot.metadata.name),
    cell(snapshot.spec.clusterName),
    cell(snapshot.spec.trigger ?? 'OnDemand'),
    cell(snapshot.status?.phase ?? 'Pending'),
    cell(snapshot.status?.sizeBytes === undefined ? undefined : formatBytes(snapshot.status.sizeBytes)),
    cell(snapshot.status?.location),
    creationAge(snapshot.metadata.creationTimestamp, now),
    cell(
      snapshot.status?.phase === 'Failed' || snapshot.status?.phase === 'Pending'
        ? ready?.message
        : undefined,
    ),
  ];
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

const SNAPSHOT_HEADER = ['NAME', 'CLUSTER', 'TRIGGER', 'PHASE', 'SIZE', 'LOCATION', 'AGE', 'MESSAGE'];

/** The cluster's K3sControlPlane; a cluster with another control plane is refused, naming what needs one. */
export async function controlPlaneOf(
  kc: KubeConfig,
  namespace: string,
  clusterName: string,
  what = 'etcd snapshots are',
): Promise<{ name: string; kcp: K3sControlPlane }> {
  const ref = controlPlaneRefOf(await getCluster(kc, namespace, clusterName));
  if (ref.apiGroup !== RESOURCES.K3sControlPlane.group || ref.kind !== RESOURCES.K3sControlPlane.kind) {
    throw new CliError(
      `cluster ${namespace}/${clusterName} has a ${ref.kind} control plane: ${what} a K3sControlPlane's`,
    );
  }
  return {
    name: ref.name,
    kcp: await getObject<K3sControlPlane>(kc, RESOURCES.K3sControlPlane, namespace, ref.name),
  };
}

function listCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('list')
      .alias('ls')
      .description(
        'List the etcd snapshots of a cluster (or of every cluster): phase, size, where the file is kept',
      )
      .argument('[cluster]', 'only the snapshots of this cluster')
      .addOption(outputOption()),
  ).action(async (clusterName: string | undefined, opts: Options & { output?: GetFormat }) => {
    const kc = loadKubeConfig(opts);
    const namespace = namespaceOf(kc, opts.namespace);
    const items = await listObjects<EtcdSnapshot>(kc, RESOURCES.EtcdSnapshot, {
      namespace,
      ...(clusterName && { labelSelector: `${LABELS.clusterName}=${clusterName}` }),
    });
    const snapshots = items.filter((s) => !clusterName || s.spec.clusterName === clusterName);
    snapshots.sort((a, b) =>
      String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)),
    );
    if (opts.output === 'json' || opts.output === 'yaml') {
      output.data(asList(snapshots), opts.output);
      return;
    }
    if (snapshots.length === 0) {
      noneFound('etcd snapshots', namespace);
      return;
    }
    const now = new Date();
    output.line(
      renderTable(
        SNAPSHOT_HEADER,
        snapshots.map((s) => snapshotRow(s, now)),
      ),
    );
  });
}

function createCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('create')
      .description(
        "Take an etcd snapshot of a cluster now (to S3 when its control plane's spec.etcd.s3 names a store)",
      )
      .argument('<cluster>', 'name of the cluster')
      .option('--name <name>', 'name of the EtcdSnapshot (default: <cluster>-on-demand-<time>)')
      .option('--no-wait', 'return once the request is made'),
  ).action(async (clusterName: string, opts: Options & { name?: string; wait: boolean }) => {
    const kc = loadKubeConfig(opts);
    const namespace = namespaceOf(kc, opts.namespace);
    await controlPlaneOf(kc, namespace, clusterName);
    const name = opts.name ?? `${clusterName}-on-demand-${Math.floor(Date.now() / 1000)}`;
    const api = kc.makeApiClient(CustomObjectsApi);
    await api.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: {
        apiVersion: RESOURCES.EtcdSnapshot.apiVersion,
        kind: RESOURCES.EtcdSnapshot.kind,
        metadata: { name, namespace, labels: { [LABELS.clusterName]: clusterName } },
        spec: { clusterName, trigger: 'OnDemand' },
      },
    });
    if (!opts.wait) {
      output.line(`etcdsnapshot/${name} requested`);
      return;
    }
    await followOperation(output.progress(`etcd snapshot ${name} of ${clusterName}`), async () => {
      const snapshot = await getObject<EtcdSnapshot>(kc, RESOURCES.EtcdSnapshot, namespace, name);
      const phase = snapshot.status?.phase;
      const ready = getCondition(snapshot.status?.conditions, 'Ready')?.message;
      if (phase === 'Succeeded')
        return {
          done: `etcdsnapshot/${name} saved: ${snapshot.status?.fileName} (${formatBytes(snapshot.status?.sizeBytes ?? 0)}) at ${snapshot.status?.location}`,
        };
      if (phase === 'Failed') return { failed: `etcdsnapshot/${name} failed: ${ready ?? 'no reason given'}` };
      return {
        progress: `etcd snapshot ${name}: ${phase ?? 'Pending'}${phase === 'Pending' ? ` (${ready ?? 'waiting'})` : ''}`,
      };
    });
  });
}

function restoreCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('restore')
      .description(
        "Restore a cluster's etcd from one of its snapshots: the Cluster is paused, a server resets its etcd, the Cluster is resumed",
      )
      .argument('<cluster>', 'name of the cluster')
      .argument('<snapshot>', 'name of the EtcdSnapshot (capstan snapshot list)')
      .option(
        '--restore-version',
        'also set the control plane version back to the one the snapshot was saved with (restoreConfig KubernetesVersion)',
      )
      .option(
        '--restore-config',
        'also set the control plane version and k3sConfigSpec back to what the snapshot was saved with (restoreConfig All)',
      )
      .option('--no-wait', 'return once the restore is asked for'),
  ).action(
    async (
      clusterName: string,
      snapshotName: string,
      opts: Options & { wait: boolean; restoreVersion?: boolean; restoreConfig?: boolean },
    ) => {
      const kc = loadKubeConfig(opts);
      const namespace = namespaceOf(kc, opts.namespace);
      const { name: kcpName, kcp } = await controlPlaneOf(kc, namespace, clusterName);
      const snapshot = await getObject<EtcdSnapshot>(kc, RESOURCES.EtcdSnapshot, namespace, snapshotName);
      if (snapshot.spec.clusterName !== clusterName) {
        throw new CliError(
          `etcdsnapshot/${snapshotName} is a snapshot of cluster ${snapshot.spec.clusterName}, not of ${clusterName}`,
        );
      }
      if (snapshot.status?.phase !== 'Succeeded') {
        throw new CliError(
          `etcdsnapshot/${snapshotName} has not been saved (phase ${snapshot.status?.phase ?? 'Pending'})`,
        );
      }
      if (opts.restoreConfig && !snapshot.status.k3sConfigSpec) {
        throw new CliError(
          `etcdsnapshot/${snapshotName} does not record the configuration it was saved with: restore it with --restore-version or without either flag`,
        );
      }
      const generation =
        Math.max(
          kcp.spec.etcdSnapshotRestore?.generation ?? 0,
          kcp.status?.etcdSnapshotRestore?.generation ?? 0,
        ) + 1;
      await kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
        {
          group: RESOURCES.K3sControlPlane.group,
          version: RESOURCES.K3sControlPlane.version,
          namespace,
          plural: RESOURCES.K3sControlPlane.plural,
          name: kcpName,
          body: {
            spec: {
              etcdSnapshotRestore: {
                name: snapshotName,
                generation,
                restoreConfig: opts.restoreConfig ? 'All' : opts.restoreVersion ? 'KubernetesVersion' : null,
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      if (!opts.wait) {
        output.line(`restore ${generation} of ${snapshotName} asked for on k3scontrolplane/${kcpName}`);
        return;
      }
      await followOperation(output.progress(`restoring ${snapshotName} into ${clusterName}`), async () => {
        const status = (await getObject<K3sControlPlane>(kc, RESOURCES.K3sControlPlane, namespace, kcpName))
          .status?.etcdSnapshotRestore;
        const ours = status?.generation === generation;
        if (ours && status.phase === 'Finished')
          return {
            done: `${clusterName} restored from ${snapshotName}${status.machineName ? ` on ${status.machineName}` : ''}`,
          };
        if (ours && status.phase === 'Failed')
          return { failed: `the restore of ${snapshotName} failed: ${status.message ?? 'no reason given'}` };
        return {
          progress: `restoring ${snapshotName} into ${clusterName}: ${ours ? status.phase : 'asked for'}`,
        };
      });
    },
  );
}

function deleteCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('delete')
      .description('Delete an etcd snapshot and its file')
      .argument('<snapshot>', 'name of the EtcdSnapshot'),
  ).action(async (snapshotName: string, opts: Options) => {
    const kc = loadKubeConfig(opts);
    const namespace = namespaceOf(kc, opts.namespace);
    await kc
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ group, version, namespace, plural, name: snapshotName });
    output.line(`etcdsnapshot/${snapshotName} deleted (its file goes with it)`);
  });
}

export function snapshotCommand(output: Output): Command {
  return new Command('snapshot')
    .description('etcd snapshots of K3s clusters: list, create, restore, delete')
    .addCommand(listCommand(output))
    .addCommand(createCommand(output))
    .addCommand(restoreCommand(output))
    .addCommand(deleteCommand(output))
    .addHelpText(
      'after',
      `
Snapshots are taken on a server machine through its plan (k3s etcd-snapshot save), and kept in the S3 store the
control plane names (spec.etcd.s3) or on that server. A schedule: spec.etcd.snapshotScheduleCron and
snapshotRetention of the K3sControlPlane.

Examples:
  capstan snapshot create demo
  capstan snapshot list demo
  capstan snapshot restore demo demo-on-demand-1795860000
  capstan snapshot delete demo-on-demand-1795860000`,
    );
}
