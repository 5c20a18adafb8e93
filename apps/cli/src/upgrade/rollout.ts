import {
  ConditionType,
  integerAt,
  isTrue,
  readControlPlane,
  type Machine,
  type MachineDeployment,
} from '@capstan/api';
import { kubernetesVersionProblem } from '@capstan/cluster-templates';

/**
 * What `upgrade cluster` decides without the API server: whether a version may follow another, when a control
 * plane or a MachineDeployment has finished rolling out, and how its progress reads.
 */

interface KubernetesVersion {
  major: number;
  minor: number;
  patch: number;
  /** The N of `+k3sN`: K3s re-releases one Kubernetes patch, and a lower N is older. */
  k3sRelease?: number;
}

const VERSION_PARTS = /^v(\d+)\.(\d+)\.(\d+)(?:\+k3s(\d+))?$/;

export function parseKubernetesVersion(value: string): KubernetesVersion | undefined {
  const match = VERSION_PARTS.exec(value);
  if (!match) return undefined;
  const [, major, minor, patch, k3sRelease] = match;
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    ...(k3sRelease === undefined ? {} : { k3sRelease: Number(k3sRelease) }),
  };
}

function compareVersions(a: KubernetesVersion, b: KubernetesVersion): number {
  const byNumbers = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (byNumbers !== 0) return byNumbers;
  // Without +k3sN a version names no K3s release, so it is neither older nor newer than one that does.
  return a.k3sRelease === undefined || b.k3sRelease === undefined ? 0 : a.k3sRelease - b.k3sRelease;
}

/**
 * Why the control plane (`controlPlane`, e.g. `K3sControlPlane ns/demo-control-plane`) cannot go from `current`
 * (its spec.version) to `target`, or undefined when it can. K3s servers upgrade one minor at a time (their
 * embedded etcd and the Kubernetes version skew policy allow no more), so a jump of two minors is refused.
 */
export function upgradeProblem(
  target: string,
  current: string | undefined,
  controlPlane: string,
): string | undefined {
  const to = parseKubernetesVersion(target);
  // generate's rule and message: the two patterns accept the same versions.
  if (!to)
    return (
      kubernetesVersionProblem('--kubernetes-version', target) ?? `"${target}" is not a Kubernetes version`
    );
  // A control plane kind without spec.version has nothing a new version could be older than.
  if (current === undefined) return undefined;
  const from = parseKubernetesVersion(current);
  if (!from) {
    return `${controlPlane} has spec.version "${current}", which is not a Kubernetes version, so an upgrade cannot be checked against it; set it to the version it runs (vX.Y.Z) first`;
  }
  if (compareVersions(to, from) < 0) {
    return `--kubernetes-version ${target} is older than the version of ${controlPlane}, ${current}: a cluster cannot be downgraded`;
  }
  if (to.major !== from.major) {
    return `--kubernetes-version ${target} changes the major version of ${controlPlane} (${current}); only upgrades within v${from.major} are supported`;
  }
  if (to.minor > from.minor + 1) {
    return (
      `--kubernetes-version ${target} skips a minor version: ${controlPlane} is at ${current}, and K3s upgrades one minor at a time; ` +
      `upgrade to v${from.major}.${from.minor + 1}.x first`
    );
  }
  return undefined;
}

/** How far a control plane's rollout is, by the v1beta2 control plane contract (any kind). */
export interface ControlPlaneRollout {
  /** spec.replicas */
  desiredReplicas?: number;
  replicas?: number;
  upToDateReplicas?: number;
  /** status.version: the oldest version its machines run. */
  version?: string;
  generation?: number;
  observedGeneration?: number;
}

export function controlPlaneRollout(controlPlane: unknown): ControlPlaneRollout {
  const contract = readControlPlane(controlPlane);
  return {
    desiredReplicas: contract.desiredReplicas,
    replicas: contract.replicas,
    upToDateReplicas: contract.upToDateReplicas,
    version: contract.statusVersion,
    generation: integerAt(controlPlane, ['metadata', 'generation']),
    observedGeneration: integerAt(controlPlane, ['status', 'observedGeneration']),
  };
}

/** How far a MachineDeployment's rollout is. */
export interface MachineDeploymentRollout {
  desiredReplicas: number;
  replicas?: number;
  upToDateReplicas?: number;
  generation?: number;
  observedGeneration?: number;
}

export function machineDeploymentRollout(deployment: MachineDeployment): MachineDeploymentRollout {
  return {
    // The CRD defaults spec.replicas to 1; an object read from the API server always has it.
    desiredReplicas: deployment.spec.replicas ?? 1,
    replicas: deployment.status?.replicas,
    upToDateReplicas: deployment.status?.upToDateReplicas,
    generation: deployment.metadata.generation,
    observedGeneration: deployment.status?.observedGeneration,
  };
}

/** The names of the machines whose Updating condition is True (an in-place update under way), sorted. */
export function updatingMachineNames(machines: readonly Machine[]): string[] {
  return machines
    .filter((machine) => isTrue(machine.status?.conditions, ConditionType.Updating))
    .map((machine) => machine.metadata.name ?? '')
    .sort();
}

/**
 * Whether the status was written after the last change of spec. Kinds that do not report observedGeneration are
 * taken at their word.
 */
function seenByController(rollout: { generation?: number; observedGeneration?: number }): boolean {
  const { generation, observedGeneration } = rollout;
  return observedGeneration === undefined || generation === undefined || observedGeneration >= generation;
}

/**
 * Whether the control plane runs `target` on exactly its desired machines, none of them still updating. Its
 * counters only speak of the new version once its controller has seen the change: status.version does, and so
 * does observedGeneration where the kind reports it.
 */
export function isControlPlaneUpgraded(
  controlPlane: ControlPlaneRollout,
  target: string,
  updating: readonly string[],
): boolean {
  const { desiredReplicas, replicas, upToDateReplicas, version } = controlPlane;
  const desired = desiredReplicas ?? replicas;
  return (
    seenByController(controlPlane) &&
    version === target &&
    desired !== undefined &&
    upToDateReplicas === desired &&
    replicas === desired &&
    updating.length === 0
  );
}

/**
 * Whether every machine of the MachineDeployment is up to date and no old one is left. A MachineDeployment's
 * status has no version, so only a status written after the patch (observedGeneration) says anything about it.
 */
export function isMachineDeploymentUpgraded(
  deployment: MachineDeploymentRollout,
  updating: readonly string[],
): boolean {
  const { desiredReplicas, replicas, upToDateReplicas, observedGeneration } = deployment;
  return (
    observedGeneration !== undefined &&
    seenByController(deployment) &&
    upToDateReplicas === desiredReplicas &&
    replicas === desiredReplicas &&
    updating.length === 0
  );
}

/** What follows the counts: that they are from before the patch (so about the old version), the updating machines. */
function progressSuffix(
  rollout: { generation?: number; observedGeneration?: number },
  updating: readonly string[],
): string {
  const stale = seenByController(rollout) ? '' : '; its controller has not seen the new version yet';
  return `${stale}${updating.length > 0 ? `; updating: ${updating.join(', ')}` : ''}`;
}

/** `updated 1/3 (version v1.34.4); updating: demo-control-plane-x7k2p` */
export function controlPlaneProgress(controlPlane: ControlPlaneRollout, updating: readonly string[]): string {
  const desired = controlPlane.desiredReplicas ?? controlPlane.replicas ?? 0;
  return `updated ${controlPlane.upToDateReplicas ?? 0}/${desired} (version ${controlPlane.version ?? 'unknown'})${progressSuffix(controlPlane, updating)}`;
}

/** `updated 1/2 (3 machines); updating: demo-md-0-abc12-x7k2p` */
export function machineDeploymentProgress(
  deployment: MachineDeploymentRollout,
  updating: readonly string[],
): string {
  const machines = deployment.replicas ?? 0;
  return (
    `updated ${deployment.upToDateReplicas ?? 0}/${deployment.desiredReplicas} (${machines} machine${machines === 1 ? '' : 's'})` +
    progressSuffix(deployment, updating)
  );
}

const SAFE_SHELL_WORD = /^[\w@%+=:,./-]+$/;

function shellWord(word: string): string {
  return SAFE_SHELL_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command that upgrades the MachineDeployments once the control plane is done, to paste as it is. */
export function upgradeCommandLine(
  cluster: string,
  target: string,
  options: { namespace: string; kubeconfig?: string; kubeconfigContext?: string },
): string {
  const words = [
    'capstan',
    'upgrade',
    'cluster',
    cluster,
    '--kubernetes-version',
    target,
    '-n',
    options.namespace,
  ];
  if (options.kubeconfig) words.push('--kubeconfig', options.kubeconfig);
  if (options.kubeconfigContext) words.push('--kubeconfig-context', options.kubeconfigContext);
  return words.map(shellWord).join(' ');
}
