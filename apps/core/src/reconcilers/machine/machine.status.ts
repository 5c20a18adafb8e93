import { type V1Node } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  ConditionList,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  deletingCondition,
  getCondition,
  LABELS,
  MachinePhase,
  mirrorCondition,
  summarizeConditions,
  toRFC3339,
  type BootstrapConfigContract,
  type Condition,
  type ConditionInput,
  type InfrastructureMachineContract,
  type Machine,
  type MachineDeletionStatus,
  type MachineStatus,
  type NodeSystemInfo,
} from '@capstan/api';
import { computeMachineV1Beta1Status } from './machine.v1beta1-status.js';
import { INVALID_REFERENCE_REASON, type ExternalObservation } from '../../external/observation.js';

/** What the core knows of the Machine's Node in the workload cluster. */
export type NodeObservation =
  /** Not looked for yet; the message says what is awaited (condition Unknown, InspectionFailed). */
  | { state: 'waiting'; message: string }
  /** The workload cluster cannot be reached: the last known node conditions are kept. */
  | { state: 'connectionDown'; message: string }
  | { state: 'found'; node: V1Node }
  /** The workload cluster answers and has no such Node. */
  | { state: 'notFound' };

export interface MachineObservation {
  machine: Machine;
  bootstrap: ExternalObservation<BootstrapConfigContract>;
  infrastructure: ExternalObservation<InfrastructureMachineContract>;
  node: NodeObservation;
  /** The current deletion step, while the Machine is being deleted, and `status.deletion` as the step left it. */
  deleting?: { reason: string; message: string; deletion?: MachineDeletionStatus };
  /** `Updating`, from the in-place update step (machine.in-place.ts); NotUpdating when unset. */
  updating?: ConditionInput;
}

/**
 * Conditions the Machine controller computes (others, such as HealthCheckSucceeded or UpToDate, belong to other
 * controllers; the reconciler kit adds `Paused` and `ReconcileSucceeded`).
 */
export const MACHINE_OWN_CONDITIONS: readonly string[] = [
  ConditionType.BootstrapConfigReady,
  ConditionType.PlanApplied,
  ConditionType.InfrastructureReady,
  ConditionType.NodeReady,
  ConditionType.NodeHealthy,
  ConditionType.Deleting,
  ConditionType.Updating,
  ConditionType.Ready,
  ConditionType.Available,
];

const NODE_INFO_FIELDS = [
  'machineID',
  'systemUUID',
  'bootID',
  'kernelVersion',
  'osImage',
  'containerRuntimeVersion',
  'kubeletVersion',
  'kubeProxyVersion',
  'operatingSystem',
  'architecture',
] as const;

/**
 * `status.certificatesExpiryDate` as upstream's Machine controller sets it (reconcileCertificateExpiry): control plane
 * Machines only, from the Machine's `machine.cluster.x-k8s.io/certificates-expiry` annotation, else the bootstrap
 * config's (where the control plane provider writes what the server reported). A value that is not RFC 3339 is not
 * copied.
 */
function certificatesExpiryOf(
  machine: Machine,
  bootstrap: ExternalObservation<BootstrapConfigContract>,
): string | undefined {
  if (!Object.hasOwn(machine.metadata?.labels ?? {}, LABELS.controlPlane)) return undefined;
  const value =
    machine.metadata?.annotations?.[ANNOTATIONS.certificatesExpiry] ??
    (bootstrap.state === 'found' ? bootstrap.contract.certificatesExpiry : undefined);
  if (!value || !RFC3339.test(value) || Number.isNaN(Date.parse(value))) return undefined;
  return toRFC3339(new Date(value));
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The Machine's status as upstream's Machine controller computes it (machine_controller_status.go). */
export function computeMachineStatus(observation: MachineObservation, now: Date = new Date()): MachineStatus {
  const { machine, bootstrap, infrastructure: infra, node } = observation;
  const previous = machine.status ?? {};
  const generation = machine.metadata?.generation;
  const status: MachineStatus = structuredClone(previous);
  const conditions = new ConditionList(previous.conditions, generation, now);
  const set = (input: ConditionInput) => conditions.set(input);

  const bootstrapDataSecretCreated =
    previous.initialization?.bootstrapDataSecretCreated === true ||
    (!machine.spec?.bootstrap?.configRef && !!machine.spec?.bootstrap?.dataSecretName) ||
    (bootstrap.state === 'found' &&
      bootstrap.contract.dataSecretCreated &&
      !!bootstrap.contract.dataSecretName);
  const infrastructureProvisioned =
    previous.initialization?.infrastructureProvisioned === true ||
    (infra.state === 'found' && infra.contract.provisioned);
  status.initialization = {
    ...(bootstrapDataSecretCreated ? { bootstrapDataSecretCreated: true } : {}),
    ...(infrastructureProvisioned ? { infrastructureProvisioned: true } : {}),
  };
  if (Object.keys(status.initialization).length === 0) delete status.initialization;
  if (infra.state === 'found' && infra.contract.provisioned) {
    if (infra.contract.addresses.length > 0) status.addresses = infra.contract.addresses;
    if (infra.contract.failureDomain) status.failureDomain = infra.contract.failureDomain;
  }
  const certificatesExpiryDate = certificatesExpiryOf(machine, bootstrap);
  if (certificatesExpiryDate) status.certificatesExpiryDate = certificatesExpiryDate;
  else delete status.certificatesExpiryDate;
  if (node.state === 'found') {
    status.nodeRef = { name: node.node.metadata!.name! };
    const info = nodeInfo(node.node);
    if (info) status.nodeInfo = info;
  }

  set(bootstrapConfigReady(observation, bootstrapDataSecretCreated));
  const planApplied = planAppliedMirror(observation);
  if (planApplied) set(planApplied);
  else conditions.remove(ConditionType.PlanApplied);
  set(infrastructureReady(observation, infrastructureProvisioned));
  for (const input of nodeConditions(observation, conditions.all)) set(input);
  conditions.set(deletingCondition(observation.deleting));
  set(
    observation.updating ?? {
      type: ConditionType.Updating,
      status: ConditionStatus.False,
      reason: ConditionReason.NotUpdating,
    },
  );
  set(readyCondition(machine, conditions.all));
  set(availableCondition(machine, conditions.all, now));
  status.conditions = conditions.all;

  const phase = machinePhase(
    machine,
    status,
    !!observation.deleting || !!machine.metadata?.deletionTimestamp,
  );
  if (phase !== previous.phase) status.lastUpdated = toRFC3339(now);
  status.phase = phase;
  if (generation !== undefined) status.observedGeneration = generation;
  const deletion = observation.deleting?.deletion;
  if (deletion && Object.keys(deletion).length > 0) status.deletion = deletion;
  const v1beta1 = computeMachineV1Beta1Status(observation, status, now);
  if (Object.keys(v1beta1).length > 0) status.deprecated = { v1beta1 };
  return status;
}

/** Upstream setMachinePhaseAndLastUpdated. */
export function machinePhase(
  machine: Machine,
  status: MachineStatus,
  deleting: boolean,
): MachineStatus['phase'] {
  let phase: MachineStatus['phase'] = machine.status?.phase ?? MachinePhase.Pending;
  const bootstrapped = status.initialization?.bootstrapDataSecretCreated === true;
  const provisioned = status.initialization?.infrastructureProvisioned === true;
  if (bootstrapped && !provisioned) phase = MachinePhase.Provisioning;
  if (machine.spec?.providerID) phase = MachinePhase.Provisioned;
  if (status.nodeRef?.name && provisioned) phase = MachinePhase.Running;
  if (
    status.conditions?.some((c) => c.type === ConditionType.Updating && c.status === ConditionStatus.True)
  ) {
    phase = MachinePhase.Updating;
  }
  if (deleting) phase = MachinePhase.Deleting;
  return phase;
}

/** How long until Available can turn true (minReadySeconds after Ready), or undefined when nothing waits. */
export function availableIn(
  machine: Machine,
  status: MachineStatus,
  now: Date = new Date(),
): number | undefined {
  const ready = getCondition(status.conditions, ConditionType.Ready);
  const available = getCondition(status.conditions, ConditionType.Available);
  if (ready?.status !== ConditionStatus.True || available?.status === ConditionStatus.True) return undefined;
  const due = Date.parse(ready.lastTransitionTime) + (machine.spec?.minReadySeconds ?? 0) * 1000;
  return Math.max(0, due - now.getTime());
}

/**
 * The Node's `status.nodeInfo`, all ten fields as the Node reports them, empty ones included: upstream's Machine
 * CRD requires every field (its core copies the struct whole), so leaving an empty one out makes the whole status
 * write fail there.
 */
function nodeInfo(node: V1Node): NodeSystemInfo | undefined {
  const source = node.status?.nodeInfo as Record<string, unknown> | undefined;
  if (!source) return undefined;
  const info: Record<string, string> = {};
  for (const field of NODE_INFO_FIELDS) {
    const value = source[field];
    info[field] = typeof value === 'string' ? value : '';
  }
  return info as NodeSystemInfo;
}

function referenceCondition<C>(
  type: string,
  observation: ExternalObservation<C>,
  machine: Machine,
  done: boolean,
  mirror: (found: C, kind: string) => ConditionInput,
): ConditionInput {
  switch (observation.state) {
    case 'unset':
      return { type, status: ConditionStatus.True, reason: ConditionReason.DataSecretProvided };
    case 'invalid':
      return {
        type,
        status: ConditionStatus.False,
        reason: INVALID_REFERENCE_REASON,
        message: observation.message,
      };
    case 'found':
      return mirror(observation.contract, observation.kind);
    case 'notFound': {
      const deleting = !!machine.metadata?.deletionTimestamp;
      if (done) {
        return {
          type,
          status: ConditionStatus.False,
          reason: ConditionReason.ObjectDeleted,
          message: deleting
            ? `${observation.kind} has been deleted`
            : `${observation.kind} has been deleted while the Machine still exists`,
        };
      }
      return {
        type,
        status: ConditionStatus.False,
        reason: ConditionReason.ObjectDoesNotExist,
        message: `${observation.kind} does not exist`,
      };
    }
  }
}

/**
 * Capstan's extension of the bootstrap contract: a bootstrap config whose provider manages the machine through
 * plans (a node agent) reports `PlanApplied`; the Machine shows it as it is, so `describe cluster` and users of
 * the Machine see whether the node applied what it was told. Absent when the provider reports none.
 */
function planAppliedMirror(observation: MachineObservation): ConditionInput | undefined {
  const bootstrap = observation.bootstrap;
  if (bootstrap.state !== 'found') return undefined;
  if (!bootstrap.contract.conditions?.some((c) => c.type === ConditionType.PlanApplied)) return undefined;
  return mirrorCondition(bootstrap.contract.conditions, ConditionType.PlanApplied, {
    targetType: ConditionType.PlanApplied,
    fallback: { status: ConditionStatus.Unknown, reason: ConditionReason.InternalError },
  });
}

function bootstrapConfigReady(observation: MachineObservation, created: boolean): ConditionInput {
  return referenceCondition(
    ConditionType.BootstrapConfigReady,
    observation.bootstrap,
    observation.machine,
    created,
    (contract, kind) =>
      mirrorCondition(contract.conditions, ConditionType.Ready, {
        targetType: ConditionType.BootstrapConfigReady,
        fallback: created
          ? { status: ConditionStatus.True, reason: ConditionReason.Ready, message: '' }
          : {
              status: ConditionStatus.False,
              reason: ConditionReason.NotReady,
              message: `${kind} status.initialization.dataSecretCreated is false`,
            },
      }),
  );
}

function infrastructureReady(observation: MachineObservation, provisioned: boolean): ConditionInput {
  const infra = observation.infrastructure;
  if (infra.state === 'unset') {
    // Machine.spec.infrastructureRef is required by the schema; an empty one can only come from a broken object.
    return {
      type: ConditionType.InfrastructureReady,
      status: ConditionStatus.False,
      reason: INVALID_REFERENCE_REASON,
      message: 'spec.infrastructureRef is not set',
    };
  }
  return referenceCondition(
    ConditionType.InfrastructureReady,
    infra,
    observation.machine,
    provisioned,
    (contract, kind) =>
      mirrorCondition(contract.conditions, ConditionType.Ready, {
        targetType: ConditionType.InfrastructureReady,
        fallback: provisioned
          ? { status: ConditionStatus.True, reason: ConditionReason.Ready, message: '' }
          : {
              status: ConditionStatus.False,
              reason: ConditionReason.NotReady,
              message: `${kind} status.initialization.provisioned is false`,
            },
      }),
  );
}

const bothNodeConditions = (status: ConditionStatus, reason: string, message: string): ConditionInput[] => [
  { type: ConditionType.NodeReady, status, reason, message },
  { type: ConditionType.NodeHealthy, status, reason, message },
];

/** NodeReady and NodeHealthy (upstream setNodeHealthyAndReadyConditions). */
function nodeConditions(observation: MachineObservation, current: readonly Condition[]): ConditionInput[] {
  const { machine, node } = observation;
  const nodeName = machine.status?.nodeRef?.name;
  switch (node.state) {
    case 'waiting':
      return bothNodeConditions(ConditionStatus.Unknown, ConditionReason.InspectionFailed, node.message);
    case 'connectionDown':
      // Keep reporting the last known state through a short outage; say so only when nothing is known.
      if (getCondition(current, ConditionType.NodeReady) && getCondition(current, ConditionType.NodeHealthy))
        return [];
      return bothNodeConditions(ConditionStatus.Unknown, ConditionReason.ConnectionDown, node.message);
    case 'found':
      return [nodeReady(node.node), nodeHealthy(node.node)];
    case 'notFound':
      if (machine.metadata?.deletionTimestamp) {
        return nodeName
          ? bothNodeConditions(
              ConditionStatus.False,
              ConditionReason.NodeDeleted,
              `Node ${nodeName} has been deleted`,
            )
          : bothNodeConditions(
              ConditionStatus.Unknown,
              ConditionReason.NodeDoesNotExist,
              'Node does not exist',
            );
      }
      if (nodeName) {
        return bothNodeConditions(
          ConditionStatus.False,
          ConditionReason.NodeDeleted,
          `Node ${nodeName} has been deleted while the Machine still exists`,
        );
      }
      return bothNodeConditions(
        ConditionStatus.Unknown,
        ConditionReason.InspectionFailed,
        machine.spec?.providerID
          ? `Waiting for a Node with spec.providerID ${machine.spec.providerID} to exist`
          : `Waiting for ${machine.spec?.infrastructureRef?.kind ?? 'the infrastructure'} to report spec.providerID`,
      );
  }
}

function nodeReady(node: V1Node): ConditionInput {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready) {
    return {
      type: ConditionType.NodeReady,
      status: ConditionStatus.Unknown,
      reason: ConditionReason.NodeReadyUnknown,
      message: '* Node.Ready: Condition not yet reported',
    };
  }
  const status = ready.status as ConditionStatus;
  const reason =
    status === ConditionStatus.True
      ? ConditionReason.NodeReady
      : status === ConditionStatus.False
        ? ConditionReason.NodeNotReady
        : ConditionReason.NodeReadyUnknown;
  return {
    type: ConditionType.NodeReady,
    status,
    reason,
    message: status !== ConditionStatus.True && ready.message ? `* Node.Ready: ${ready.message}` : '',
  };
}

/** Summary of the Node's Ready, MemoryPressure, DiskPressure and PIDPressure (upstream summarizeNodeConditions). */
function nodeHealthy(node: V1Node): ConditionInput {
  let bad = 0;
  let unknown = 0;
  const messages: string[] = [];
  const distinct = new Set<string>();
  for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
    const condition = node.status?.conditions?.find((c) => c.type === type);
    if (!condition) {
      messages.push(`* Node.${type}: Condition not yet reported`);
      unknown++;
      continue;
    }
    const good = type === 'Ready' ? 'True' : 'False';
    if (condition.status === good) continue;
    const message = condition.message || `Condition is ${condition.status}`;
    distinct.add(message);
    messages.push(`* Node.${type}: ${message}`);
    if (condition.status === 'Unknown') unknown++;
    else bad++;
  }
  const problems = bad + unknown;
  const message =
    problems > 1 && distinct.size === 1 && messages.length === problems
      ? `* Node.AllConditions: ${[...distinct][0]}`
      : messages.join('\n');
  if (bad > 0)
    return {
      type: ConditionType.NodeHealthy,
      status: ConditionStatus.False,
      reason: ConditionReason.NodeNotHealthy,
      message,
    };
  if (unknown > 0)
    return {
      type: ConditionType.NodeHealthy,
      status: ConditionStatus.Unknown,
      reason: ConditionReason.NodeHealthyUnknown,
      message,
    };
  return {
    type: ConditionType.NodeHealthy,
    status: ConditionStatus.True,
    reason: ConditionReason.NodeHealthy,
  };
}

/** Summary of Deleting (negative), BootstrapConfigReady, InfrastructureReady, NodeHealthy, HealthCheckSucceeded and readiness gates. */
function readyCondition(machine: Machine, conditions: readonly Condition[]): ConditionInput {
  const deleting = getCondition(conditions, ConditionType.Deleting);
  // Only the stage of a deletion goes into Ready: the step's details vary too much to aggregate across machines.
  const forSummary =
    deleting?.status === ConditionStatus.True
      ? conditions.map((c) =>
          c.type === ConditionType.Deleting
            ? { ...c, message: `Machine deletion in progress, stage: ${c.reason}` }
            : c,
        )
      : conditions;
  return summarizeConditions(forSummary, {
    targetType: ConditionType.Ready,
    of: [
      { type: ConditionType.Deleting, polarity: 'Negative' },
      ConditionType.BootstrapConfigReady,
      ConditionType.InfrastructureReady,
      ConditionType.NodeHealthy,
      ...(getCondition(conditions, ConditionType.HealthCheckSucceeded)
        ? [ConditionType.HealthCheckSucceeded]
        : []),
      ...(machine.spec?.readinessGates ?? []).map((g) => ({
        type: g.conditionType,
        polarity: g.polarity ?? 'Positive',
      })),
    ],
  });
}

function availableCondition(machine: Machine, conditions: readonly Condition[], now: Date): ConditionInput {
  const ready = getCondition(conditions, ConditionType.Ready);
  if (ready?.status !== ConditionStatus.True) {
    return { type: ConditionType.Available, status: ConditionStatus.False, reason: ConditionReason.NotReady };
  }
  const readyFor = now.getTime() - Date.parse(ready.lastTransitionTime);
  if (readyFor >= (machine.spec?.minReadySeconds ?? 0) * 1000) {
    return { type: ConditionType.Available, status: ConditionStatus.True, reason: ConditionReason.Available };
  }
  return {
    type: ConditionType.Available,
    status: ConditionStatus.False,
    reason: ConditionReason.WaitingForMinReadySeconds,
  };
}
