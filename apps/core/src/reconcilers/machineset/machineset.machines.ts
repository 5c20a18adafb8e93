import { formatLabelValue, jsonEqual } from '@capstan/kube';
import {
  FINALIZERS,
  IN_PLACE_ANNOTATIONS,
  LABELS,
  RESOURCES,
  type Machine,
  type MachineSet,
} from '@capstan/api';
import type { Informer } from '@capstan/kube';
import type { ObjectReference } from '../shared/template-cloner.js';
import { ownerReferenceTo } from '../shared/ownership.js';

// The Machines a MachineSet creates from its template (upstream computeDesiredMachine), and the in-place changes
// it carries to existing ones: labels, annotations and the fields that never need a new Machine.

/** Template labels, plus the set's name (hashed past 63 characters), its MachineDeployment and the cluster. */
export function machineLabels(machineSet: MachineSet): Record<string, string> {
  const labels: Record<string, string> = { ...machineSet.spec.template.metadata?.labels };
  labels[LABELS.setName] = formatLabelValue(machineSet.metadata.name!);
  const deployment = machineSet.metadata.labels?.[LABELS.deploymentName];
  if (deployment) labels[LABELS.deploymentName] = deployment;
  labels[LABELS.clusterName] = machineSet.spec.clusterName;
  return labels;
}

export function machineAnnotations(machineSet: MachineSet): Record<string, string> {
  return { ...machineSet.spec.template.metadata?.annotations };
}

/** A new Machine of the set, referencing its freshly cloned infrastructure machine and bootstrap config. */
export function desiredMachine(
  machineSet: MachineSet,
  name: string,
  clones: { infrastructure: ObjectReference; bootstrap?: ObjectReference },
): Machine {
  const spec = structuredClone(machineSet.spec.template.spec);
  const bootstrap = clones.bootstrap
    ? { configRef: clones.bootstrap }
    : { ...(spec.bootstrap.dataSecretName ? { dataSecretName: spec.bootstrap.dataSecretName } : {}) };
  return {
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: RESOURCES.Machine.kind,
    metadata: {
      name,
      namespace: machineSet.metadata.namespace,
      labels: machineLabels(machineSet),
      annotations: machineAnnotations(machineSet),
      ownerReferences: [ownerReferenceTo(machineSet, RESOURCES.MachineSet, true)],
      // Set at creation so a Machine deleted before the Machine controller saw it still cleans up.
      finalizers: [FINALIZERS.machine],
    },
    spec: {
      ...spec,
      clusterName: machineSet.spec.clusterName,
      bootstrap,
      infrastructureRef: clones.infrastructure,
    },
  };
}

/**
 * The merge patch that brings an existing Machine's in-place mutable fields to the template (labels and
 * annotations are only added or changed, never removed: other controllers add their own), or undefined.
 */
export function inPlacePatch(machineSet: MachineSet, machine: Machine): Record<string, unknown> | undefined {
  const labels = changedEntries(machine.metadata.labels, machineLabels(machineSet));
  const annotations = changedEntries(machine.metadata.annotations, machineAnnotations(machineSet));
  const template = machineSet.spec.template.spec;
  const spec: Record<string, unknown> = {};
  if (!jsonEqual(machine.spec.deletion, template.deletion)) spec['deletion'] = template.deletion ?? null;
  if (!jsonEqual(machine.spec.readinessGates, template.readinessGates)) {
    spec['readinessGates'] = template.readinessGates ?? null;
  }
  if (machine.spec.minReadySeconds !== template.minReadySeconds) {
    spec['minReadySeconds'] = template.minReadySeconds ?? null;
  }
  const metadata: Record<string, unknown> = {};
  if (labels) metadata['labels'] = labels;
  if (annotations) metadata['annotations'] = annotations;
  if (Object.keys(metadata).length === 0 && Object.keys(spec).length === 0) return undefined;
  return {
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(Object.keys(spec).length > 0 ? { spec } : {}),
  };
}

function changedEntries(
  current: Record<string, string> | undefined,
  desired: Record<string, string>,
): Record<string, string> | undefined {
  const changed = Object.entries(desired).filter(([key, value]) => current?.[key] !== value);
  return changed.length > 0 ? Object.fromEntries(changed) : undefined;
}

/**
 * A Machine is on its way out of or into the set (in-place moves, docs/in-place-updates.md): one of its own carries
 * `moving-to`, or a Machine of its namespace is moving to it.
 */
export function isMovingMachines(
  machines: Informer<Machine>,
  machineSet: MachineSet,
  own: readonly Machine[],
): boolean {
  const movingTo = (m: Machine) => m.metadata.annotations?.[IN_PLACE_ANNOTATIONS.movingTo];
  if (own.some((m) => movingTo(m) !== undefined)) return true;
  return machines.list(machineSet.metadata.namespace).some((m) => movingTo(m) === machineSet.metadata.name);
}
