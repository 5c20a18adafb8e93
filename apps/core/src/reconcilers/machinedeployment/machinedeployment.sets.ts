import { formatLabelValue, jsonEqual } from '@capstan/kube';
import {
  ANNOTATIONS,
  LABELS,
  RESOURCES,
  type MachineDeployment,
  type MachineSet,
  type MachineTemplateSpec,
} from '@capstan/api';
import { timeMs } from '../shared/machine-state.js';
import { ownerReferenceTo } from '../shared/ownership.js';
import type { RolloutLimits } from './rollout-limits.js';
import { IN_PLACE_SPEC_FIELDS, sameMachines } from './template-hash.js';

// The MachineSets of a MachineDeployment (upstream machinedeployment_sync.go): which one runs the current
// template, what a new one looks like, and the patch that carries the deployment's in-place fields to a set.

/** Annotations of the deployment that are about the deployment itself, not copied to its sets. */
const DEPLOYMENT_ONLY_ANNOTATIONS: ReadonlySet<string> = new Set([
  ANNOTATIONS.revision,
  ANNOTATIONS.desiredReplicas,
  ANNOTATIONS.maxReplicas,
  'kubectl.kubernetes.io/last-applied-configuration',
]);

const MAX_NAME_LENGTH = 253;

export function revisionOf(machineSet: MachineSet): number {
  const value = Number(machineSet.metadata.annotations?.[ANNOTATIONS.revision]);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

export function createdAtOf(machineSet: MachineSet): number {
  return timeMs(machineSet.metadata.creationTimestamp) ?? 0;
}

/** The `rollout.after` time when it has passed (and so asks for Machines created after it), else undefined. */
export function dueRolloutAfter(deployment: MachineDeployment, now: Date): string | undefined {
  const after = deployment.spec.rollout?.after;
  const at = timeMs(after);
  return after && at !== undefined && at <= now.getTime() ? after : undefined;
}

/**
 * The set running the deployment's template: same Machines, created after a due `rollout.after`; of several,
 * the latest revision.
 */
export function findCurrentMachineSet(
  deployment: MachineDeployment,
  machineSets: readonly MachineSet[],
  now: Date,
): MachineSet | undefined {
  const due = timeMs(dueRolloutAfter(deployment, now));
  // Creation timestamps have whole seconds while `after` may have a fraction: a set created in that very second was
  // created for it (comparing the fraction would never find it and create it again, forever).
  const after = due === undefined ? undefined : Math.floor(due / 1000) * 1000;
  return machineSets
    .filter((ms) => sameMachines(ms.spec.template, deployment.spec.template))
    .filter((ms) => after === undefined || createdAtOf(ms) >= after)
    .sort((a, b) => revisionOf(b) - revisionOf(a) || createdAtOf(b) - createdAtOf(a))[0];
}

export function machineSetName(deployment: MachineDeployment, hash: string): string {
  return `${deployment.metadata.name!.slice(0, MAX_NAME_LENGTH - hash.length - 1)}-${hash}`;
}

function setLabels(deployment: MachineDeployment, hash: string): Record<string, string> {
  return {
    ...deployment.spec.template.metadata?.labels,
    [LABELS.machineTemplateHash]: hash,
    [LABELS.deploymentName]: formatLabelValue(deployment.metadata.name!),
    [LABELS.clusterName]: deployment.spec.clusterName,
  };
}

function copiedAnnotations(deployment: MachineDeployment): Record<string, string> {
  return Object.fromEntries(
    Object.entries(deployment.metadata.annotations ?? {}).filter(
      ([key]) => !DEPLOYMENT_ONLY_ANNOTATIONS.has(key),
    ),
  );
}

function templateOf(deployment: MachineDeployment, hash: string): MachineTemplateSpec {
  const template = structuredClone(deployment.spec.template);
  return {
    ...template,
    metadata: {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [LABELS.machineTemplateHash]: hash },
    },
  };
}

export function replicaAnnotations(limits: RolloutLimits): Record<string, string> {
  return {
    [ANNOTATIONS.desiredReplicas]: String(limits.replicas),
    [ANNOTATIONS.maxReplicas]: String(limits.replicas + limits.maxSurge),
  };
}

/** A new set for the deployment's current template, at `revision`, with `replicas` Machines. */
export function newMachineSet(
  deployment: MachineDeployment,
  hash: string,
  revision: number,
  replicas: number,
  limits: RolloutLimits,
): MachineSet {
  return {
    apiVersion: RESOURCES.MachineSet.apiVersion,
    kind: RESOURCES.MachineSet.kind,
    metadata: {
      name: machineSetName(deployment, hash),
      namespace: deployment.metadata.namespace,
      labels: setLabels(deployment, hash),
      annotations: {
        ...copiedAnnotations(deployment),
        [ANNOTATIONS.revision]: String(revision),
        ...replicaAnnotations(limits),
      },
      ownerReferences: [ownerReferenceTo(deployment, RESOURCES.MachineDeployment, true)],
    },
    spec: {
      clusterName: deployment.spec.clusterName,
      replicas,
      selector: {
        ...structuredClone(deployment.spec.selector),
        matchLabels: { ...deployment.spec.selector.matchLabels, [LABELS.machineTemplateHash]: hash },
      },
      template: templateOf(deployment, hash),
      ...(deployment.spec.deletion ? { deletion: structuredClone(deployment.spec.deletion) } : {}),
      ...(deployment.spec.machineNaming
        ? { machineNaming: structuredClone(deployment.spec.machineNaming) }
        : {}),
    },
  };
}

export interface SetChange {
  replicas?: number;
  revision?: number;
  /** Record the deployment size the set was scaled for (desired/max-replicas annotations). */
  limits?: RolloutLimits;
}

/**
 * The merge patch (guarded by the resourceVersion read) that brings a set's replicas, revision, replica
 * annotations and in-place fields (template metadata, deletion timeouts, readiness gates, minReadySeconds,
 * deletion order, naming) to what the deployment wants; undefined when nothing differs.
 */
export function machineSetPatch(
  deployment: MachineDeployment,
  machineSet: MachineSet,
  change: SetChange,
): Record<string, unknown> | undefined {
  const hash = machineSet.metadata.labels?.[LABELS.machineTemplateHash] ?? '';
  const annotations: Record<string, string> = { ...copiedAnnotations(deployment) };
  if (change.revision !== undefined) annotations[ANNOTATIONS.revision] = String(change.revision);
  if (change.limits) Object.assign(annotations, replicaAnnotations(change.limits));
  const changedAnnotations = Object.fromEntries(
    Object.entries(annotations).filter(([key, value]) => machineSet.metadata.annotations?.[key] !== value),
  );
  const changedLabels = Object.fromEntries(
    Object.entries(setLabels(deployment, hash)).filter(
      ([key, value]) => machineSet.metadata.labels?.[key] !== value,
    ),
  );

  const spec: Record<string, unknown> = {};
  if (change.replicas !== undefined && change.replicas !== machineSet.spec.replicas)
    spec['replicas'] = change.replicas;
  if (!jsonEqual(machineSet.spec.deletion, deployment.spec.deletion))
    spec['deletion'] = deployment.spec.deletion ?? null;
  if (!jsonEqual(machineSet.spec.machineNaming, deployment.spec.machineNaming)) {
    spec['machineNaming'] = deployment.spec.machineNaming ?? null;
  }
  const template: Record<string, unknown> = {};
  const desiredMetadata = templateOf(deployment, hash).metadata ?? {};
  const currentMetadata = machineSet.spec.template.metadata ?? {};
  const metadataPatch: Record<string, unknown> = {};
  // An empty map and no map say the same: comparing them as different would patch (and wait for) nothing forever.
  if (!jsonEqual(nonEmpty(currentMetadata.labels), nonEmpty(desiredMetadata.labels)))
    metadataPatch['labels'] = withRemovals(currentMetadata.labels, desiredMetadata.labels);
  if (!jsonEqual(nonEmpty(currentMetadata.annotations), nonEmpty(desiredMetadata.annotations)))
    metadataPatch['annotations'] = withRemovals(currentMetadata.annotations, desiredMetadata.annotations);
  if (Object.keys(metadataPatch).length > 0) template['metadata'] = metadataPatch;
  const templateSpec: Record<string, unknown> = {};
  for (const field of IN_PLACE_SPEC_FIELDS) {
    const desired = deployment.spec.template.spec[field];
    if (!jsonEqual(machineSet.spec.template.spec[field], desired)) templateSpec[field] = desired ?? null;
  }
  if (Object.keys(templateSpec).length > 0) template['spec'] = templateSpec;
  if (Object.keys(template).length > 0) spec['template'] = template;

  const metadata: Record<string, unknown> = {};
  if (Object.keys(changedAnnotations).length > 0) metadata['annotations'] = changedAnnotations;
  if (Object.keys(changedLabels).length > 0) metadata['labels'] = changedLabels;
  if (Object.keys(metadata).length === 0 && Object.keys(spec).length === 0) return undefined;
  metadata['resourceVersion'] = machineSet.metadata.resourceVersion;
  return { metadata, ...(Object.keys(spec).length > 0 ? { spec } : {}) };
}

/** A merge-patch map: the desired entries, and null for each current key no longer wanted. */
function nonEmpty(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map && Object.keys(map).length > 0 ? map : undefined;
}

function withRemovals(
  current: Record<string, string> | undefined,
  desired: Record<string, string> | undefined,
): Record<string, string | null> {
  const out: Record<string, string | null> = { ...desired };
  for (const key of Object.keys(current ?? {})) if (!(key in out)) out[key] = null;
  return out;
}
