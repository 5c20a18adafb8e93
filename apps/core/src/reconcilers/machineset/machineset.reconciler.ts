import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  isFalse,
  LABELS,
  RESOURCES,
  updateInProgress,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import {
  formatLabelValue,
  getControllerOf,
  isBeingDeleted,
  isConflict,
  isNotFound,
  type EventRecorder,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import {
  OrphanedClones,
  type DeletionResult,
  type ReconcilerParts,
  type ReconcileScope,
} from '@capstan/provider-kit';
import { ProviderKindError } from '@capstan/provider-kit';
import { selectorMatches } from '../shared/label-selector.js';
import { cloneKindOf } from '../shared/template-cloner.js';
import {
  MachineConditionWriter,
  MachineCreationError,
  setMachineCondition,
  StrandedMachines,
} from '@capstan/provider-kit';
import { MACHINE_SUMMARY_CONDITIONS } from '../shared/machine-conditions.js';
import { isDeleting } from '../shared/machine-state.js';
import { deleteIfPresent, ownerReferenceTo, setClusterLabelAndOwner } from '../shared/ownership.js';
import {
  clusterOf,
  controlledBy,
  ORPHANS_BY_NAMESPACE,
  type WorkloadContext,
} from '../shared/workload-context.js';
import { inPlacePatch, isMovingMachines } from './machineset.machines.js';
import { remediateMachines } from './machineset.remediation.js';
import { creationStageOf, scaleDown, scaleUp, type ScaleDeps } from './machineset.scale.js';
import { computeMachineSetStatus, desiredReplicas, type MachineSetObservation } from './machineset.status.js';
import { type MachineCreationFailure } from './machineset.v1beta1-status.js';

/** Templates are not watched: a missing one is looked for again after this long. */
const MISSING_TEMPLATE_RETRY_MS = 10_000;

/** The conditions of a MachineSet this controller writes (the reconciler kit adds Paused and ReconcileSucceeded). */
export const MACHINE_SET_CONDITIONS = MACHINE_SUMMARY_CONDITIONS;

/** The conditions a MachineSet writes on its Machines; the others are the Machine controller's and health checks'. */
export const MACHINE_SET_MACHINE_CONDITIONS = [
  ConditionType.UpToDate,
  ConditionType.OwnerRemediated,
] as const;

/** The MachineDeployment controlling a MachineSet, when there is one in the cache. */
export function owningDeployment(
  workload: WorkloadContext,
  machineSet: MachineSet,
): MachineDeployment | undefined {
  const owner = getControllerOf(machineSet);
  if (owner?.kind !== RESOURCES.MachineDeployment.kind) return undefined;
  const deployment = workload.machineDeployments.getByName(machineSet.metadata.namespace, owner.name);
  return deployment?.metadata.uid === owner.uid ? deployment : undefined;
}

/** The set is the deployment's current revision (upstream isCurrentMachineSet). */
export function isCurrentRevision(machineSet: MachineSet, deployment: MachineDeployment): boolean {
  const revision = deployment.metadata.annotations?.[ANNOTATIONS.revision];
  return revision !== undefined && revision === machineSet.metadata.annotations?.[ANNOTATIONS.revision];
}

/**
 * Keeps a MachineSet's Machines at `spec.replicas` (upstream machineset_controller.go): adopts orphans its
 * selector matches, deletes Machines a health check asked it to remediate, carries in-place changes to its
 * Machines, creates or deletes Machines, and reports counters and conditions. Deleting the set deletes its
 * Machines before its finalizer goes. Runs in the reconciler kit, which handles pausing, the finalizer, the
 * write of the set and conflicts.
 */
export class MachineSetReconciler implements ReconcilerParts<MachineSet> {
  private readonly machinesApi: ResourceClient<Machine>;
  private readonly machineConditions: MachineConditionWriter;
  private readonly orphanedClones: OrphanedClones;
  private readonly strandedMachines: StrandedMachines;
  readonly now: () => Date;

  constructor(
    private readonly workload: WorkloadContext,
    private readonly recorder: EventRecorder,
    /** How old a Machine must be before it is judged stranded (STRANDED_MACHINE_GRACE_MS by default). */
    strandedGraceMs?: number,
  ) {
    this.machinesApi = workload.client.resource<Machine>(RESOURCES.Machine);
    this.machineConditions = new MachineConditionWriter(this.machinesApi, MACHINE_SET_MACHINE_CONDITIONS);
    this.orphanedClones = new OrphanedClones({
      client: workload.client,
      machines: workload.machines,
      machinesApi: this.machinesApi,
      recorder,
    });
    this.strandedMachines = new StrandedMachines({
      client: workload.client,
      machinesApi: this.machinesApi,
      resolve: (apiGroup, kind) => workload.templates.resolve(apiGroup, kind),
      recorder,
      ...(strandedGraceMs !== undefined && { graceMs: strandedGraceMs }),
    });
    this.now = workload.now;
  }

  clusterOf(machineSet: MachineSet): Cluster | undefined {
    return clusterOf(this.workload, machineSet);
  }

  async reconcileNormal(scope: ReconcileScope<MachineSet>): Promise<ReconcileResult | undefined> {
    const { rc } = scope;
    const cluster = clusterOf(this.workload, scope.obj);
    // A set no MachineDeployment controls is owned by its Cluster (upstream reconcileMachineSetOwnerAndLabels).
    const standAlone =
      !(scope.obj.metadata.ownerReferences ?? []).some((o) => o.kind === RESOURCES.MachineDeployment.kind) &&
      !scope.obj.metadata.labels?.[LABELS.deploymentName];
    setClusterLabelAndOwner(scope.obj, scope.obj.spec.clusterName, cluster, standAlone);
    // The finalizer is written before the first Machine it guards is created.
    const machineSet = await scope.patchNow();
    if (cluster) {
      const template = machineSet.spec.template.spec;
      await this.workload.templateOwnership.ensure(cluster, machineSet.metadata.namespace!, [
        template.bootstrap.configRef,
        template.infrastructureRef,
      ]);
    }
    const machines = await this.adoptAndList(machineSet, rc);
    this.orphanedClones.notice(machineSet, this.workload.now());
    // Replaced ones stay counted while they are deleted: the next reconcile creates their successors.
    const stranded = await this.strandedMachines.scan(machines, this.workload.now(), rc.log);
    for (const machine of stranded.stranded) await this.strandedMachines.replace(machineSet, machine, rc.log);

    const deployment = owningDeployment(this.workload, machineSet);
    const current = deployment ? isCurrentRevision(machineSet, deployment) : true;
    const now = this.workload.now();
    await remediateMachines(
      {
        machinesApi: this.machinesApi,
        machineConditions: this.machineConditions,
        recorder: this.recorder,
        log: rc.log,
        now,
      },
      machineSet,
      deployment,
      current,
      machines,
    );
    const synced = await this.syncMachines(machineSet, machines);
    if (deployment) await this.setUpToDate(synced, deployment, current, now);

    const scale: ScaleDeps = {
      workload: this.workload,
      machinesApi: this.machinesApi,
      recorder: this.recorder,
      log: rc.log,
      signal: rc.signal,
    };
    // While its MachineDeployment moves a Machine in or out (in place), the count is the deployment's to settle.
    const moving = isMovingMachines(this.workload.machines, machineSet, machines);
    const missing = moving ? 0 : desiredReplicas(machineSet) - machines.length;
    let blockedBy = missing > 0 ? this.scaleUpBlocker(machineSet, cluster, deployment, current) : undefined;
    let creationFailure: MachineCreationFailure | undefined;
    let result: ReconcileResult | undefined;
    if (missing > 0 && !blockedBy) {
      this.orphanedClones.expect(machineSet, now);
      try {
        await scaleUp(scale, machineSet, missing);
      } catch (err) {
        // A missing template or provider kind fails the unit at a clone: the set reports it and waits.
        const cause = err instanceof MachineCreationError && err.stage === 'clone' ? err.cause : err;
        if (!isNotFound(cause) && !(cause instanceof ProviderKindError)) throw err;
        const message = cause instanceof Error ? cause.message : String(cause);
        creationFailure = { stage: creationStageOf(err), message };
        blockedBy = `a template does not exist: ${message}`;
        rc.log.info({ reason: blockedBy }, 'cannot scale up');
        result = { requeueAfter: MISSING_TEMPLATE_RETRY_MS };
      }
    } else if (missing < 0) {
      await scaleDown(scale, machineSet, machines, -missing);
    }

    const isUpToDate = deployment
      ? (machine: Machine) => current && !updateInProgress(machine.metadata.annotations)
      : (machine: Machine) => !isFalse(machine.status?.conditions, ConditionType.UpToDate);
    setStatus(machineSet, {
      machineSet,
      cluster,
      machines: controlledBy(this.workload.machines, machineSet),
      isUpToDate,
      scaleUpBlockedBy: blockedBy,
      creationFailure,
      now,
    });
    const sweepInMs = await this.sweepOrphanedClones(machineSet, now, rc);
    const waits = [sweepInMs, stranded.recheckInMs, result?.requeueAfter].filter((ms) => ms !== undefined);
    return waits.length === 0 ? result : { ...result, requeueAfter: Math.min(...waits) };
  }

  /** Deletes clones a failed or cut-off scale-up left. */
  private async sweepOrphanedClones(
    machineSet: MachineSet,
    now: Date,
    rc: ReconcileContext,
  ): Promise<number | undefined> {
    const template = machineSet.spec.template.spec;
    const locate = async () => ({
      types: await Promise.all(
        [template.bootstrap.configRef, template.infrastructureRef]
          .filter((ref) => ref !== undefined)
          .map((ref) => this.workload.templates.resolve(ref.apiGroup, cloneKindOf(ref.kind))),
      ),
      labelSelector: `${LABELS.clusterName}=${machineSet.spec.clusterName},${LABELS.setName}=${formatLabelValue(machineSet.metadata.name!)}`,
    });
    return this.orphanedClones.sweepOrRetryLater(machineSet, locate, now, rc.log);
  }

  private scaleUpBlocker(
    machineSet: MachineSet,
    cluster: Cluster | undefined,
    deployment: MachineDeployment | undefined,
    current: boolean,
  ): string | undefined {
    if (!cluster) return `Cluster ${machineSet.spec.clusterName} does not exist`;
    // A set must not grow while its cluster is torn down (upstream #9629).
    if (isBeingDeleted(cluster)) return `Cluster ${cluster.metadata.name} is being deleted`;
    if (Object.hasOwn(machineSet.metadata.annotations ?? {}, ANNOTATIONS.disableMachineCreate)) {
      return `the ${ANNOTATIONS.disableMachineCreate} annotation is set`;
    }
    // Machines of an old revision are replaced by the current one; a deleted one is not brought back.
    if (deployment && !current) {
      return `MachineSet is not the current revision of MachineDeployment ${deployment.metadata.name}`;
    }
    return undefined;
  }

  /**
   * The set's Machines: those it controls, plus orphans of its cluster that its selector matches, which it adopts
   * (upstream getAndAdoptMachinesForMachineSet). Deleting Machines count, so nothing is replaced before it is gone.
   */
  private async adoptAndList(machineSet: MachineSet, rc: ReconcileContext): Promise<Machine[]> {
    const machines = controlledBy(this.workload.machines, machineSet);
    for (const machine of this.workload.machines.byIndex(
      ORPHANS_BY_NAMESPACE,
      machineSet.metadata.namespace ?? '',
    )) {
      if (machine.spec.clusterName !== machineSet.spec.clusterName) continue;
      if (!selectorMatches(machineSet.spec.selector, machine.metadata.labels)) continue;
      if (isDeleting(machine)) continue;
      try {
        const adopted = await this.machinesApi.mergePatch(
          { namespace: machine.metadata.namespace, name: machine.metadata.name! },
          {
            metadata: {
              resourceVersion: machine.metadata.resourceVersion,
              ownerReferences: [
                ...(machine.metadata.ownerReferences ?? []),
                ownerReferenceTo(machineSet, RESOURCES.MachineSet, true),
              ],
            },
          },
        );
        machines.push(adopted);
        rc.log.info({ machine: machine.metadata.name }, 'adopted machine');
        void this.recorder.event(machineSet, {
          type: 'Normal',
          reason: 'SuccessfulAdopt',
          action: 'Adopt',
          note: `Adopted Machine ${machine.metadata.name}`,
          related: machine,
        });
      } catch (err) {
        // Changed meanwhile (maybe adopted by another set): the next reconcile looks again.
        if (!isConflict(err) && !isNotFound(err)) throw err;
        rc.log.info({ machine: machine.metadata.name }, 'machine changed while being adopted');
      }
    }
    return machines;
  }

  /**
   * In-place propagation of template labels, annotations and the fields that need no new Machine. Returns the
   * Machines as they are now, so the condition writes that follow start from the versions just written.
   */
  private async syncMachines(machineSet: MachineSet, machines: readonly Machine[]): Promise<Machine[]> {
    const synced: Machine[] = [];
    for (const machine of machines) {
      const patch = isDeleting(machine) ? undefined : inPlacePatch(machineSet, machine);
      if (!patch) {
        synced.push(machine);
        continue;
      }
      const written = await this.machinesApi
        .mergePatch({ namespace: machine.metadata.namespace, name: machine.metadata.name! }, patch)
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
          return undefined;
        });
      if (written) synced.push(written);
    }
    return synced;
  }

  /**
   * The Machines of a deployment's set are up to date while the set is the deployment's current revision (upstream
   * MachineSet sets the Machine UpToDate condition; the Machine controller leaves it alone).
   */
  private async setUpToDate(
    machines: readonly Machine[],
    deployment: MachineDeployment,
    current: boolean,
    now: Date,
  ): Promise<void> {
    const condition = current
      ? { type: ConditionType.UpToDate, status: ConditionStatus.True, reason: ConditionReason.UpToDate }
      : {
          type: ConditionType.UpToDate,
          status: ConditionStatus.False,
          reason: ConditionReason.NotUpToDate,
          message: `* MachineDeployment ${deployment.metadata.name} rolls out a newer template`,
        };
    for (const machine of machines) {
      const target = updateInProgress(machine.metadata.annotations);
      const updating = {
        type: ConditionType.UpToDate,
        status: ConditionStatus.False,
        reason: ConditionReason.Updating,
        message: `* Updating in place to template ${target}`,
      };
      await this.machineConditions.write(machine, (draft) =>
        setMachineCondition(draft, current && target ? updating : condition, now),
      );
    }
  }

  /** Deletes the set's Machines; the kit removes the finalizer once none is left. */
  async reconcileDelete(scope: ReconcileScope<MachineSet>): Promise<DeletionResult> {
    const machineSet = scope.obj;
    // Its clones go with it (owner references): nothing is left to sweep.
    this.orphanedClones.forget(machineSet.metadata.uid);
    const machines = await this.adoptAndList(machineSet, scope.rc);
    for (const machine of machines) {
      if (isDeleting(machine)) continue;
      await deleteIfPresent(this.machinesApi, machine);
      scope.rc.log.info({ machine: machine.metadata.name }, 'deleting machine (MachineSet deleted)');
    }
    if (machines.length === 0) return { done: true };
    setStatus(machineSet, {
      machineSet,
      cluster: clusterOf(this.workload, machineSet),
      machines,
      isUpToDate: () => false,
      now: this.workload.now(),
    });
    return { done: false };
  }
}

/** The set's status as observed, for the current generation. */
function setStatus(machineSet: MachineSet, observation: MachineSetObservation): void {
  machineSet.status = {
    ...computeMachineSetStatus(observation),
    observedGeneration: machineSet.metadata.generation,
  };
}
