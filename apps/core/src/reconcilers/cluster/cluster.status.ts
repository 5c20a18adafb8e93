import {
  ClusterPhase,
  ConditionList,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  deletingCondition,
  getCondition,
  isTrue,
  LABELS,
  mirrorCondition,
  summarizeConditions,
  type Cluster,
  type ClusterReplicasStatus,
  type ClusterStatus,
  type ConditionInput,
  type ControlPlaneContract,
  type InfrastructureClusterContract,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { computeClusterV1Beta1Status } from './cluster.v1beta1-status.js';
import { INVALID_REFERENCE_REASON, type ExternalObservation } from '../../external/observation.js';
import { type WorkloadClusterProbe } from '../../remote/workload-clusters.js';

/** Everything the Cluster's status is computed from: the Cluster, what it references, its descendants. */
export interface ClusterObservation {
  cluster: Cluster;
  infrastructure: ExternalObservation<InfrastructureClusterContract>;
  controlPlane: ExternalObservation<ControlPlaneContract>;
  /** Machines, MachineSets and MachineDeployments of this cluster (`spec.clusterName`). */
  machines: Machine[];
  machineSets: MachineSet[];
  machineDeployments: MachineDeployment[];
  remote: WorkloadClusterProbe;
  /** The current deletion step, while the Cluster is being deleted. */
  deleting?: { reason: string; message: string };
}

/** Conditions the Cluster controller computes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const CLUSTER_OWN_CONDITIONS: readonly string[] = [
  ConditionType.Available,
  ConditionType.InfrastructureReady,
  ConditionType.ControlPlaneInitialized,
  ConditionType.ControlPlaneAvailable,
  ConditionType.WorkersAvailable,
  ConditionType.RemoteConnectionProbe,
  ConditionType.Deleting,
];

export const isControlPlaneMachine = (machine: Machine): boolean =>
  machine.metadata?.labels?.[LABELS.controlPlane] !== undefined;

const ownedBy = (obj: { metadata?: { ownerReferences?: { uid: string }[] } }, cluster: Cluster): boolean =>
  (obj.metadata?.ownerReferences ?? []).some((r) => r.uid === cluster.metadata?.uid);

/**
 * A reference a Cluster with a topology leaves unset: the topology controller creates the object and sets it (its
 * TopologyReconciled condition says why it has not yet). The Cluster waits, as upstream's waits for its topology.
 */
const awaitsTopology = (cluster: Cluster, ref: ExternalObservation<unknown>): boolean =>
  ref.state === 'unset' && cluster.spec?.topology !== undefined;

/** The message of a condition about a reference a topology would set (empty while deleting, as upstream's). */
const topologyNotReconciled = (cluster: Cluster, field: string): string =>
  cluster.metadata?.deletionTimestamp
    ? ''
    : `Waiting for the topology controller to set spec.${field} (see TopologyReconciled)`;

/** False: the object of a reference the topology would set does not exist (upstream's reason). */
const waitingForTopology = (
  type: string,
  observation: ClusterObservation,
  field: string,
): ConditionInput => ({
  type,
  status: ConditionStatus.False,
  reason: ConditionReason.ObjectDoesNotExist,
  message: topologyNotReconciled(observation.cluster, field),
});

const validEndpoint = (cluster: Cluster): boolean =>
  !!cluster.spec?.controlPlaneEndpoint?.host && !!cluster.spec?.controlPlaneEndpoint?.port;

/**
 * The endpoint to copy onto `spec.controlPlaneEndpoint` when the Cluster has none: the control plane's if it
 * provides one, else the infrastructure cluster's once provisioned (upstream cluster_controller_phases.go).
 */
export function endpointToCopy(observation: ClusterObservation): { host: string; port: number } | undefined {
  if (validEndpoint(observation.cluster)) return undefined;
  const cp = observation.controlPlane;
  if (cp.state === 'found' && cp.contract.controlPlaneEndpoint) return cp.contract.controlPlaneEndpoint;
  const infra = observation.infrastructure;
  if (infra.state === 'found' && infra.contract.provisioned && infra.contract.controlPlaneEndpoint) {
    return infra.contract.controlPlaneEndpoint;
  }
  return undefined;
}

/** The Cluster's status as upstream's Cluster controller computes it (cluster_controller_status.go). */
export function computeClusterStatus(observation: ClusterObservation, now: Date = new Date()): ClusterStatus {
  const { cluster, infrastructure: infra, controlPlane: cp } = observation;
  const previous = cluster.status ?? {};
  const generation = cluster.metadata?.generation;
  const status: ClusterStatus = structuredClone(previous);
  const conditions = new ConditionList(previous.conditions, generation, now);
  const set = (input: ConditionInput) => conditions.set(input);

  // Contract fields, never reset once set.
  const infrastructureProvisioned =
    previous.initialization?.infrastructureProvisioned === true ||
    (infra.state === 'unset' && !awaitsTopology(cluster, infra)) ||
    (infra.state === 'found' && infra.contract.provisioned);
  const controlPlaneMachines = observation.machines.filter(isControlPlaneMachine);
  const controlPlaneInitialized =
    previous.initialization?.controlPlaneInitialized === true ||
    (cp.state === 'found' && cp.contract.initialized) ||
    (cp.state === 'unset' &&
      !awaitsTopology(cluster, cp) &&
      controlPlaneMachines.some((m) => !!m.status?.nodeRef?.name));
  status.initialization = {
    ...(infrastructureProvisioned ? { infrastructureProvisioned: true } : {}),
    ...(controlPlaneInitialized ? { controlPlaneInitialized: true } : {}),
  };
  if (Object.keys(status.initialization).length === 0) delete status.initialization;
  if (infra.state === 'found' && infra.contract.provisioned && infra.contract.failureDomains) {
    status.failureDomains = infra.contract.failureDomains;
  }

  status.controlPlane = controlPlaneReplicas(observation, controlPlaneMachines);
  status.workers = workerReplicas(observation);

  set(infrastructureReady(observation, infrastructureProvisioned));
  set(controlPlaneAvailable(observation, controlPlaneInitialized));
  set(
    controlPlaneInitialized
      ? {
          type: ConditionType.ControlPlaneInitialized,
          status: ConditionStatus.True,
          reason: ConditionReason.Initialized,
        }
      : awaitsTopology(cluster, cp)
        ? {
            type: ConditionType.ControlPlaneInitialized,
            status: ConditionStatus.Unknown,
            reason: ConditionReason.ObjectDoesNotExist,
            message: topologyNotReconciled(cluster, 'controlPlaneRef'),
          }
        : {
            type: ConditionType.ControlPlaneInitialized,
            status: ConditionStatus.False,
            reason: ConditionReason.NotInitialized,
            message:
              cp.state === 'unset'
                ? 'Waiting for the first control plane machine to have status.nodeRef set'
                : `Waiting for the ${cp.kind} to report status.initialization.controlPlaneInitialized`,
          },
  );
  set(workersAvailable(observation.machineDeployments));
  set(remoteConnectionProbe(observation, controlPlaneInitialized));
  conditions.set(deletingCondition(observation.deleting));
  set(
    summarizeConditions(conditions.all, {
      targetType: ConditionType.Available,
      of: [
        { type: ConditionType.Deleting, polarity: 'Negative' },
        ConditionType.RemoteConnectionProbe,
        ConditionType.InfrastructureReady,
        ConditionType.ControlPlaneAvailable,
        ConditionType.WorkersAvailable,
        ...(cluster.spec?.availabilityGates ?? []).map((g) => ({
          type: g.conditionType,
          polarity: g.polarity ?? 'Positive',
        })),
      ],
    }),
  );
  status.conditions = conditions.all;
  status.phase = clusterPhase(cluster, infrastructureProvisioned, !!observation.deleting);
  if (generation !== undefined) status.observedGeneration = generation;
  const v1beta1 = computeClusterV1Beta1Status(observation, now);
  if (Object.keys(v1beta1).length > 0) status.deprecated = { v1beta1 };
  return status;
}

/** Upstream setPhase: Pending, Provisioning once something is referenced, Provisioned, Deleting. */
export function clusterPhase(
  cluster: Cluster,
  infrastructureProvisioned: boolean,
  deleting: boolean,
): ClusterStatus['phase'] {
  let phase: ClusterStatus['phase'] = cluster.status?.phase ?? ClusterPhase.Pending;
  if (cluster.spec?.infrastructureRef || cluster.spec?.controlPlaneRef) phase = ClusterPhase.Provisioning;
  if (infrastructureProvisioned && validEndpoint(cluster)) phase = ClusterPhase.Provisioned;
  if (deleting || cluster.metadata?.deletionTimestamp) phase = ClusterPhase.Deleting;
  return phase;
}

function infrastructureReady(observation: ClusterObservation, provisioned: boolean): ConditionInput {
  const infra = observation.infrastructure;
  const type = ConditionType.InfrastructureReady;
  if (awaitsTopology(observation.cluster, infra))
    return waitingForTopology(type, observation, 'infrastructureRef');
  switch (infra.state) {
    case 'unset':
      return {
        type,
        status: ConditionStatus.True,
        reason: ConditionReason.Ready,
        message: 'No infrastructureRef: nothing to provision',
      };
    case 'invalid':
      return {
        type,
        status: ConditionStatus.False,
        reason: INVALID_REFERENCE_REASON,
        message: infra.message,
      };
    case 'notFound':
      return missing(type, infra.kind, observation, provisioned, 'the cluster');
    case 'found':
      return mirrorCondition(infra.contract.conditions, ConditionType.Ready, {
        targetType: type,
        fallback: provisioned
          ? { status: ConditionStatus.True, reason: ConditionReason.Ready, message: '' }
          : {
              status: ConditionStatus.False,
              reason: ConditionReason.NotReady,
              message: `${infra.kind} status.initialization.provisioned is false`,
            },
      });
  }
}

function controlPlaneAvailable(observation: ClusterObservation, initialized: boolean): ConditionInput {
  const cp = observation.controlPlane;
  const type = ConditionType.ControlPlaneAvailable;
  if (awaitsTopology(observation.cluster, cp))
    return waitingForTopology(type, observation, 'controlPlaneRef');
  switch (cp.state) {
    case 'unset':
      return initialized
        ? { type, status: ConditionStatus.True, reason: ConditionReason.Available }
        : {
            type,
            status: ConditionStatus.False,
            reason: ConditionReason.NotAvailable,
            message: 'Waiting for the first control plane machine to have status.nodeRef set',
          };
    case 'invalid':
      return { type, status: ConditionStatus.False, reason: INVALID_REFERENCE_REASON, message: cp.message };
    case 'notFound':
      return missing(type, cp.kind, observation, initialized, 'the cluster');
    case 'found':
      return mirrorCondition(cp.contract.conditions, ConditionType.Available, {
        targetType: type,
        fallback: {
          status: ConditionStatus.False,
          reason: ConditionReason.NotAvailable,
          message: `${cp.kind} does not report an Available condition`,
        },
      });
  }
}

/** A referenced object that does not exist: deleted (after it had done its part) or not created yet. */
function missing(
  type: string,
  kind: string,
  observation: ClusterObservation,
  hadDoneItsPart: boolean,
  owner: string,
): ConditionInput {
  const deleting = !!observation.cluster.metadata?.deletionTimestamp;
  if (hadDoneItsPart) {
    return {
      type,
      status: ConditionStatus.Unknown,
      reason: ConditionReason.ObjectDeleted,
      message: deleting ? `${kind} has been deleted` : `${kind} has been deleted while ${owner} still exists`,
    };
  }
  return {
    type,
    status: ConditionStatus.Unknown,
    reason: ConditionReason.ObjectDoesNotExist,
    message: `${kind} does not exist`,
  };
}

/** Aggregates the MachineDeployments' Available conditions; True (NoWorkers) without any. */
export function workersAvailable(deployments: readonly MachineDeployment[]): ConditionInput {
  const type = ConditionType.WorkersAvailable;
  if (deployments.length === 0)
    return { type, status: ConditionStatus.True, reason: ConditionReason.NoWorkers };
  const notAvailable: string[] = [];
  const unknown: string[] = [];
  for (const md of deployments) {
    const available = getCondition(md.status?.conditions, ConditionType.Available);
    const name = md.metadata?.name ?? '?';
    if (!available || available.status === ConditionStatus.Unknown) {
      unknown.push(
        `* MachineDeployment ${name}: ${available?.message || 'Available condition not yet reported'}`,
      );
    } else if (available.status === ConditionStatus.False) {
      notAvailable.push(`* MachineDeployment ${name}: ${available.message || available.reason}`);
    }
  }
  if (notAvailable.length > 0) {
    return {
      type,
      status: ConditionStatus.False,
      reason: ConditionReason.NotAvailable,
      message: [...notAvailable, ...unknown].join('\n'),
    };
  }
  if (unknown.length > 0) {
    return {
      type,
      status: ConditionStatus.Unknown,
      reason: ConditionReason.AvailableUnknown,
      message: unknown.join('\n'),
    };
  }
  return { type, status: ConditionStatus.True, reason: ConditionReason.Available };
}

function remoteConnectionProbe(
  observation: ClusterObservation,
  controlPlaneInitialized: boolean,
): ConditionInput {
  const type = ConditionType.RemoteConnectionProbe;
  if (!controlPlaneInitialized) {
    return {
      type,
      status: ConditionStatus.False,
      reason: ConditionReason.ProbeFailed,
      message: 'Remote connection not established yet',
    };
  }
  switch (observation.remote.state) {
    case 'Connected':
      return { type, status: ConditionStatus.True, reason: ConditionReason.ProbeSucceeded };
    case 'NoKubeconfig':
      return {
        type,
        status: ConditionStatus.False,
        reason: ConditionReason.ProbeFailed,
        message: `Secret ${observation.cluster.metadata?.name}-kubeconfig does not exist`,
      };
    case 'Connecting':
      return {
        type,
        status: ConditionStatus.Unknown,
        reason: ConditionReason.ProbeFailed,
        message: 'Remote connection probe not succeeded yet',
      };
  }
}

type Counters = Required<
  Pick<
    ClusterReplicasStatus,
    'desiredReplicas' | 'replicas' | 'readyReplicas' | 'availableReplicas' | 'upToDateReplicas'
  >
>;

function countMachines(machines: readonly Machine[]): Counters {
  const count = (type: string) => machines.filter((m) => isTrue(m.status?.conditions, type)).length;
  return {
    desiredReplicas: machines.length,
    replicas: machines.length,
    readyReplicas: count(ConditionType.Ready),
    availableReplicas: count(ConditionType.Available),
    upToDateReplicas: count(ConditionType.UpToDate),
  };
}

function withoutUndefined<T extends object>(value: T): T | undefined {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return entries.length > 0 ? (Object.fromEntries(entries) as T) : undefined;
}

function controlPlaneReplicas(
  observation: ClusterObservation,
  controlPlaneMachines: readonly Machine[],
): ClusterReplicasStatus | undefined {
  const cp = observation.controlPlane;
  if (cp.state === 'unset') {
    return controlPlaneMachines.length > 0 ? countMachines(controlPlaneMachines) : undefined;
  }
  if (cp.state !== 'found') return undefined;
  return withoutUndefined({
    desiredReplicas: cp.contract.desiredReplicas,
    replicas: cp.contract.replicas,
    readyReplicas: cp.contract.readyReplicas,
    availableReplicas: cp.contract.availableReplicas,
    upToDateReplicas: cp.contract.upToDateReplicas,
  });
}

/** MachineDeployments, MachineSets the Cluster owns directly, and stand-alone worker Machines (upstream setWorkersReplicas). */
function workerReplicas(observation: ClusterObservation): ClusterReplicasStatus | undefined {
  const { cluster } = observation;
  const totals: Partial<Counters> = {};
  const add = (field: keyof Counters, value: number | undefined) => {
    if (value !== undefined) totals[field] = (totals[field] ?? 0) + value;
  };
  const addScalable = (obj: MachineDeployment | MachineSet) => {
    add('desiredReplicas', obj.spec?.replicas);
    add('replicas', obj.status?.replicas ?? 0);
    add('readyReplicas', obj.status?.readyReplicas);
    add('availableReplicas', obj.status?.availableReplicas);
    add('upToDateReplicas', obj.status?.upToDateReplicas);
  };
  for (const md of observation.machineDeployments) addScalable(md);
  for (const ms of observation.machineSets) if (ownedBy(ms, cluster)) addScalable(ms);
  const standalone = observation.machines.filter((m) => !isControlPlaneMachine(m) && ownedBy(m, cluster));
  if (standalone.length > 0) {
    const counted = countMachines(standalone);
    for (const field of Object.keys(counted) as (keyof Counters)[]) add(field, counted[field]);
  }
  return withoutUndefined(totals);
}
