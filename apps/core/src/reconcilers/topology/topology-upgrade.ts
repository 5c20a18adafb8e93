import { compareVersions } from '@capstan/api';

// Upgrade orchestration (upstream's desiredstate computeControlPlaneVersion and computeMachineDeploymentVersion; the
// Runtime SDK hooks' answers come in as `hold`, see topology-hooks.ts): the control plane moves to the topology's version first, and only once it is stable
// and every worker has caught up with it; then MachineDeployments follow in the topology's order, at most
// `upgrade-concurrency` at a time, skipping deferred ones and stopping at a held one. A MachineDeployment the
// topology adds while the control plane is moving is created once it has arrived.

/** Cluster annotation: how many MachineDeployments may upgrade at once (default 1). */
export const UPGRADE_CONCURRENCY_ANNOTATION = 'topology.cluster.x-k8s.io/upgrade-concurrency';
/** On a MachineDeployment topology's metadata: this one does not upgrade until the annotation goes. */
export const DEFER_UPGRADE_ANNOTATION = 'topology.cluster.x-k8s.io/defer-upgrade';
/** On a MachineDeployment topology's metadata: this one and every later one wait. */
export const HOLD_UPGRADE_SEQUENCE_ANNOTATION = 'topology.cluster.x-k8s.io/hold-upgrade-sequence';
/** Cluster annotation while the control plane moves: the version it is moving to (read by preflight checks). */
export const UPGRADE_STEP_ANNOTATION = 'topology.internal.cluster.x-k8s.io/upgrade-step';

export interface ControlPlaneState {
  /** spec.version. */
  version: string;
  /** status.version: the oldest version its machines run; unset while it provisions. */
  statusVersion?: string;
  /** Whether it is scaling or rolling out (replicas not all up to date and ready). */
  settling: boolean;
}

export interface MachineDeploymentState {
  topologyName: string;
  /** spec.template.spec.version; unset when the MachineDeployment does not exist yet. */
  version?: string;
  /** Whether some of its Machines do not run its version yet. */
  upgrading: boolean;
  deferred: boolean;
  holdsSequence: boolean;
}

export interface UpgradeDecision {
  controlPlaneVersion: string;
  /** The version each existing MachineDeployment gets, by topology name. */
  machineDeploymentVersions: Map<string, string>;
  /** New MachineDeployments waiting for the control plane to reach the topology version. */
  createPending: string[];
  /** Existing MachineDeployments not yet moved to the topology version, and why not yet. */
  upgradePending: string[];
  deferred: string[];
  /** What is moving now: for the condition. */
  controlPlaneUpgrading: boolean;
  machineDeploymentsUpgrading: string[];
}

/** The concurrency the Cluster's annotation asks for: a positive integer, else 1. */
export function upgradeConcurrency(annotations: Record<string, string> | undefined): number {
  const value = Number(annotations?.[UPGRADE_CONCURRENCY_ANNOTATION]);
  return Number.isInteger(value) && value > 0 ? value : 1;
}

export function decideVersions(input: {
  topologyVersion: string;
  controlPlane: ControlPlaneState | undefined;
  /** In the topology's order. */
  machineDeployments: readonly MachineDeploymentState[];
  concurrency: number;
  /** Runtime SDK hooks holding a step back: BeforeClusterUpgrade the control plane, AfterControlPlaneUpgrade the workers. */
  hold?: { controlPlane?: boolean; workers?: boolean };
}): UpgradeDecision {
  const { topologyVersion, controlPlane } = input;
  const mds = input.machineDeployments;
  const existing = mds.filter((md) => md.version !== undefined);
  const workersUpgrading = existing.filter((md) => md.upgrading).map((md) => md.topologyName);

  const controlPlaneUpgrading =
    controlPlane !== undefined &&
    controlPlane.statusVersion !== undefined &&
    compareVersions(controlPlane.statusVersion, controlPlane.version) < 0;
  let controlPlaneVersion: string;
  if (!controlPlane) controlPlaneVersion = topologyVersion;
  else if (
    controlPlane.statusVersion === undefined ||
    controlPlaneUpgrading ||
    controlPlane.settling ||
    workersUpgrading.length > 0 ||
    existing.some((md) => md.version !== controlPlane.version) ||
    input.hold?.controlPlane === true
  )
    controlPlaneVersion = controlPlane.version;
  else controlPlaneVersion = topologyVersion;

  // The control plane is where the topology wants it, and stable there.
  const controlPlaneArrived =
    controlPlane === undefined ||
    (controlPlane.version === topologyVersion &&
      controlPlane.statusVersion !== undefined &&
      !controlPlaneUpgrading &&
      !controlPlane.settling &&
      input.hold?.workers !== true);

  const machineDeploymentVersions = new Map<string, string>();
  const createPending: string[] = [];
  const upgradePending: string[] = [];
  const deferred: string[] = [];
  let moving = workersUpgrading.length;
  let held = false;
  for (const md of mds) {
    if (md.version === undefined) {
      if (!controlPlaneArrived && controlPlane !== undefined) createPending.push(md.topologyName);
      continue;
    }
    held ||= md.holdsSequence;
    if (md.version === topologyVersion) {
      machineDeploymentVersions.set(md.topologyName, md.version);
      continue;
    }
    const mayStart =
      controlPlaneArrived && !held && !md.deferred && !md.upgrading && moving < input.concurrency;
    if (mayStart) {
      moving++;
      machineDeploymentVersions.set(md.topologyName, topologyVersion);
    } else {
      machineDeploymentVersions.set(md.topologyName, md.version);
      (md.deferred || held ? deferred : upgradePending).push(md.topologyName);
    }
  }
  return {
    controlPlaneVersion,
    machineDeploymentVersions,
    createPending,
    upgradePending,
    deferred,
    controlPlaneUpgrading:
      controlPlaneUpgrading || (controlPlane !== undefined && controlPlaneVersion !== controlPlane.version),
    machineDeploymentsUpgrading: [
      ...new Set([
        ...workersUpgrading,
        ...[...machineDeploymentVersions]
          .filter(([name, v]) => existing.find((md) => md.topologyName === name)?.version !== v)
          .map(([name]) => name),
      ]),
    ],
  };
}
