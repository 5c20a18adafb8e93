import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  parseApiVersion,
  RESOURCES,
  type ConditionInput,
  type Machine,
  type MachineHealthCheck,
} from '@capstan/api';
import { isAlreadyExists, isNotFound } from '@capstan/kube';
import type { Logger } from 'pino';
import { cloneKindOf, type ObjectReference, type TemplateCloner } from '../shared/template-cloner.js';

// External remediation (upstream MachineHealthCheck remediationTemplate): instead of asking the Machine's owner,
// the health check creates a remediation request from `spec.remediation.templateRef`, named after the Machine and
// owned by it, for a remediation controller to act on; a Machine found healthy again has its request deleted.

function templateRefOf(mhc: MachineHealthCheck): ObjectReference | undefined {
  const ref = mhc.spec.remediation?.templateRef;
  if (!ref) return undefined;
  const { group, version } = parseApiVersion(ref.apiVersion);
  return { apiGroup: group, version, kind: ref.kind, name: ref.name };
}

function requestRefOf(template: ObjectReference, machine: Machine): ObjectReference {
  return { ...template, kind: cloneKindOf(template.kind), name: machine.metadata.name! };
}

export function usesExternalRemediation(mhc: MachineHealthCheck): boolean {
  return mhc.spec.remediation?.templateRef !== undefined;
}

/**
 * Why the health check's remediation template cannot be used (a kind no API serves, or no such object), or
 * undefined when it can or none is set: remediating through it would fail for every Machine.
 */
export async function remediationTemplateProblem(
  templates: TemplateCloner,
  mhc: MachineHealthCheck,
): Promise<string | undefined> {
  const template = templateRefOf(mhc);
  if (!template) return undefined;
  try {
    await templates.get(mhc.metadata.namespace!, template);
    return undefined;
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return `spec.remediation.templateRef: ${template.kind} ${template.name} (${mhc.spec.remediation!.templateRef!.apiVersion}) does not exist`;
  }
}

/** Creates the Machine's remediation request if it has none; returns the ExternallyRemediated condition. */
export async function requestExternalRemediation(
  templates: TemplateCloner,
  mhc: MachineHealthCheck,
  machine: Machine,
  log: Logger,
): Promise<{ condition: ConditionInput; created: boolean }> {
  const template = templateRefOf(mhc)!;
  const namespace = machine.metadata.namespace!;
  try {
    await templates.get(namespace, requestRefOf(template, machine));
    return { condition: waiting(), created: false };
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    await templates.createFromTemplate({
      name: machine.metadata.name!,
      namespace,
      clusterName: machine.spec.clusterName,
      ownerReferences: [
        {
          apiVersion: RESOURCES.Machine.apiVersion,
          kind: RESOURCES.Machine.kind,
          name: machine.metadata.name!,
          uid: machine.metadata.uid!,
        },
      ],
      templateRef: template,
    });
  } catch (err) {
    if (isAlreadyExists(err)) return { condition: waiting(), created: false };
    const message = err instanceof Error ? err.message : String(err);
    log.warn(
      { machine: machine.metadata.name, err: { message } },
      'could not create the remediation request',
    );
    return {
      condition: {
        type: ConditionType.ExternallyRemediated,
        status: ConditionStatus.False,
        reason: isNotFound(err)
          ? ConditionReason.RemediationTemplateNotFound
          : ConditionReason.RemediationRequestCreationFailed,
        message: isNotFound(err)
          ? `${template.kind} ${template.name} does not exist`
          : `Creating the ${cloneKindOf(template.kind)} remediation request failed: ${message}`,
      },
      created: false,
    };
  }
  return { condition: waiting(), created: true };
}

/** Deletes the remediation request of a Machine that is healthy again. */
export async function cancelExternalRemediation(
  templates: TemplateCloner,
  mhc: MachineHealthCheck,
  machine: Machine,
): Promise<void> {
  await templates.delete(machine.metadata.namespace!, requestRefOf(templateRefOf(mhc)!, machine));
}

function waiting(): ConditionInput {
  return {
    type: ConditionType.ExternallyRemediated,
    status: ConditionStatus.False,
    reason: ConditionReason.WaitingForRemediation,
    message: 'Waiting for the external remediation request to be processed',
  };
}
