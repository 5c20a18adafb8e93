import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  type ConditionInput,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import {
  BY_OWNER,
  getControllerOf,
  isBeingDeleted,
  isConflict,
  isNotFound,
  type Informer,
  type ResourceClient,
} from '@capstan/kube';
import { MachineConditionWriter, setMachineCondition } from '@capstan/provider-kit';
import { CONTROL_PLANE_ANNOTATIONS } from '../planning/annotations.js';
import type { ControlPlaneMachine } from '../planning/control-plane-machine.js';
import { controlPlaneMachineFrom, timestampMs, type DesiredMachineSpec } from '../planning/machine-facts.js';
import { machineSpecHash } from '../planning/spec-hash.js';
import { desiredVersionOf } from '../planning/upgrade-hold.js';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import {
  machineTemplateFields,
  machineTemplateFieldsHash,
  TEMPLATE_FIELD_MANAGER,
} from './machine-objects.js';

/** The Machines `kcp` is the controller of, from the cache. */
export function ownedMachines(machines: Pick<Informer<Machine>, 'byIndex'>, kcp: K3sControlPlane): Machine[] {
  return machines
    .byIndex(BY_OWNER, kcp.metadata.uid!)
    .filter((m) => getControllerOf(m)?.uid === kcp.metadata.uid);
}

/** What the planner and the status know of each Machine, measured against the K3sControlPlane's spec. */
export function machineFacts(
  kcp: K3sControlPlane,
  machines: readonly Machine[],
  now: number,
): ControlPlaneMachine[] {
  const desired: DesiredMachineSpec = {
    specHash: machineSpecHash(kcp),
    version: desiredVersionOf(kcp),
    ...(kcp.spec.rollout?.after && { rolloutAfter: timestampMs(kcp.spec.rollout.after) }),
  };
  return machines.map((m) => controlPlaneMachineFrom(m, desired, now));
}

/** The Machines whose template fields (labels, annotations, deletion, readiness gates) are not the current ones. */
export function machinesWithOutdatedTemplateFields(
  kcp: K3sControlPlane,
  machines: readonly Machine[],
): Machine[] {
  const hash = machineTemplateFieldsHash(kcp);
  return machines.filter(
    (m) =>
      !isBeingDeleted(m) && m.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.templateFieldsHash] !== hash,
  );
}

/**
 * Applies changed machine template fields to the Machines in place. Server-side apply by a field manager of
 * its own (as upstream KCP syncs them): a key dropped from the template is removed from the Machine, which a
 * merge patch could not tell from a key someone else added.
 */
export async function syncTemplateFields(
  scope: ControlPlaneScope,
  machineClient: ResourceClient<Machine>,
): Promise<void> {
  const kcp = scope.kit.obj;
  for (const machine of machinesWithOutdatedTemplateFields(kcp, scope.machines)) {
    try {
      await machineClient.apply(machineTemplateFields(kcp, machine), {
        fieldManager: TEMPLATE_FIELD_MANAGER,
      });
      scope.log.info({ machine: machine.metadata.name }, 'machine template fields applied in place');
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

/** The condition a control plane owns on its Machines (as upstream's KubeadmControlPlane does). */
export const MACHINE_UP_TO_DATE = ConditionType.UpToDate;

/** `UpToDate` for one machine: True, or False naming what differs from the control plane's spec. */
export function upToDateCondition(fact: ControlPlaneMachine): ConditionInput {
  if (fact.updating) {
    return {
      type: MACHINE_UP_TO_DATE,
      status: ConditionStatus.False,
      reason: ConditionReason.Updating,
      message: `* Updating in place to ${fact.updating}`,
    };
  }
  return fact.upToDate
    ? { type: MACHINE_UP_TO_DATE, status: ConditionStatus.True, reason: ConditionReason.UpToDate }
    : {
        type: MACHINE_UP_TO_DATE,
        status: ConditionStatus.False,
        reason: ConditionReason.NotUpToDate,
        message: fact.outdatedReasons.map((r) => `* ${r}`).join('\n'),
      };
}

/**
 * Sets `UpToDate` on every live machine of the control plane, through a writer that owns only that condition: the
 * Machine controller's and a MachineHealthCheck's conditions are merged, never overwritten. A machine whose
 * condition already says so is not written.
 */
export async function syncUpToDateConditions(
  scope: ControlPlaneScope,
  machineClient: ResourceClient<Machine>,
): Promise<void> {
  const writer = new MachineConditionWriter(machineClient, [MACHINE_UP_TO_DATE]);
  const byName = new Map(scope.machines.map((m) => [m.metadata.name!, m]));
  for (const fact of scope.facts) {
    const machine = byName.get(fact.name);
    if (!machine || fact.deleting) continue;
    const condition = { ...upToDateCondition(fact), observedGeneration: machine.metadata.generation };
    try {
      await writer.write(machine, (draft) => setMachineCondition(draft, condition, scope.now));
    } catch (error) {
      // Changed by someone else meanwhile: the next reconcile of the control plane sets it.
      if (!isConflict(error)) throw error;
    }
  }
}
