import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  setCondition,
  updateInProgress,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import {
  getControllerOf,
  isAlreadyExists,
  isBeingDeleted,
  isNotFound,
  objectKey,
  type EventRecorder,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import type { DeletionResult, ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import { waitForCache } from '../shared/cache-wait.js';
import { selectorMatches } from '../shared/label-selector.js';
import { MACHINE_SUMMARY_CONDITIONS } from '../shared/machine-conditions.js';
import { timeMs } from '../shared/machine-state.js';
import { deleteIfPresent, ownerReferenceTo, setClusterLabelAndOwner } from '../shared/ownership.js';
import {
  clusterOf,
  controlledBy,
  ORPHANS_BY_NAMESPACE,
  type WorkloadContext,
} from '../shared/workload-context.js';
import { computeMachineDeploymentStatus } from './machinedeployment.status.js';
import {
  createdAtOf,
  dueRolloutAfter,
  findCurrentMachineSet,
  machineSetName,
  machineSetPatch,
  newMachineSet,
  revisionOf,
  type SetChange,
} from './machinedeployment.sets.js';
import { ASK_RETRY_MS, InPlaceRollout, type InPlaceOutcome } from './machinedeployment.in-place.js';
import { planProportionalScale } from './proportional-scale.js';
import { resolveRolloutLimits, type RolloutLimits } from './rollout-limits.js';
import { planOnDelete, planRollingUpdate, type ScalePlan, type SetState } from './rollout-planner.js';
import { templateHash } from './template-hash.js';

/** Old MachineSets kept, scaled to zero, after a rollout (a short history to look back at). */
export const REVISION_HISTORY_LIMIT = 1;

interface Observed {
  deployment: MachineDeployment;
  cluster: Cluster | undefined;
  sets: MachineSet[];
  machinesBySet: Map<string, Machine[]>;
}

/** The conditions of a MachineDeployment this controller writes (the kit adds Paused and ReconcileSucceeded). */
export const MACHINE_DEPLOYMENT_CONDITIONS = [
  ConditionType.Available,
  ConditionType.RollingOut,
  ...MACHINE_SUMMARY_CONDITIONS,
] as const;

/**
 * Rolls a MachineDeployment's template out through MachineSets (upstream machinedeployment_controller.go): a set
 * per template revision, RollingUpdate within maxSurge/maxUnavailable or OnDelete, `rollout.after`, proportional
 * scaling without a rollout, `spec.paused`, cleanup of old sets, and status. Deleting the deployment deletes its
 * sets (and so their Machines) before its finalizer goes. Runs in the reconciler kit, which handles pausing, the
 * finalizer, the write of the deployment and conflicts.
 */
export class MachineDeploymentReconciler implements ReconcilerParts<MachineDeployment> {
  private readonly setsApi: ResourceClient<MachineSet>;
  private readonly machinesApi: ResourceClient<Machine>;
  readonly now: () => Date;

  constructor(
    private readonly workload: WorkloadContext,
    private readonly recorder: EventRecorder,
  ) {
    this.setsApi = workload.client.resource<MachineSet>(RESOURCES.MachineSet);
    this.machinesApi = workload.client.resource<Machine>(RESOURCES.Machine);
    this.now = workload.now;
  }

  clusterOf(deployment: MachineDeployment): Cluster | undefined {
    return clusterOf(this.workload, deployment);
  }

  async reconcileNormal(scope: ReconcileScope<MachineDeployment>): Promise<ReconcileResult | undefined> {
    const { rc } = scope;
    const cluster = clusterOf(this.workload, scope.obj);
    setClusterLabelAndOwner(scope.obj, scope.obj.spec.clusterName, cluster, true);
    // The finalizer is written before the first MachineSet it guards is created.
    const deployment = await scope.patchNow();
    if (cluster) {
      const template = deployment.spec.template.spec;
      await this.workload.templateOwnership.ensure(cluster, deployment.metadata.namespace!, [
        template.bootstrap.configRef,
        template.infrastructureRef,
      ]);
    }
    await this.adoptOrphanSets(deployment, rc);

    const now = this.workload.now();
    const limits = resolveRolloutLimits(deployment);
    let observed = this.observe(deployment, cluster);
    let inPlace: InPlaceOutcome | undefined;
    if (!deployment.spec.paused) {
      inPlace = await this.rollout(observed, limits, now, rc);
      observed = this.observe(deployment, cluster);
      await this.cleanUpOldSets(observed, now);
      observed = this.observe(deployment, cluster);
    }
    setStatus(observed, limits, now);
    if (inPlace) reportInPlace(deployment, inPlace);
    if (inPlace?.kind === 'waiting') return { requeueAfter: ASK_RETRY_MS };

    // A rollout.after still ahead needs a reconcile when it comes: nothing else would trigger one.
    const after = timeMs(deployment.spec.rollout?.after);
    if (after !== undefined && after > now.getTime()) return { requeueAfter: after - now.getTime() + 1000 };
    return undefined;
  }

  private observe(deployment: MachineDeployment, cluster: Cluster | undefined): Observed {
    const sets = controlledBy(this.workload.machineSets, deployment);
    const machinesBySet = new Map<string, Machine[]>(
      sets.map((ms) => [ms.metadata.uid!, controlledBy(this.workload.machines, ms)]),
    );
    return { deployment, cluster, sets, machinesBySet };
  }

  private async rollout(
    initial: Observed,
    limits: RolloutLimits,
    now: Date,
    rc: ReconcileContext,
  ): Promise<InPlaceOutcome | undefined> {
    let observed = initial;
    const inPlaceRollout = new InPlaceRollout({
      workload: this.workload,
      machinesApi: this.machinesApi,
      scaleSet: (ms, replicas) => this.updateSet(observed.deployment, ms, { replicas, limits }, rc),
      rc,
    });
    // A move a cut-off reconcile left unfinished freezes both its sets: undone first, whatever the rollout does next.
    const abandoned = await inPlaceRollout.clearAbandonedMoves(
      observed.deployment,
      findCurrentMachineSet(observed.deployment, observed.sets, now),
      observed.sets,
      observed.machinesBySet,
    );
    if (abandoned) observed = this.observe(observed.deployment, observed.cluster);
    const { deployment, sets } = observed;
    const current = findCurrentMachineSet(deployment, sets, now);
    const old = sets.filter((ms) => ms !== current);
    const stateOf = (ms: MachineSet): SetState => ({
      name: ms.metadata.name!,
      replicas: ms.spec.replicas ?? 1,
      machines: observed.machinesBySet.get(ms.metadata.uid!) ?? [],
      deletionOrder: ms.spec.deletion?.order,
      createdAt: createdAtOf(ms),
    });

    if (this.isScalingEvent(sets, limits)) {
      const plan = planProportionalScale(
        {
          replicas: limits.replicas,
          maxSurge: limits.maxSurge,
          rollingUpdate: deployment.spec.rollout?.strategy?.type !== 'OnDelete',
          currentTotal: deployment.status?.replicas ?? 0,
        },
        current && scalableOf(current),
        old.map(scalableOf),
        current !== undefined &&
          (current.spec.replicas ?? 1) === limits.replicas &&
          (current.status?.availableReplicas ?? 0) >= limits.replicas,
      );
      // Every active set records the size it now serves, which ends the scaling event.
      for (const ms of sets) {
        const target = plan.get(ms.metadata.name!);
        if (target === undefined && (ms.spec.replicas ?? 1) === 0) continue;
        await this.updateSet(deployment, ms, { replicas: target, limits }, rc);
      }
      return undefined;
    }

    const revision = Math.max(0, ...old.map(revisionOf)) + 1;
    const hash = templateHash(deployment.spec.template, dueRolloutAfter(deployment, now));

    const inPlace = deployment.spec.rollout?.inPlace ?? 'Never';
    const oldMachines = old.some((ms) => (observed.machinesBySet.get(ms.metadata.uid!) ?? []).length > 0);
    // The surge of an in-place rollout is dropped by the in-place step too, once no moved Machine is updating: it
    // picks the Machine that goes (surplusToDrop); only an in-place rollout leaves the current set above replicas.
    const surplus = current !== undefined && (current.spec.replicas ?? 1) > limits.replicas;
    if (
      inPlace !== 'Never' &&
      deployment.spec.rollout?.strategy?.type !== 'OnDelete' &&
      (oldMachines || surplus)
    ) {
      let currentSet = current ?? (await this.createSet(deployment, hash, revision, 0, limits, rc));
      if (revisionOf(currentSet) < revision) await this.updateSet(deployment, currentSet, { revision }, rc);
      currentSet = this.workload.machineSets.get(objectKey(currentSet)) ?? currentSet;
      const outcome = await inPlaceRollout.step(deployment, currentSet, old, observed.machinesBySet, limits);
      if (outcome.kind !== 'replace') {
        this.recordRevision(deployment, this.workload.machineSets.get(objectKey(currentSet)) ?? currentSet);
        return outcome;
      }
    }
    const newState: SetState = current
      ? stateOf(current)
      : { name: machineSetName(deployment, hash), replicas: 0, machines: [], createdAt: now.getTime() };
    const oldStates = old.map(stateOf);
    const plan: ScalePlan =
      deployment.spec.rollout?.strategy?.type === 'OnDelete'
        ? planOnDelete(limits, newState, oldStates)
        : planRollingUpdate(limits, newState, oldStates, now.getTime());

    let currentSet = current;
    if (!currentSet) {
      currentSet = await this.createSet(deployment, hash, revision, plan.get(newState.name) ?? 0, limits, rc);
    } else {
      // A set that was old and runs the current template again (a rollback) becomes the latest revision.
      await this.updateSet(
        deployment,
        currentSet,
        {
          replicas: plan.get(newState.name),
          ...(revisionOf(currentSet) < revision ? { revision } : {}),
          ...(plan.get(newState.name) !== currentSet.spec.replicas ? { limits } : {}),
        },
        rc,
      );
    }
    for (const ms of old) {
      const target = plan.get(ms.metadata.name!);
      await this.updateSet(
        deployment,
        ms,
        target !== ms.spec.replicas ? { replicas: target, limits } : {},
        rc,
      );
    }
    this.recordRevision(deployment, this.workload.machineSets.get(objectKey(currentSet)) ?? currentSet);
    return undefined;
  }

  /** Active sets were last sized for another spec.replicas (upstream isScalingEvent). */
  private isScalingEvent(sets: readonly MachineSet[], limits: RolloutLimits): boolean {
    return sets.some((ms) => {
      if ((ms.spec.replicas ?? 1) === 0) return false;
      const desired = ms.metadata.annotations?.[ANNOTATIONS.desiredReplicas];
      return desired !== undefined && Number(desired) !== limits.replicas;
    });
  }

  private async createSet(
    deployment: MachineDeployment,
    hash: string,
    revision: number,
    replicas: number,
    limits: RolloutLimits,
    rc: ReconcileContext,
  ): Promise<MachineSet> {
    const desired = newMachineSet(deployment, hash, revision, replicas, limits);
    try {
      const created = await this.setsApi.create(desired);
      rc.log.info({ machineSet: created.metadata.name, revision, replicas }, 'created MachineSet');
      void this.recorder.event(deployment, {
        type: 'Normal',
        reason: 'SuccessfulCreate',
        action: 'Create',
        note: `Created MachineSet ${created.metadata.name} (revision ${revision}) with ${replicas} replicas`,
        related: created,
      });
      await waitForCache(
        `MachineSet ${created.metadata.name}`,
        () => this.workload.machineSets.get(objectKey(created)) !== undefined,
        rc.signal,
      );
      return created;
    } catch (err) {
      // Created by an earlier attempt the cache did not show yet: the next reconcile finds it.
      if (isAlreadyExists(err))
        throw new Error(`MachineSet ${desired.metadata.name} exists but is not in the cache yet`, {
          cause: err,
        });
      throw err;
    }
  }

  private async updateSet(
    deployment: MachineDeployment,
    ms: MachineSet,
    change: SetChange,
    rc: ReconcileContext,
  ): Promise<void> {
    const patch = machineSetPatch(deployment, ms, change);
    if (!patch) return;
    const updated = await this.setsApi.mergePatch(
      { namespace: ms.metadata.namespace, name: ms.metadata.name! },
      patch,
    );
    if (change.replicas !== undefined && change.replicas !== ms.spec.replicas) {
      rc.log.info(
        { machineSet: ms.metadata.name, from: ms.spec.replicas, to: change.replicas },
        'scaled MachineSet',
      );
      void this.recorder.event(deployment, {
        type: 'Normal',
        reason: 'ScalingMachineSet',
        action: 'Scale',
        note: `Scaled MachineSet ${ms.metadata.name} from ${ms.spec.replicas ?? 1} to ${change.replicas} replicas`,
        related: ms,
      });
    }
    // The next step must see this one: plans are made from the cache.
    await waitForCache(
      `MachineSet ${ms.metadata.name} at resourceVersion ${updated.metadata.resourceVersion}`,
      () =>
        this.workload.machineSets.get(objectKey(ms))?.metadata.resourceVersion !==
        ms.metadata.resourceVersion,
      rc.signal,
    );
  }

  /** The deployment's revision annotation follows its current set's (written with the deployment at the end). */
  private recordRevision(deployment: MachineDeployment, current: MachineSet): void {
    const revision = current.metadata.annotations?.[ANNOTATIONS.revision];
    if (!revision || deployment.metadata.annotations?.[ANNOTATIONS.revision] === revision) return;
    deployment.metadata.annotations = {
      ...deployment.metadata.annotations,
      [ANNOTATIONS.revision]: revision,
    };
  }

  /** Old sets at zero with no Machines left, beyond the history kept, are deleted. */
  private async cleanUpOldSets(observed: Observed, now: Date): Promise<void> {
    const current = findCurrentMachineSet(observed.deployment, observed.sets, now);
    const idle = observed.sets
      .filter(
        (ms) =>
          ms !== current &&
          !isBeingDeleted(ms) &&
          (ms.spec.replicas ?? 1) === 0 &&
          (observed.machinesBySet.get(ms.metadata.uid!) ?? []).length === 0,
      )
      .sort((a, b) => revisionOf(b) - revisionOf(a));
    for (const ms of idle.slice(REVISION_HISTORY_LIMIT)) {
      await deleteIfPresent(this.setsApi, ms);
    }
  }

  /** Orphan sets the selector matches (e.g. restored from a backup) are taken back. */
  private async adoptOrphanSets(deployment: MachineDeployment, rc: ReconcileContext): Promise<void> {
    for (const ms of this.workload.machineSets.byIndex(
      ORPHANS_BY_NAMESPACE,
      deployment.metadata.namespace ?? '',
    )) {
      if (isBeingDeleted(ms) || ms.spec.clusterName !== deployment.spec.clusterName) continue;
      if (!selectorMatches(deployment.spec.selector, ms.metadata.labels)) continue;
      try {
        await this.setsApi.mergePatch(
          { namespace: ms.metadata.namespace, name: ms.metadata.name! },
          {
            metadata: {
              resourceVersion: ms.metadata.resourceVersion,
              ownerReferences: [
                ...(ms.metadata.ownerReferences ?? []),
                ownerReferenceTo(deployment, RESOURCES.MachineDeployment, true),
              ],
            },
          },
        );
        rc.log.info({ machineSet: ms.metadata.name }, 'adopted MachineSet');
      } catch (err) {
        // Changed meanwhile: the kit runs the reconcile again from the fresh cache (it may still be an orphan to
        // adopt), rather than going on without it and creating a set of the same template beside it.
        if (isNotFound(err)) continue;
        throw err;
      }
      // The rollout that follows reads the deployment's sets from the cache: it must see this one among them.
      await waitForCache(
        `MachineSet ${ms.metadata.name} adopted`,
        () => {
          const cached = this.workload.machineSets.get(objectKey(ms));
          return !cached || getControllerOf(cached)?.uid === deployment.metadata.uid;
        },
        rc.signal,
      );
    }
  }

  /** Deletes the deployment's sets; the kit removes the finalizer once none is left. */
  async reconcileDelete(scope: ReconcileScope<MachineDeployment>): Promise<DeletionResult> {
    const deployment = scope.obj;
    const observed = this.observe(deployment, clusterOf(this.workload, deployment));
    for (const ms of observed.sets) {
      if (isBeingDeleted(ms)) continue;
      await deleteIfPresent(this.setsApi, ms);
      scope.rc.log.info({ machineSet: ms.metadata.name }, 'deleting MachineSet (MachineDeployment deleted)');
    }
    if (observed.sets.length === 0) return { done: true };
    setStatus(observed, resolveRolloutLimits(deployment), this.workload.now());
    return { done: false };
  }
}

/** The deployment's status as observed, for the current generation, on the reconcile's copy. */
function setStatus(observed: Observed, limits: RolloutLimits, now: Date): void {
  const { deployment, sets, machinesBySet } = observed;
  const current = isBeingDeleted(deployment) ? undefined : findCurrentMachineSet(deployment, sets, now);
  deployment.status = {
    ...computeMachineDeploymentStatus({
      deployment,
      cluster: observed.cluster,
      machineSets: sets,
      currentMachineSet: current,
      machines: [...machinesBySet.values()].flat(),
      isUpToDate: (m) =>
        current !== undefined &&
        getControllerOf(m)?.uid === current.metadata.uid &&
        !updateInProgress(m.metadata.annotations),
      limits,
      now,
    }),
    observedGeneration: deployment.metadata.generation,
  };
}

function scalableOf(ms: MachineSet) {
  const max = Number(ms.metadata.annotations?.[ANNOTATIONS.maxReplicas]);
  return {
    name: ms.metadata.name!,
    replicas: ms.spec.replicas ?? 1,
    createdAt: createdAtOf(ms),
    ...(Number.isFinite(max) && max > 0 ? { maxReplicas: max } : {}),
  };
}

/**
 * What an in-place rollout that cannot go on says, on RollingOut: Required and blocked (naming the field), halted at
 * a failed update, or waiting for the bootstrap provider's answer.
 */
function reportInPlace(deployment: MachineDeployment, outcome: InPlaceOutcome): void {
  const message =
    outcome.kind === 'blocked' || outcome.kind === 'waiting'
      ? outcome.reason
      : outcome.kind === 'in-place' && outcome.halted
        ? `rollout halted: ${outcome.halted}`
        : undefined;
  if (!message || !deployment.status) return;
  deployment.status.conditions = setCondition(deployment.status.conditions, {
    type: ConditionType.RollingOut,
    status: ConditionStatus.True,
    reason: outcome.kind === 'blocked' ? ConditionReason.InPlaceUpdateBlocked : ConditionReason.RollingOut,
    message: `* ${message}`,
    observedGeneration: deployment.metadata.generation,
  });
}
