import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  LABELS,
  RESOURCES,
  getCondition,
  type Machine,
  type MachineHealthCheck,
  type MachineHealthCheckStatus,
} from '@capstan/api';
import {
  BY_CLUSTER_NAME,
  clusterIndexValue,
  isNotFound,
  type EventRecorder,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import type { LifecycleEvent, LifecyclePublisher } from '../../handoff/lifecycle-publisher.js';
import {
  WorkloadClusterUnavailableError,
  type WorkloadClusterAccess,
  type WorkloadClusters,
} from '../../remote/workload-clusters.js';
import { selectorMatches } from '../machineset/label-selector.js';
import { withConditions } from '../machineset/machine-conditions.js';
import {
  ensureClusterLabelAndOwner,
  requeueOnConflict,
  writePausedCondition,
  writeStatusIfChanged,
} from '../machineset/object-writes.js';
import { isPaused, pausedCondition } from '../machineset/paused.js';
import type { WorkloadContext } from '../machineset/workload-context.js';
import {
  evaluateTarget,
  skipsHealthCheck,
  type HealthCheckTarget,
  type HealthVerdict,
} from './health-check.js';
import {
  MHC_FIELD_MANAGER,
  desiredHealthConditions,
  healthConditionsChanged,
  type MachineHealthDecision,
} from './machine-health-conditions.js';
import {
  cancelExternalRemediation,
  requestExternalRemediation,
  usesExternalRemediation,
} from './machinehealthcheck.remediation.js';
import { remediationAllowance } from './remediation-allowance.js';

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

/**
 * Finds unhealthy Machines and has them remediated (upstream machinehealthcheck_controller.go): judges each
 * selected Machine by its Node's conditions, its startup time and the remediate-machine annotation, writes
 * HealthCheckSucceeded on it, and unless too many are unhealthy asks the owner to remediate (OwnerRemediated) or
 * creates an external remediation request. Requeues itself for the earliest timeout still running.
 */
export class MachineHealthCheckReconciler {
  private readonly mhcApi: ResourceClient<MachineHealthCheck>;
  private readonly machinesApi: ResourceClient<Machine>;

  constructor(
    private readonly workload: WorkloadContext,
    private readonly workloadClusters: WorkloadClusters,
    private readonly lifecycle: LifecyclePublisher,
    private readonly recorder: EventRecorder,
  ) {
    this.mhcApi = workload.client.resource<MachineHealthCheck>(RESOURCES.MachineHealthCheck);
    this.machinesApi = workload.client.resource<Machine>(RESOURCES.Machine);
  }

  readonly reconcile = (key: string, rc: ReconcileContext): Promise<ReconcileResult | void> =>
    requeueOnConflict(rc, () => this.reconcileCheck(key, rc));

  private async reconcileCheck(key: string, rc: ReconcileContext): Promise<ReconcileResult | void> {
    await this.lifecycle.flush(key);
    const cached = this.workload.machineHealthChecks.get(key);
    if (!cached) return;
    let mhc = cached;
    const namespace = mhc.metadata.namespace!;
    const cluster = this.workload.clusters.getByName(namespace, mhc.spec.clusterName);
    if (!cluster) {
      rc.log.info({ cluster: mhc.spec.clusterName }, 'cluster not found: waiting for it');
      return;
    }
    if (isPaused(cluster, mhc)) {
      await writePausedCondition(this.mhcApi, mhc, cluster, this.workload.now());
      return;
    }
    mhc = await ensureClusterLabelAndOwner(this.mhcApi, mhc, mhc.spec.clusterName, cluster, true);

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
    const allowance = remediationAllowance(
      mhc.spec.remediation?.triggerIf,
      targets.length,
      targets.length - healthy,
    );
    if (!allowance.allowed && unhealthy.length > 0) {
      void this.recorder.event(mhc, {
        type: 'Warning',
        reason: 'RemediationRestricted',
        action: 'Remediate',
        note: allowance.message,
      });
    }

    const events: LifecycleEvent[] = [];
    for (const { machine, verdict } of judged) {
      if (verdict.state === 'pending') continue;
      events.push(...(await this.writeMachine(mhc, machine, verdict, allowance.allowed, now, rc)));
    }

    const status: MachineHealthCheckStatus = {
      ...mhc.status,
      expectedMachines: targets.length,
      currentHealthy: healthy,
      remediationsAllowed: allowance.allowed ? allowance.remaining : 0,
      targets: targets.map((m) => m.metadata.name!),
      conditions: withConditions(
        mhc.status?.conditions,
        [pausedCondition(cluster, mhc), remediationAllowedCondition(allowance.allowed, allowance.message)],
        mhc.metadata.generation,
        now,
      ),
    };
    await writeStatusIfChanged(this.mhcApi, mhc, status);
    await this.lifecycle.publish(key, events);

    const nextChecks = judged.flatMap((j) =>
      'nextCheckMs' in j.verdict && j.verdict.nextCheckMs ? [j.verdict.nextCheckMs] : [],
    );
    // Short-circuited health checks look again soon: a Machine may recover, or the limit allow remediation.
    if (!allowance.allowed && unhealthy.length > 0) nextChecks.push(UNREACHABLE_RETRY_MS);
    if (nextChecks.length > 0) return { requeueAfter: Math.max(1000, Math.min(...nextChecks)) };
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
  ): Promise<LifecycleEvent[]> {
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
    let written: Machine;
    try {
      written = await this.machinesApi.applyStatus(
        {
          apiVersion: RESOURCES.Machine.apiVersion,
          kind: RESOURCES.Machine.kind,
          metadata: { name: machine.metadata.name, namespace: machine.metadata.namespace },
          status: { conditions: desired },
        } as Machine,
        { fieldManager: MHC_FIELD_MANAGER },
      );
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
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
    const events: LifecycleEvent[] = [];
    const data = { ...eventData(written, mhc), reason: verdict.reason };
    if (becameUnhealthy)
      events.push({ name: 'machine.unhealthy', data: { ...data, message: verdict.message } });
    if (remediationRequested) events.push({ name: 'machine.remediated', data });
    return events;
  }
}

function remediationAllowedCondition(allowed: boolean, message: string | undefined) {
  return allowed
    ? {
        type: ConditionType.RemediationAllowed,
        status: ConditionStatus.True,
        reason: ConditionReason.RemediationAllowed,
      }
    : {
        type: ConditionType.RemediationAllowed,
        status: ConditionStatus.False,
        reason: ConditionReason.TooManyUnhealthy,
        message: message ?? '',
      };
}

function eventData(machine: Machine, mhc: MachineHealthCheck) {
  return {
    object: {
      apiGroup: RESOURCES.Machine.group,
      kind: RESOURCES.Machine.kind,
      namespace: machine.metadata.namespace!,
      name: machine.metadata.name!,
      uid: machine.metadata.uid!,
    },
    generation: machine.metadata.generation ?? 0,
    resourceVersion: machine.metadata.resourceVersion!,
    clusterName: machine.spec.clusterName,
    phase: machine.status?.phase ?? 'Pending',
    controlPlane: Object.hasOwn(machine.metadata.labels ?? {}, LABELS.controlPlane),
    machineHealthCheck: mhc.metadata.name!,
  };
}
