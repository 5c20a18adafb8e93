import {
  ANNOTATIONS,
  ConditionReason,
  ConditionStatus,
  ConditionType,
  FINALIZERS,
  isFalse,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import {
  addFinalizer,
  getControllerOf,
  hasFinalizer,
  isBeingDeleted,
  isConflict,
  isNotFound,
  removeFinalizer,
  type EventRecorder,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import { setMachineCondition } from './machine-condition-patch.js';
import { ProviderKindError } from '../../external/provider-kinds.js';
import { selectorMatches } from './label-selector.js';
import { isDeleting } from './machine-state.js';
import { inPlacePatch } from './machineset.machines.js';
import {
  deleteIfPresent,
  ensureClusterLabelAndOwner,
  ownerReferenceTo,
  requeueOnConflict,
  writePausedCondition,
  writeStatusIfChanged,
} from './object-writes.js';
import { remediateMachines } from './machineset.remediation.js';
import { scaleDown, scaleUp, type ScaleDeps } from './machineset.scale.js';
import { computeMachineSetStatus, desiredReplicas } from './machineset.status.js';
import { isPaused } from './paused.js';
import { controlledBy, ORPHANS_BY_NAMESPACE, type WorkloadContext } from './workload-context.js';

/** Templates are not watched: a missing one is looked for again after this long. */
const MISSING_TEMPLATE_RETRY_MS = 10_000;

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
 * Machines before its finalizer goes.
 */
export class MachineSetReconciler {
  private readonly machineSetsApi: ResourceClient<MachineSet>;
  private readonly machinesApi: ResourceClient<Machine>;

  constructor(
    private readonly workload: WorkloadContext,
    private readonly recorder: EventRecorder,
  ) {
    this.machineSetsApi = workload.client.resource<MachineSet>(RESOURCES.MachineSet);
    this.machinesApi = workload.client.resource<Machine>(RESOURCES.Machine);
  }

  readonly reconcile = (key: string, rc: ReconcileContext): Promise<ReconcileResult | void> =>
    requeueOnConflict(rc, () => this.reconcileSet(key, rc));

  private async reconcileSet(key: string, rc: ReconcileContext): Promise<ReconcileResult | void> {
    const cached = this.workload.machineSets.get(key);
    if (!cached) return;
    let machineSet = cached;
    const cluster = this.workload.clusters.getByName(
      machineSet.metadata.namespace,
      machineSet.spec.clusterName,
    );
    if (isPaused(cluster, machineSet)) {
      await writePausedCondition(this.machineSetsApi, machineSet, cluster, this.workload.now());
      return;
    }
    const deleting = isBeingDeleted(machineSet);
    if (!deleting) {
      if (!hasFinalizer(machineSet, FINALIZERS.machineSet)) {
        machineSet = await addFinalizer(this.machineSetsApi, machineSet, FINALIZERS.machineSet);
      }
      // A set no MachineDeployment controls is owned by its Cluster (upstream reconcileMachineSetOwnerAndLabels).
      const standAlone =
        !(machineSet.metadata.ownerReferences ?? []).some(
          (o) => o.kind === RESOURCES.MachineDeployment.kind,
        ) && !machineSet.metadata.labels?.[LABELS.deploymentName];
      machineSet = await ensureClusterLabelAndOwner(
        this.machineSetsApi,
        machineSet,
        machineSet.spec.clusterName,
        cluster,
        standAlone,
      );
    }
    const machines = await this.adoptAndList(machineSet, rc);
    if (deleting) {
      await this.reconcileDelete(machineSet, cluster, machines, rc);
      return;
    }

    const deployment = owningDeployment(this.workload, machineSet);
    const current = deployment ? isCurrentRevision(machineSet, deployment) : true;
    const now = this.workload.now();
    await remediateMachines(
      { machinesApi: this.machinesApi, recorder: this.recorder, log: rc.log, now },
      machineSet,
      deployment,
      current,
      machines,
    );
    await this.syncMachines(machineSet, machines);
    if (deployment) await this.setUpToDate(machines, deployment, current, now);

    const scale: ScaleDeps = {
      workload: this.workload,
      machinesApi: this.machinesApi,
      recorder: this.recorder,
      log: rc.log,
      signal: rc.signal,
    };
    const missing = desiredReplicas(machineSet) - machines.length;
    let blockedBy = missing > 0 ? this.scaleUpBlocker(machineSet, cluster, deployment, current) : undefined;
    let result: ReconcileResult | undefined;
    if (missing > 0 && !blockedBy) {
      try {
        await scaleUp(scale, machineSet, missing);
      } catch (err) {
        if (!isNotFound(err) && !(err instanceof ProviderKindError)) throw err;
        blockedBy = `a template does not exist: ${err instanceof Error ? err.message : String(err)}`;
        rc.log.info({ reason: blockedBy }, 'cannot scale up');
        result = { requeueAfter: MISSING_TEMPLATE_RETRY_MS };
      }
    } else if (missing < 0) {
      await scaleDown(scale, machineSet, machines, -missing);
    }

    const isUpToDate = deployment
      ? () => current
      : (machine: Machine) => !isFalse(machine.status?.conditions, ConditionType.UpToDate);
    await writeStatusIfChanged(
      this.machineSetsApi,
      machineSet,
      computeMachineSetStatus({
        machineSet,
        cluster,
        machines: controlledBy(this.workload.machines, machineSet),
        isUpToDate,
        scaleUpBlockedBy: blockedBy,
        now,
      }),
    );
    return result;
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

  /** In-place propagation of template labels, annotations and the fields that need no new Machine. */
  private async syncMachines(machineSet: MachineSet, machines: readonly Machine[]): Promise<void> {
    for (const machine of machines) {
      if (isDeleting(machine)) continue;
      const patch = inPlacePatch(machineSet, machine);
      if (!patch) continue;
      await this.machinesApi
        .mergePatch({ namespace: machine.metadata.namespace, name: machine.metadata.name! }, patch)
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
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
      await setMachineCondition(this.machinesApi, machine, condition, now).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }

  private async reconcileDelete(
    machineSet: MachineSet,
    cluster: Cluster | undefined,
    machines: readonly Machine[],
    rc: ReconcileContext,
  ): Promise<void> {
    for (const machine of machines) {
      if (isDeleting(machine)) continue;
      await deleteIfPresent(this.machinesApi, machine);
      rc.log.info({ machine: machine.metadata.name }, 'deleting machine (MachineSet deleted)');
    }
    if (machines.length > 0) {
      await writeStatusIfChanged(
        this.machineSetsApi,
        machineSet,
        computeMachineSetStatus({
          machineSet,
          cluster,
          machines,
          isUpToDate: () => false,
          now: this.workload.now(),
        }),
      );
      return;
    }
    if (hasFinalizer(machineSet, FINALIZERS.machineSet)) {
      await removeFinalizer(this.machineSetsApi, machineSet, FINALIZERS.machineSet).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }
}
