import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { PatchStrategy } from '@capstan/kube';
import { Command, Option } from 'commander';
import { LABELS, RESOURCES, readControlPlane, type Machine, type MachineDeployment } from '@capstan/api';
import { formatElapsed } from '../demo/wait-for-deletion.js';
import { controlPlaneRefOf, getCluster, getObject, resolveReference } from '../describe/fetch.js';
import { durationMs } from '../duration.js';
import { kubernetesVersionProblem } from '@capstan/cluster-templates';
import { loadKubeConfig, namespaceOf, type KubeconfigOptions } from '../kubeconfig.js';
import { CliError, type Output, type Progress } from '../output.js';
import { listObjects } from '../tables/fetch.js';
import {
  controlPlaneProgress,
  controlPlaneRollout,
  isControlPlaneUpgraded,
  isMachineDeploymentUpgraded,
  machineDeploymentProgress,
  machineDeploymentRollout,
  updatingMachineNames,
  upgradeCommandLine,
  upgradeProblem,
} from '../upgrade/rollout.js';

const POLL_MS = 2000;
const DEFAULT_TIMEOUT_MS = 30 * 60 * 1000;

interface UpgradeOptions extends KubeconfigOptions {
  kubernetesVersion: string;
  namespace?: string;
  wait?: boolean;
  timeout: number;
  snapshot?: boolean;
  rollbackOnFailure?: boolean;
  healthyFor?: number;
  check?: string[];
}

/** `--check Kind/namespace/name`: a workload the upgrade's health gate watches. */
function workloadCheckArgument(value: string, previous: string[] | undefined): string[] {
  if (!/^(Deployment|StatefulSet|DaemonSet)\/[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[^/\s]{1,253}$/.test(value)) {
    throw new CliError(`--check ${value}: expected Deployment|StatefulSet|DaemonSet/<namespace>/<name>`);
  }
  return [...(previous ?? []), value];
}

/** spec.upgradePolicy for the guard options given (undefined when none is). */
function upgradePolicyOf(opts: UpgradeOptions): Record<string, unknown> | undefined {
  if (!opts.snapshot && !opts.rollbackOnFailure && opts.healthyFor === undefined && !opts.check?.length)
    return undefined;
  return {
    ...(opts.snapshot && { snapshotBefore: true }),
    ...(opts.rollbackOnFailure && { rollbackOnFailure: true }),
    ...(opts.healthyFor !== undefined && { healthySeconds: Math.round(opts.healthyFor / 1000) }),
    ...(opts.check?.length && {
      workloadChecks: opts.check.map((c) => {
        const [kind, namespace, name] = c.split('/');
        return { kind, namespace, name };
      }),
    }),
  };
}

/** Where a guarded upgrade (spec.upgradePolicy) stands, from the control plane's status.upgrade. */
interface GuardedUpgrade {
  toVersion?: string;
  phase?: string;
  message?: string;
}

interface ObjectTarget {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What one poll saw: how far the rollout is (`updated 1/3 ...`), and whether it is over. */
interface Observation {
  progress: string;
  done: boolean;
}

const label = (target: ObjectTarget) => `${target.kind} ${target.namespace}/${target.name}`;

function versionArgument(value: string): string {
  const problem = kubernetesVersionProblem('--kubernetes-version', value);
  if (problem) throw new CliError(problem);
  return value;
}

async function mergePatch(kc: KubeConfig, target: ObjectTarget, body: object): Promise<void> {
  const { group, version, plural, namespace, name } = target;
  await kc
    .makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { group, version, namespace, plural, name, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

async function updatingMachines(kc: KubeConfig, namespace: string, labelSelector: string): Promise<string[]> {
  return updatingMachineNames(
    await listObjects<Machine>(kc, RESOURCES.Machine, { namespace, labelSelector }),
  );
}

/**
 * Polls `observe` every 2 s until it reports done, printing a line whenever the progress of `subject` changes;
 * past the deadline, fails with the last progress and `hint` (what is left to do).
 */
async function follow(
  output: Output,
  subject: string,
  observe: () => Promise<Observation>,
  limit: { deadline: number; timeoutMs: number; target: string; hint: string },
): Promise<void> {
  let progress: Progress | undefined;
  for (;;) {
    const observation = await observe();
    const line = `${subject}: ${observation.progress}`;
    const done = observation.done;
    if (progress) progress.update(line);
    else progress = output.progress(line);
    if (done) return progress.done(line);
    const left = limit.deadline - Date.now();
    if (left <= 0) {
      progress.fail(line);
      throw new CliError(
        `timed out after ${formatElapsed(limit.timeoutMs)} waiting for the upgrade to ${limit.target}: ${line}; ${limit.hint}`,
      );
    }
    await sleep(Math.min(POLL_MS, left));
  }
}

/** The control plane's rollout: its contract counters and the machines its selector picks that are updating in place. */
async function observeControlPlane(
  kc: KubeConfig,
  controlPlane: ObjectTarget,
  clusterName: string,
  target: string,
): Promise<Observation> {
  const object = await getObject(kc, controlPlane, controlPlane.namespace, controlPlane.name);
  const rollout = controlPlaneRollout(object);
  const guarded = (object as { status?: { upgrade?: GuardedUpgrade } }).status?.upgrade;
  if (guarded?.toVersion === target && guarded.phase !== 'Succeeded') {
    if (guarded.phase === 'RolledBack' || guarded.phase === 'Failed') {
      throw new CliError(
        `the upgrade to ${target} ${guarded.phase === 'RolledBack' ? 'was rolled back' : 'failed'}: ${guarded.message ?? 'no reason given'}`,
      );
    }
    return { progress: `${guarded.phase}: ${guarded.message ?? ''}`, done: false };
  }
  // The contract's status.selector picks the control plane's machines; before any status, K3s's own labels do.
  const selector =
    readControlPlane(object).selector ?? `${LABELS.clusterName}=${clusterName},${LABELS.controlPlane}`;
  const updating = await updatingMachines(kc, controlPlane.namespace, selector);
  return {
    progress: controlPlaneProgress(rollout, updating),
    done: isControlPlaneUpgraded(rollout, target, updating),
  };
}

async function observeMachineDeployment(kc: KubeConfig, target: ObjectTarget): Promise<Observation> {
  const deployment = await getObject<MachineDeployment>(kc, target, target.namespace, target.name);
  const rollout = machineDeploymentRollout(deployment);
  const selector = deployment.status?.selector ?? `${LABELS.deploymentName}=${target.name}`;
  const updating = await updatingMachines(kc, target.namespace, selector);
  return {
    progress: machineDeploymentProgress(rollout, updating),
    done: isMachineDeploymentUpgraded(rollout, updating),
  };
}

const deploymentTarget = (md: MachineDeployment): ObjectTarget => ({
  ...RESOURCES.MachineDeployment,
  namespace: md.metadata.namespace ?? '',
  name: md.metadata.name ?? '',
});

async function upgradeDeployments(
  output: Output,
  kc: KubeConfig,
  deployments: readonly MachineDeployment[],
  target: string,
): Promise<void> {
  for (const md of deployments) {
    const before = md.spec.template.spec.version;
    const subject = label(deploymentTarget(md));
    if (before === target) {
      output.line(`${subject} is already at ${target}`);
      continue;
    }
    await mergePatch(kc, deploymentTarget(md), { spec: { template: { spec: { version: target } } } });
    output.line(`${subject} upgrading from ${before ?? 'unset'} to ${target}`);
  }
}

async function upgradeCluster(output: Output, clusterName: string, opts: UpgradeOptions): Promise<void> {
  const target = opts.kubernetesVersion;
  const kc = loadKubeConfig(opts);
  const namespace = namespaceOf(kc, opts.namespace);
  const ref = controlPlaneRefOf(await getCluster(kc, namespace, clusterName));
  const controlPlane: ObjectTarget = {
    group: ref.apiGroup,
    ...(await resolveReference(kc, ref)),
    kind: ref.kind,
    namespace,
    name: ref.name,
  };
  const current = readControlPlane(await getObject(kc, controlPlane, namespace, controlPlane.name)).version;
  const problem = upgradeProblem(target, current, label(controlPlane));
  if (problem) throw new CliError(problem);
  // The core labels every MachineDeployment with its cluster: the API server does the filtering.
  const deployments = await listObjects<MachineDeployment>(kc, RESOURCES.MachineDeployment, {
    namespace,
    labelSelector: `${LABELS.clusterName}=${clusterName}`,
  });

  const policy = upgradePolicyOf(opts);
  if (
    policy &&
    (ref.apiGroup !== RESOURCES.K3sControlPlane.group || ref.kind !== RESOURCES.K3sControlPlane.kind)
  ) {
    throw new CliError(
      `--snapshot, --rollback-on-failure, --healthy-for and --check guard a K3sControlPlane's upgrade; ${label(controlPlane)} is a ${ref.kind}`,
    );
  }
  if (current === target) {
    output.line(`${label(controlPlane)} is already at ${target}`);
  } else {
    await mergePatch(kc, controlPlane, {
      spec: { version: target, ...(policy && { upgradePolicy: policy }) },
    });
    output.line(`${label(controlPlane)} upgrading from ${current ?? 'unset'} to ${target}`);
  }
  const againCommand = upgradeCommandLine(clusterName, target, { ...opts, namespace });

  if (!opts.wait) {
    const pending = deployments.filter((md) => md.spec.template.spec.version !== target);
    if (pending.length === 0) return;
    const controlPlaneNow = await observeControlPlane(kc, controlPlane, clusterName, target);
    if (controlPlaneNow.done) return upgradeDeployments(output, kc, deployments, target);
    // Workers never run a newer version than their control plane: they follow once it is done, as upstream orders it.
    const names = pending.map((md) => `${namespace}/${md.metadata.name ?? ''}`).join(', ');
    const one = pending.length === 1;
    output.line(
      `MachineDeployment${one ? '' : 's'} ${names} ${one ? 'is' : 'are'} upgraded after the control plane ` +
        `(now ${controlPlaneNow.progress}); once it is up to date, run:\n  ${againCommand}`,
    );
    return;
  }

  const limit = { deadline: Date.now() + opts.timeout, timeoutMs: opts.timeout, target };
  await follow(
    output,
    label(controlPlane),
    () => observeControlPlane(kc, controlPlane, clusterName, target),
    {
      ...limit,
      hint: `the MachineDeployments are not upgraded yet; once the control plane is up to date, run: ${againCommand}`,
    },
  );
  await upgradeDeployments(output, kc, deployments, target);
  for (const md of deployments) {
    const mdTarget = deploymentTarget(md);
    await follow(output, label(mdTarget), () => observeMachineDeployment(kc, mdTarget), {
      ...limit,
      hint: 'the rollout goes on; run the same command to follow it again',
    });
  }
  output.line(`Cluster ${namespace}/${clusterName} upgraded to ${target}`);
}

export function upgradeCommand(output: Output): Command {
  const upgrade = new Command('upgrade').description('Upgrade workload clusters');
  upgrade
    .command('cluster')
    .description(
      "Upgrade a cluster's Kubernetes version: the control plane first, then its MachineDeployments",
    )
    .argument('<name>', 'name of the cluster')
    .requiredOption(
      '--kubernetes-version <version>',
      'the version to upgrade to: vX.Y.Z, optionally +k3sN',
      versionArgument,
    )
    .option('-n, --namespace <namespace>', 'namespace of the cluster')
    .option('--wait', 'follow the control plane, then upgrade the MachineDeployments and follow them too')
    .addOption(
      new Option('--timeout <duration>', 'how long --wait waits (30s, 10m, 2h)')
        .argParser(durationMs)
        .default(DEFAULT_TIMEOUT_MS, '30m'),
    )
    .option('--snapshot', 'take an etcd snapshot first; the machines wait for it (K3sControlPlane)')
    .option(
      '--rollback-on-failure',
      'when the health gates fail, go back to the old version and the snapshot (K3sControlPlane)',
    )
    .addOption(
      new Option(
        '--healthy-for <duration>',
        'how long the health gates must hold after the rollout (default 60s)',
      ).argParser(durationMs),
    )
    .option(
      '--check <Kind/namespace/name>',
      'a Deployment, StatefulSet or DaemonSet that must be available after the upgrade (repeatable)',
      workloadCheckArgument,
    )
    .option('--kubeconfig <path>', 'kubeconfig of the management cluster')
    .option('--kubeconfig-context <context>', 'context of the management cluster kubeconfig')
    .addHelpText(
      'after',
      `
--snapshot, --rollback-on-failure, --healthy-for and --check set the control plane's spec.upgradePolicy: the
snapshot is taken before any machine changes; after the rollout every Node must be Ready on the new version and
every --check workload available for --healthy-for; otherwise the control plane goes back to the old version and,
with --snapshot, to the snapshot's data (docs/day2.md).

The control plane (spec.controlPlaneRef) is upgraded first. Its MachineDeployments follow once it runs the new
version on all its machines: with --wait in the same run; without, run the same command again then (it says so).
A version older than the control plane's is refused, and so is skipping a minor: K3s upgrades one minor at a time.

Examples:
  capstan upgrade cluster demo --kubernetes-version v1.35.4
  capstan upgrade cluster demo --kubernetes-version v1.35.4 --wait --timeout 45m
  capstan upgrade cluster demo --kubernetes-version v1.35.4+k3s1 -n fleet
  capstan upgrade cluster demo --kubernetes-version v1.35.4 --snapshot --rollback-on-failure --check Deployment/default/web --wait`,
    )
    .action((clusterName: string, opts: UpgradeOptions) => upgradeCluster(output, clusterName, opts));
  return upgrade;
}
