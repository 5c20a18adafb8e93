import { createHash, randomInt } from 'node:crypto';
import { desiredVersionOf } from '../planning/upgrade-hold.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  K3S_INIT_SERVER_ANNOTATION,
  LABELS,
  RESOURCES,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
  type Unstructured,
} from '@capstan/api';
import {
  canonicalJson,
  formatLabelValue,
  setControllerReference,
  setOwnerReference,
  type ResourceType,
} from '@capstan/kube';
import { CONTROL_PLANE_ANNOTATIONS } from '../planning/annotations.js';

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `<control plane>-<5 random characters>`: the Machine, its K3sConfig and its infrastructure machine share it. */
export function newMachineName(kcpName: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return `${kcpName}-${suffix}`;
}

/** Labels every control plane object carries: cluster name, control plane marker and owner name. */
export function controlPlaneLabels(kcp: K3sControlPlane, clusterName: string): Record<string, string> {
  return {
    [LABELS.clusterName]: clusterName,
    [LABELS.controlPlane]: '',
    [LABELS.controlPlaneName]: formatLabelValue(kcp.metadata.name!),
  };
}

export interface MachineSpecInputs {
  kcp: K3sControlPlane;
  clusterName: string;
  name: string;
  specHash: string;
  infrastructure: { apiGroup: string; kind: string };
  failureDomain?: string;
  /** JSON of the remediation this machine replaces a machine for. */
  remediationFor?: string;
}

/**
 * The Machine: controlled by the K3sControlPlane, with the current version and references. What comes from
 * `machineTemplate` (labels, annotations, deletion timeouts, readiness gates) is applied separately, see
 * machineTemplateFields, so it can change in place.
 */
export function buildMachine(inputs: MachineSpecInputs): Machine {
  const { kcp, clusterName, name } = inputs;
  const machine: Machine = {
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: RESOURCES.Machine.kind,
    metadata: {
      name,
      namespace: kcp.metadata.namespace,
      labels: controlPlaneLabels(kcp, clusterName),
      annotations: {
        [CONTROL_PLANE_ANNOTATIONS.specHash]: inputs.specHash,
        ...(inputs.remediationFor && { [CONTROL_PLANE_ANNOTATIONS.remediationFor]: inputs.remediationFor }),
      },
    },
    spec: {
      clusterName,
      version: desiredVersionOf(kcp),
      bootstrap: { configRef: { apiGroup: RESOURCES.K3sConfig.group, kind: RESOURCES.K3sConfig.kind, name } },
      infrastructureRef: { apiGroup: inputs.infrastructure.apiGroup, kind: inputs.infrastructure.kind, name },
      ...(inputs.failureDomain && { failureDomain: inputs.failureDomain }),
    },
  };
  setControllerReference(kcp, machine);
  return machine;
}

/** Field manager of the machine template fields: it owns them alone, so a field dropped from the template goes. */
export const TEMPLATE_FIELD_MANAGER = 'capstan-control-plane-provider-template';

/** Hash of what `machineTemplate` puts on Machines in place; recorded on each Machine as it is applied. */
export function machineTemplateFieldsHash(kcp: K3sControlPlane): string {
  const template = kcp.spec.machineTemplate;
  return createHash('sha256')
    .update(
      canonicalJson({
        metadata: template.metadata ?? {},
        deletion: template.spec.deletion,
        readinessGates: template.spec.readinessGates,
      }),
    )
    .digest('hex')
    .slice(0, 32);
}

/**
 * The server-side apply body of the machine template fields of one Machine (upstream KCP syncs the same
 * ones in place): labels, annotations, deletion timeouts, readiness gates, and the hash they were built from.
 */
export function machineTemplateFields(kcp: K3sControlPlane, machine: Machine): Machine {
  const template = kcp.spec.machineTemplate;
  return {
    apiVersion: RESOURCES.Machine.apiVersion,
    kind: RESOURCES.Machine.kind,
    metadata: {
      name: machine.metadata.name,
      namespace: machine.metadata.namespace,
      labels: { ...template.metadata?.labels },
      annotations: {
        ...template.metadata?.annotations,
        [CONTROL_PLANE_ANNOTATIONS.templateFieldsHash]: machineTemplateFieldsHash(kcp),
      },
    },
    spec: {
      ...(template.spec.deletion && { deletion: template.spec.deletion }),
      ...(template.spec.readinessGates && { readinessGates: template.spec.readinessGates }),
    } as Machine['spec'],
  };
}

/**
 * The K3sConfig of a new machine, from `spec.k3sConfigSpec`. Like upstream KCP's bootstrap configs it is
 * owned by the control plane until the core makes the Machine its controller. The first machine of an
 * uninitialized control plane is designated the init server.
 */
export function buildK3sConfig(
  kcp: K3sControlPlane,
  clusterName: string,
  name: string,
  initServer: boolean,
): K3sConfig {
  const config: K3sConfig = {
    apiVersion: RESOURCES.K3sConfig.apiVersion,
    kind: RESOURCES.K3sConfig.kind,
    metadata: {
      name,
      namespace: kcp.metadata.namespace,
      labels: controlPlaneLabels(kcp, clusterName),
      ...(initServer && { annotations: { [K3S_INIT_SERVER_ANNOTATION]: 'true' } }),
    },
    spec: structuredClone(kcp.spec.k3sConfigSpec ?? {}),
  };
  setOwnerReference(kcp, config);
  return config;
}

/**
 * The infrastructure machine cloned from the machine template (`spec.template.{metadata,spec}`), with the
 * upstream cloned-from annotations, the control plane labels, and the K3sControlPlane as (non-controller)
 * owner until the core makes the Machine its controller.
 */
export function buildInfrastructureMachine(
  kcp: K3sControlPlane,
  clusterName: string,
  name: string,
  template: Unstructured,
  templateType: ResourceType,
  machineType: ResourceType,
): KubernetesObject & { spec?: unknown } {
  const resource = (
    template['spec'] as
      | {
          template?: {
            metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
            spec?: unknown;
          };
        }
      | undefined
  )?.template;
  const templateName = (template['metadata'] as { name?: string } | undefined)?.name ?? '';
  const clone: KubernetesObject & { spec?: unknown } = {
    apiVersion: machineType.group ? `${machineType.group}/${machineType.version}` : machineType.version,
    kind: machineType.kind,
    metadata: {
      name,
      namespace: kcp.metadata.namespace,
      labels: { ...resource?.metadata?.labels, ...controlPlaneLabels(kcp, clusterName) },
      annotations: {
        ...resource?.metadata?.annotations,
        [ANNOTATIONS.clonedFromName]: templateName,
        [ANNOTATIONS.clonedFromGroupKind]: `${templateType.kind}.${templateType.group}`,
      },
    },
    spec: structuredClone(resource?.spec ?? {}),
  };
  setOwnerReference(kcp, clone);
  return clone;
}
