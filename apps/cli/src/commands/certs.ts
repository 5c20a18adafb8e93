import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import { Command, Option } from 'commander';
import {
  K3S_CERTIFICATE_SERVICES,
  LABELS,
  RESOURCES,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { PatchStrategy } from '@capstan/kube';
import { getObject } from '../describe/fetch.js';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output } from '../output.js';
import { listObjects } from '../tables/fetch.js';
import { cell, renderTable } from '../tables/table.js';
import { followOperation } from './follow-operation.js';
import { noneFound } from './get-clusters.js';
import { controlPlaneOf, kubeconfigOptions } from './snapshot.js';

// `capstan certs`: when the control plane machines' certificates expire, across the fleet (Machine
// status.certificatesExpiryDate, reported by each server), and `capstan certs rotate`: an in-place rotation
// (spec.rotateCertificates of the K3sControlPlane), one server at a time (docs/day2.md).

const DAY_MS = 86_400_000;

/** One row of `capstan certs`: the machine, when its certificates expire, how long that is, and the rotation. */
export function certificateRow(
  machine: Machine,
  controlPlanes: ReadonlyMap<string, K3sControlPlane>,
  now: Date,
  allNamespaces: boolean,
): string[] {
  const expiry = machine.status?.certificatesExpiryDate;
  const days = expiry ? Math.floor((Date.parse(expiry) - now.getTime()) / DAY_MS) : undefined;
  const owner = machine.metadata.ownerReferences?.find((o) => o.kind === RESOURCES.K3sControlPlane.kind);
  const kcp = owner ? controlPlanes.get(`${machine.metadata.namespace}/${owner.name}`) : undefined;
  const window = kcp?.spec.rollout?.before?.certificatesExpiryDays;
  const rotation = kcp?.status?.certificateRotation;
  return [
    ...(allNamespaces ? [cell(machine.metadata.namespace)] : []),
    cell(machine.spec.clusterName),
    cell(machine.metadata.name),
    cell(expiry),
    cell(days === undefined ? undefined : days < 0 ? 'EXPIRED' : `${days}d`),
    cell(window === undefined ? undefined : `${window}d`),
    cell(rotation ? `${rotation.phase} (${rotation.reason})` : undefined),
  ];
}

function listAction(output: Output) {
  return async (
    clusterName: string | undefined,
    opts: KubeconfigOptions & { namespace?: string; allNamespaces?: boolean; expiringWithin?: string },
  ) => {
    const kc = loadKubeConfig(opts);
    const namespace = opts.allNamespaces ? undefined : namespaceOf(kc, opts.namespace);
    const within = opts.expiringWithin === undefined ? undefined : Number(opts.expiringWithin);
    if (within !== undefined && !(Number.isInteger(within) && within >= 0))
      throw new CliError(`--expiring-within must be a number of days, not "${opts.expiringWithin}"`);
    const selector = [LABELS.controlPlane, ...(clusterName ? [`${LABELS.clusterName}=${clusterName}`] : [])];
    const [machines, kcps] = await Promise.all([
      listObjects<Machine>(kc, RESOURCES.Machine, { namespace, labelSelector: selector.join(',') }),
      listObjects<K3sControlPlane>(kc, RESOURCES.K3sControlPlane, { namespace }),
    ]);
    const now = new Date();
    const shown = machines
      .filter((m) => {
        if (within === undefined) return true;
        const expiry = m.status?.certificatesExpiryDate;
        return expiry !== undefined && Date.parse(expiry) - now.getTime() < within * DAY_MS;
      })
      .sort(
        (a, b) =>
          Date.parse(a.status?.certificatesExpiryDate ?? '9999') -
            Date.parse(b.status?.certificatesExpiryDate ?? '9999') ||
          a.metadata.name!.localeCompare(b.metadata.name!),
      );
    if (shown.length === 0) {
      noneFound('control plane machines', namespace);
      return;
    }
    const byKey = new Map(kcps.map((k) => [`${k.metadata.namespace}/${k.metadata.name}`, k]));
    const all = namespace === undefined;
    output.line(
      renderTable(
        [
          ...(all ? ['NAMESPACE'] : []),
          'CLUSTER',
          'MACHINE',
          'EXPIRES',
          'LEFT',
          'ROTATE WITHIN',
          'LAST ROTATION',
        ],
        shown.map((m) => certificateRow(m, byKey, now, all)),
      ),
    );
  };
}

function rotateCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('rotate')
      .description(
        "Rotate the certificates of a cluster's servers in place, one server at a time (no machine is replaced)",
      )
      .argument('<cluster>', 'name of the cluster')
      .addOption(
        new Option('--service <service...>', 'only these K3s certificate services').choices([
          ...K3S_CERTIFICATE_SERVICES,
        ]),
      )
      .option('--no-wait', 'return once the rotation is asked for'),
  ).action(
    async (
      clusterName: string,
      opts: KubeconfigOptions & { namespace?: string; service?: string[]; wait: boolean },
    ) => {
      const kc = loadKubeConfig(opts);
      const namespace = namespaceOf(kc, opts.namespace);
      const { name, kcp } = await controlPlaneOf(kc, namespace, clusterName, 'certificate rotation is');
      const generation =
        Math.max(
          kcp.spec.rotateCertificates?.generation ?? 0,
          kcp.status?.certificateRotation?.generation ?? 0,
        ) + 1;
      await kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
        {
          group: RESOURCES.K3sControlPlane.group,
          version: RESOURCES.K3sControlPlane.version,
          namespace,
          plural: RESOURCES.K3sControlPlane.plural,
          name,
          body: { spec: { rotateCertificates: { generation, services: opts.service ?? null } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      if (!opts.wait) {
        output.line(`certificate rotation ${generation} asked for on k3scontrolplane/${name}`);
        return;
      }
      await followOperation(output.progress(`rotating the certificates of ${clusterName}`), async () => {
        const status = (await getObject<K3sControlPlane>(kc, RESOURCES.K3sControlPlane, namespace, name))
          .status?.certificateRotation;
        const ours = status?.reason === 'Requested' && status.generation === generation;
        if (ours && status.phase === 'Finished')
          return { done: `rotated the certificates of ${(status.rotated ?? []).join(', ') || 'no server'}` };
        if (ours && status.phase === 'Failed')
          return { failed: `the certificate rotation failed: ${status.message ?? 'no reason given'}` };
        return {
          progress: ours
            ? `rotating the certificates of ${clusterName}: ${(status.rotated ?? []).length} done, next ${status.pending?.[0] ?? '-'}`
            : `rotation ${generation} of ${clusterName} asked for`,
        };
      });
    },
  );
}

function listCommand(output: Output): Command {
  return kubeconfigOptions(
    new Command('list')
      .alias('ls')
      .description('When the control plane machines’ certificates expire (what capstan certs runs)')
      .argument('[cluster]', 'only the machines of this cluster')
      .option('-A, --all-namespaces', 'the machines of every namespace')
      .option('--expiring-within <days>', 'only machines whose certificates expire within this many days'),
  ).action(listAction(output));
}

export function certsCommand(output: Output): Command {
  return new Command('certs')
    .description(
      'When the control plane machines’ certificates expire, across the fleet; rotate them in place',
    )
    .addCommand(listCommand(output), { isDefault: true })
    .addCommand(rotateCommand(output))
    .addHelpText(
      'after',
      `
Each server reports its certificates' expiry hourly (k3s certificate check, a periodic instruction of its plan);
the core shows it as Machine status.certificatesExpiryDate. A K3sControlPlane with
spec.rollout.before.certificatesExpiryDays rotates servers within that many days of expiry on its own.

Examples:
  capstan certs -A --expiring-within 30
  capstan certs demo
  capstan certs rotate demo
  capstan certs rotate demo --service admin api-server`,
    );
}
