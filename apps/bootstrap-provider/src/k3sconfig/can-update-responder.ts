import {
  LABELS,
  RESOURCES,
  type K3sConfig,
  type K3sConfigSpec,
  type K3sConfigTemplate,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import type { CanUpdateMachineRequest, CanUpdateMachineResponse, ObjectRef } from '@capstan/events';
import type { Informer, KubeClient } from '@capstan/kube';
import { decideInPlace } from './in-place-decision.js';

export interface CanUpdateSources {
  client: KubeClient;
  configs: Informer<K3sConfig>;
  machines: Informer<Machine>;
  controlPlanes: Informer<K3sControlPlane>;
}

const is = (ref: ObjectRef, resource: { group: string; kind: string }) =>
  ref.apiGroup === resource.group && ref.kind === resource.kind;

/** The K3s configuration an update would bring: a K3sConfigTemplate's, or a K3sControlPlane's. */
async function desiredSpecOf(
  sources: CanUpdateSources,
  namespace: string,
  ref: ObjectRef,
): Promise<K3sConfigSpec | { unknown: string }> {
  if (is(ref, RESOURCES.K3sConfigTemplate)) {
    const template = await sources.client
      .resource<K3sConfigTemplate>(RESOURCES.K3sConfigTemplate)
      .getIfExists({ namespace, name: ref.name });
    return template ? (template.spec?.template?.spec ?? {}) : { unknown: `K3sConfigTemplate ${namespace}/${ref.name} not found` };
  }
  if (is(ref, RESOURCES.K3sControlPlane)) {
    const controlPlane = sources.controlPlanes.getByName(namespace, ref.name);
    return controlPlane ? (controlPlane.spec.k3sConfigSpec ?? {}) : { unknown: `K3sControlPlane ${namespace}/${ref.name} not found` };
  }
  return { unknown: `${ref.kind}.${ref.apiGroup} is not a K3s configuration source` };
}

/** The K3s bootstrap provider's answer to "can this Machine take that change in place". */
export async function answerCanUpdate(
  sources: CanUpdateSources,
  request: CanUpdateMachineRequest,
): Promise<CanUpdateMachineResponse> {
  const { namespace } = request.machine;
  if (!is(request.bootstrapConfig, RESOURCES.K3sConfig)) {
    return { inPlace: false, reason: `${request.bootstrapConfig.kind} is not a K3sConfig`, fields: ['spec.bootstrap.configRef'] };
  }
  const config = sources.configs.getByName(namespace, request.bootstrapConfig.name);
  if (!config) throw new Error(`K3sConfig ${namespace}/${request.bootstrapConfig.name} is not known yet`);
  if (!config.status?.plan?.secretName) {
    return { inPlace: false, reason: `Machine ${request.machine.name} has no node agent to apply a plan`, fields: [] };
  }
  const desired = await desiredSpecOf(sources, namespace, request.desiredConfigFrom);
  if ('unknown' in desired) throw new Error(desired.unknown);
  const machine = sources.machines.getByName(namespace, request.machine.name);
  const role = machine && LABELS.controlPlane in (machine.metadata.labels ?? {}) ? 'server' : 'agent';
  return decideInPlace(
    { version: request.currentVersion ?? machine?.spec.version, spec: config.spec ?? {} },
    { version: request.desiredVersion, spec: desired },
    role,
  );
}
