import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  getCondition,
  LABELS,
  RESOURCES,
  withConditions,
  type Cluster,
  type Machine,
  type MachineHealthCheck,
} from '@capstan/api';
import {
  BY_CLUSTER_NAME,
  clusterIndexValue,
  type EventRecorder,
  type ReconcileContext,
  type ReconcileResult,
} from '@capstan/kube';
import { eventDataBase } from '@capstan/events';
import type { OwedEvent, ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import {
  WorkloadClusterUnavailableError,
  type WorkloadClusterAccess,
  type WorkloadClusters,
} from '../../remote/workload-clusters.js';
import { selectorMatches } from '../shared/label-selector.js';
import { MachineConditionWriter } from '@capstan/provider-kit';
import { setClusterLabelAndOwner } from '../shared/ownership.js';
import { clusterOf, type WorkloadContext } from '../shared/workload-context.js';
import { computeMachineHealthCheckV1Beta1Status } from './machinehealthcheck.v1beta1-status.js';
import {
  evaluateTarget,
  skipsHealthCheck,
  type HealthCheckTarget,
  type HealthVerdict,
} from './health-check.js';
import {
  HealthCheckMachines,
  MHC_CONDITION_TYPES,
  desiredHealthConditions,
  healthConditionsChanged,
  withHealthConditions,
  type MachineHealthDecision,
} from './machine-health-conditions.js';
import {
  cancelExternalRemediation,
  remediationTemplateProblem,
  requestExternalRemediation,
  usesExternalRemediation,
} from './machinehealthcheck.remediation.js';
import { remediationAllowance, type RemediationAllowance } from './remediation-allowance.js';

/** A workload cluster that cannot be read yet is tried again after this long. */
const UNREACHABLE_RETRY_MS = 10_000;

/** The Machines a health check watches: its selector plus its cluster's label (upstream adds that requirement). */
export function selectsMachine(mhc: MachineHealthCheck, machine: Machine): boolean {
  return (
    machine.metadata.labels?.[LABELS.clusterName] === mhc.spec.clusterName &&
    selectorMatches(mhc.spec.selector, machine.metadata.labels)
  );
}

interface Judged {
  machine: Machine;
  verdict: HealthVerdict;
}

/** The conditions of a MachineHealthCheck this controller writes (the kit adds Paused and ReconcileSucceeded). */
export const MACHINE_HEALTH_CHECK_CONDITIONS = [ConditionType.RemediationAllowed] as const;

/**
 * Finds unhealthy Machines and has them remediated (upstream machinehealthcheck_controller.go): judges each
 * selected Machine by its Node's conditions, its startup time and the remediate-machine annotation, writes
 * HealthCheckSucceeded on it, and unless too many are unhealthy asks the owner to remediate (OwnerRemediated) or
 * creates an external remediation request. Requeues itself for the earliest timeout still running. Runs in the
 * reconciler kit, which handles pausing, the write of the health check, its lifecycle events and conflicts.
 */
export class MachineHealthCheckReconciler implements ReconcilerParts<MachineHealthCheck> {
  private readonly machineConditions: MachineConditionWriter;
  readonly now: () => Date;

  constructor(
    private readonly workload: WorkloadContext,
    private readonly workloadClusters: WorkloadClusters,
    private readonly recorder: EventRecorder,
  ) {
    this.machineConditions = new MachineConditionWriter(
      new HealthCheckMachines(workload.client, RESOURCES.Machine),
      MHC_CONDITION_TYPES,
    );
    this.now = workload.now;
  }

  clusterOf(healthCheck: MachineHealthCheck): Cluster | undefined {
    return clusterOf(this.workload, healthCheck);
  }

  /** Judges the selected Machines and has the unhealthy remediated. */
  async reconcileNormal(scope: ReconcileScope<MachineHealthCheck>): Promise<ReconcileResult | undefined> {
    const { rc } = scope;
    const namespace = scope.obj.metadata.namespace!;
    const cluster = clusterOf(this.workload, scope.obj);
    if (!cluster) {
      rc.log.info({ cluster: scope.obj.spec.clusterName }, 'cluster not found: waiting for it');
      // The Cluster watch brings the health check back when the Cluster appears.
      scope.obj.status = {
        ...scope.obj.status,
        conditions: withConditions(
          scope.obj.status?.conditions,
          [
            remediationNotAllowed(
              ConditionReason.ClusterNotFound,
              `spec.clusterName: Cluster ${scope.obj.spec.clusterName} does not exist`,
            ),
          ],
          scope.obj.metadata.generation,
          this.workload.now(),
        ),
      };
      return undefined;
    }
    setClusterLabelAndOwner(scope.obj, scope.obj.spec.clusterName, cluster, true);
    // Written before any Machine is: a write refused here leaves no Machine marked without its events.
    const mhc = await scope.patchNow();

    let access: WorkloadClusterAccess | undefined;
    try {
      access = await this.workloadClusters.access(namespace, mhc.spec.clusterName);
    } catch (err) {
      if (!(err instanceof WorkloadClusterUnavailableError)) throw err;
      rc.log.info({ reason: err.reason }, 'workload cluster not reachable: health check postponed');
      return { requeueAfter: UNREACHABLE_RETRY_MS };
    }

    const now = this.workload.now();
    const targets = this.workload.machines
      .byIndex(BY_CLUSTER_NAME, clusterIndexValue(namespace, mhc.spec.clusterName))
      .filter((m) => selectsMachine(mhc, m) && !skipsHealthCheck(m))
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    const judged: Judged[] = targets.map((machine) => ({
      machine,
      verdict: evaluateTarget(this.targetOf(machine, access), mhc.spec.checks, cluster, now.getTime()),
    }));
    const healthy = judged.filter((j) => j.verdict.state === 'healthy').length;
    const unhealthy = judged.filter((j) => j.verdict.state === 'unhealthy');
    const templateProblem = await remediationTemplateProblem(this.workload.templates, mhc);
    const counted = remediationAllowance(
      mhc.spec.remediation?.triggerIf,
      targets.length,
      targets.length - healthy,
    );
    const allowance: RemediationAllowance = templateProblem
      ? { allowed: false, remaining: 0, message: templateProblem }
      : counted;
    if (!allowance.allowed && unhealthy.length > 0) {
      void this.recorder.event(mhc, {
        type: 'Warning',
        reason: 'RemediationRestricted',
        action: 'Remediate',
        note: allowance.message,
      });
    }

    for (const { machine, verdict } of judged) {
      if (verdict.state === 'pending') continue;
      scope.announce(...(await this.writeMachine(mhc, machine, verdict, allowance.allowed, now, rc)));
    }

    mhc.status = {
      ...mhc.status,
      expectedMachines: targets.length,
      currentHealthy: healthy,
      remediationsAllowed: allowance.allowed ? allowance.remaining : 0,
      targets: targets.map((m) => m.metadata.name!),
      conditions: withConditions(
        mhc.status?.conditions,
        [
          allowance.allowed
            ? remediationAllowed()
            : remediationNotAllowed(
                templateProblem
                  ? ConditionReason.RemediationTemplateNotFound
                  : ConditionReason.TooManyUnhealthy,
                allowance.message ?? '',
              ),
        ],
        mhc.metadata.generation,
        now,
      ),
      observedGeneration: mhc.metadata.generation,
      deprecated: {
        v1beta1: computeMachineHealthCheckV1Beta1Status(mhc.status?.deprecated?.v1beta1, counted, now),
      },
    };

    const nextChecks = judged.flatMap((j) =>
      'nextCheckMs' in j.verdict && j.verdict.nextCheckMs ? [j.verdict.nextCheckMs] : [],
    );
    // Short-circuited health checks look again soon: a Machine may recover, or the limit allow remediation.
    if (!allowance.allowed && unhealthy.length > 0) nextChecks.push(UNREACHABLE_RETRY_MS);
    return nextChecks.length > 0 ? { requeueAfter: Math.max(1000, Math.min(...nextChecks)) } : undefined;
  }

  private targetOf(machine: Machine, access: WorkloadClusterAccess | undefined): HealthCheckTarget {
    const nodeName = machine.status?.nodeRef?.name;
    const node = nodeName && access ? access.nodes.get(nodeName) : undefined;
    return {
      machine,
      node,
      nodeMissing: Boolean(nodeName && access && !node),
      nodesKnown: access !== undefined,
    };
  }

  /** Writes the health check's conditions on one judged Machine; returns the lifecycle events it owes. */
  private async writeMachine(
    mhc: MachineHealthCheck,
    machine: Machine,
    verdict: Exclude<HealthVerdict, { state: 'pending' }>,
    remediationAllowed: boolean,
    now: Date,
    rc: ReconcileContext,
  ): Promise<OwedEvent[]> {
    const external = usesExternalRemediation(mhc);
    const conditions = machine.status?.conditions;
    let decision: MachineHealthDecision;
    let remediationRequested = false;
    if (verdict.state === 'healthy') {
      decision = {
        healthCheck: {
          type: ConditionType.HealthCheckSucceeded,
          status: ConditionStatus.True,
          reason: ConditionReason.HealthCheckSucceeded,
        },
      };
      if (external && getCondition(conditions, ConditionType.ExternallyRemediated)) {
        await cancelExternalRemediation(this.workload.templates, mhc, machine);
      }
    } else {
      const healthCheck = {
        type: ConditionType.HealthCheckSucceeded,
        status: ConditionStatus.False,
        reason: verdict.reason,
        message: verdict.message,
      };
      if (!remediationAllowed) decision = { healthCheck, keepRemediation: true };
      else if (external) {
        const request = await requestExternalRemediation(this.workload.templates, mhc, machine, rc.log);
        remediationRequested = request.created;
        decision = { healthCheck, externallyRemediated: request.condition, keepRemediation: true };
      } else {
        const owner = getCondition(conditions, ConditionType.OwnerRemediated);
        remediationRequested = !owner || owner.status === ConditionStatus.True;
        decision = { healthCheck, requestOwnerRemediation: true };
      }
    }
    const desired = desiredHealthConditions(machine, decision, now);
    if (!healthConditionsChanged(machine, desired)) return [];

    const becameUnhealthy =
      verdict.state === 'unhealthy' &&
      getCondition(conditions, ConditionType.HealthCheckSucceeded)?.status !== ConditionStatus.False;
    const written = await this.machineConditions.write(machine, (draft) => {
      draft.status = { ...draft.status, conditions: withHealthConditions(draft, desired) };
    });
    if (!written) return [];
    if (verdict.state === 'healthy') return [];
    if (becameUnhealthy) {
      rc.log.info({ machine: machine.metadata.name, reason: verdict.reason }, 'machine marked unhealthy');
      void this.recorder.event(machine, {
        type: 'Normal',
        reason: 'MachineMarkedUnhealthy',
        action: 'HealthCheck',
        note: `Machine ${machine.metadata.name} has been marked as unhealthy by ${mhc.metadata.name}: ${verdict.message}`,
        related: mhc,
      });
    }
    const events: OwedEvent[] = [];
    const data = { ...eventData(written, mhc), reason: verdict.reason };
    if (becameUnhealthy)
      events.push({ name: 'machine.unhealthy', data: { ...data, message: verdict.message } });
    if (remediationRequested) events.push({ name: 'machine.remediated', data });
    return events;
  }
}

function remediationAllowed() {
  return {
    type: ConditionType.RemediationAllowed,
    status: ConditionStatus.True,
    reason: ConditionReason.RemediationAllowed,
  };
}

function remediationNotAllowed(reason: string, message: string) {
  return { type: ConditionType.RemediationAllowed, status: ConditionStatus.False, reason, message };
}

function eventData(machine: Machine, mhc: MachineHealthCheck) {
  return {
    ...eventDataBase(machine, RESOURCES.Machine, machine.spec.clusterName),
    phase: machine.status?.phase ?? 'Pending',
    controlPlane: Object.hasOwn(machine.metadata.labels ?? {}, LABELS.controlPlane),
    machineHealthCheck: mhc.metadata.name!,
  };
}
