import { type KubernetesObject } from '@kubernetes/client-node';
import {
  ConditionReason,
  RESOURCES,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { isNotFound, type KubeClient, type ResourceType } from '@capstan/kube';
import { type ExternalObjects, type ExternalRead } from '../../external/external-objects.js';
import { OK_TO_DELETE_ANNOTATION } from '../topology/topology-hooks.js';
import { isControlPlaneMachine } from './cluster.status.js';

/** The Deleting reason while the BeforeClusterDelete hook holds a topology Cluster (upstream's). */
export const WAITING_FOR_BEFORE_DELETE_HOOK = 'WaitingForBeforeDeleteHook';

export interface ClusterDeletionState {
  cluster: Cluster;
  machines: Machine[];
  machineSets: MachineSet[];
  machineDeployments: MachineDeployment[];
  infrastructure?: ExternalRead;
  controlPlane?: ExternalRead;
}

export interface DeletionStep {
  /** The Deleting condition's reason for this step. */
  reason: string;
  message: string;
  /** Everything is gone: the finalizer can go. */
  done: boolean;
  /** The step waits for provider objects, whose going not every provider announces: look again soon (in the cache). */
  pollExternal?: boolean;
}

const names = (objects: KubernetesObject[]) => {
  const list = objects.map((o) => o.metadata?.name ?? '?').sort();
  return list.slice(0, 5).join(', ') + (list.length > 5 ? `, ... (${list.length} in all)` : '');
};

/**
 * One step of tearing a Cluster down, in upstream's order: MachineDeployments, then MachineSets, then worker
 * Machines, then the control plane (its object, or its Machines when there is none), then the infrastructure
 * cluster. Each step asks for the deletion of what is left at its stage and reports what it waits for.
 */
export async function nextDeletionStep(
  state: ClusterDeletionState,
  deps: { client: KubeClient; external: ExternalObjects },
): Promise<DeletionStep> {
  const namespace = state.cluster.metadata!.namespace!;
  const deleteAll = async (type: ResourceType, objects: KubernetesObject[]) => {
    for (const obj of objects) {
      if (obj.metadata?.deletionTimestamp) continue;
      await deps.client
        .resource(type)
        .delete({ namespace, name: obj.metadata!.name! })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
  };

  // A topology Cluster waits for the topology controller's BeforeClusterDelete hook to let it go (upstream's
  // ok-to-delete annotation; set at once when no extension has a handler).
  if (
    state.cluster.spec?.topology &&
    state.cluster.metadata?.annotations?.[OK_TO_DELETE_ANNOTATION] === undefined
  ) {
    return {
      reason: WAITING_FOR_BEFORE_DELETE_HOOK,
      message: 'Waiting for the BeforeClusterDelete hook to allow the deletion',
      done: false,
    };
  }
  if (state.machineDeployments.length > 0) {
    await deleteAll(RESOURCES.MachineDeployment, state.machineDeployments);
    return waitingForWorkers(`MachineDeployments ${names(state.machineDeployments)} are being deleted`);
  }
  if (state.machineSets.length > 0) {
    await deleteAll(RESOURCES.MachineSet, state.machineSets);
    return waitingForWorkers(`MachineSets ${names(state.machineSets)} are being deleted`);
  }
  const workers = state.machines.filter((m) => !isControlPlaneMachine(m));
  if (workers.length > 0) {
    await deleteAll(RESOURCES.Machine, workers);
    return waitingForWorkers(`Worker Machines ${names(workers)} are being deleted`);
  }

  const controlPlaneRef = state.cluster.spec?.controlPlaneRef;
  if (controlPlaneRef) {
    if (await deleteReferenced(deps.external, namespace, controlPlaneRef, state.controlPlane)) {
      return {
        reason: ConditionReason.WaitingForControlPlaneDeletion,
        message: `${controlPlaneRef.kind} ${controlPlaneRef.name} is being deleted`,
        done: false,
        pollExternal: true,
      };
    }
  } else {
    const controlPlaneMachines = state.machines.filter(isControlPlaneMachine);
    if (controlPlaneMachines.length > 0) {
      await deleteAll(RESOURCES.Machine, controlPlaneMachines);
      return {
        reason: ConditionReason.WaitingForControlPlaneDeletion,
        message: `Control plane Machines ${names(controlPlaneMachines)} are being deleted`,
        done: false,
      };
    }
  }

  const infrastructureRef = state.cluster.spec?.infrastructureRef;
  if (
    infrastructureRef &&
    (await deleteReferenced(deps.external, namespace, infrastructureRef, state.infrastructure))
  ) {
    return {
      reason: ConditionReason.WaitingForInfrastructureDeletion,
      message: `${infrastructureRef.kind} ${infrastructureRef.name} is being deleted`,
      done: false,
      pollExternal: true,
    };
  }
  return { reason: ConditionReason.DeletionCompleted, message: '', done: true };
}

function waitingForWorkers(message: string): DeletionStep {
  return { reason: ConditionReason.WaitingForWorkersDeletion, message, done: false };
}

/** Deletes the referenced object if it exists; true while it still exists. A kind no CRD serves has nothing to delete. */
async function deleteReferenced(
  external: ExternalObjects,
  namespace: string,
  ref: ContractVersionedObjectReference,
  read: ExternalRead | undefined,
): Promise<boolean> {
  if (!read || read.state !== 'found') return false;
  return external.deleteAndCheck(namespace, ref);
}
