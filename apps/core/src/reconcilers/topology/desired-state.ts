import { createHash } from 'node:crypto';
import {
  ANNOTATIONS,
  LABELS,
  parseApiVersion,
  type Cluster,
  type ClusterClassObjectMetaSchema as ClusterClassObjectMeta,
  type MachineDeployment,
  type MachineDeploymentClass,
  type ControlPlaneClass,
  IN_PLACE_POLICIES,
  type InPlacePolicy,
  compareVersions,
  type MachineDeploymentTopology,
  type MachineHealthCheck,
  type Unstructured,
} from '@capstan/api';
import { canonicalJson, isPlainObject } from '@capstan/kube';
import type { V1OwnerReference } from '@kubernetes/client-node';
import { cloneKindOf } from '../shared/template-cloner.js';
import type { Blueprint, CurrentState, TemplateObject } from './topology-blueprint.js';
import { TopologyError } from './topology-errors.js';
import { DEFAULT_NAMING, nameFromTemplate, nameWithPrefix } from './topology-names.js';
import type { ExternalPatchCaller } from './external-patches.js';
import { applyPatches, type PatchTarget } from './topology-patches.js';
import {
  decideVersions,
  DEFER_UPGRADE_ANNOTATION,
  HOLD_UPGRADE_SEQUENCE_ANNOTATION,
  upgradeConcurrency,
  type ControlPlaneState,
  type UpgradeDecision,
} from './topology-upgrade.js';
import type { ResolvedVariables, VariableValues } from './topology-variables.js';
import { clusterClassKey } from './cluster-class-ref.js';

// The desired state of a topology Cluster (upstream's exp/topology/desiredstate): the infrastructure cluster and the
// control plane from the class's templates, the control plane's machine template, one MachineDeployment per worker
// topology with its own copies of its class's templates, and the MachineHealthChecks the class and the topology ask
// for; patched by the class's inline patches, with versions from the upgrade orchestration. Pure: reads nothing.

/** On templates the topology copies: the hash of the spec it wrote, so a changed spec is told from API defaults. */
export const SPEC_HASH_ANNOTATION = 'topology.capstan.dev/spec-hash';

export interface DesiredMachineDeployment {
  topologyName: string;
  object: MachineDeployment;
  bootstrapTemplate: TemplateObject;
  infrastructureTemplate: TemplateObject;
  healthCheck?: MachineHealthCheck;
}

export interface DesiredState {
  infrastructureCluster: TemplateObject;
  controlPlane: TemplateObject;
  /** False while the control plane waits for an upgrade to start: upstream leaves it as it is until then. */
  updateControlPlane: boolean;
  controlPlaneMachineInfrastructureTemplate?: TemplateObject;
  controlPlaneHealthCheck?: MachineHealthCheck;
  /** Only those that may exist now (new ones wait while the control plane moves). */
  machineDeployments: DesiredMachineDeployment[];
  upgrade: UpgradeDecision;
}

export interface DesiredStateInput {
  cluster: Cluster;
  blueprint: Blueprint;
  current: CurrentState;
  variables: ResolvedVariables;
  /** The Runtime SDK client external patches are asked through. */
  external?: ExternalPatchCaller;
  /** Upgrade steps Runtime SDK hooks hold back. */
  hold?: { controlPlane?: boolean; workers?: boolean };
}

const CORE_GROUP = 'cluster.x-k8s.io';
const CORE_API_VERSION = `${CORE_GROUP}/v1beta2`;

type StringMap = Record<string, string>;
const isObject = isPlainObject as (value: unknown) => value is Record<string, unknown>;

export function specHash(spec: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(spec ?? {}))
    .digest('hex')
    .slice(0, 32);
}

/** Class metadata under topology metadata: the topology wins key by key. */
function mergedMetadata(
  classMeta: ClusterClassObjectMeta | undefined,
  topologyMeta: ClusterClassObjectMeta | undefined,
): { labels: StringMap; annotations: StringMap } {
  return {
    labels: { ...classMeta?.labels, ...topologyMeta?.labels },
    annotations: { ...classMeta?.annotations, ...topologyMeta?.annotations },
  };
}

const withoutKeys = (map: StringMap, keys: readonly string[]): StringMap =>
  Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)));

function ownerReferenceTo(cluster: Cluster): V1OwnerReference {
  return {
    apiVersion: CORE_API_VERSION,
    kind: 'Cluster',
    name: cluster.metadata.name!,
    uid: cluster.metadata.uid!,
  };
}

/** The contract reference (apiGroup, kind, name) to an object of the topology. */
export const refTo = (object: TemplateObject) => ({
  apiGroup: parseApiVersion(object.apiVersion).group,
  kind: object.kind,
  name: object.metadata.name,
});

const templateSpecOf = (template: TemplateObject): Record<string, unknown> => {
  const spec = template['spec'];
  const inner = isObject(spec) ? spec['template'] : undefined;
  return isObject(inner) ? inner : {};
};

/** An object from a template (upstream templateToObject): the template's API version, its kind without Template. */
function objectFromTemplate(
  template: TemplateObject,
  input: { name: string; cluster: Cluster; labels: StringMap; annotations: StringMap },
): TemplateObject {
  const source = templateSpecOf(template);
  const meta = isObject(source['metadata']) ? source['metadata'] : {};
  return {
    apiVersion: template.apiVersion,
    kind: cloneKindOf(template.kind),
    metadata: {
      name: input.name,
      namespace: input.cluster.metadata.namespace,
      labels: {
        ...(meta['labels'] as StringMap | undefined),
        ...input.labels,
        [LABELS.clusterName]: input.cluster.metadata.name!,
        [LABELS.topologyOwned]: '',
      },
      annotations: {
        ...(meta['annotations'] as StringMap | undefined),
        ...input.annotations,
        [ANNOTATIONS.clonedFromName]: template.metadata.name,
        [ANNOTATIONS.clonedFromGroupKind]: `${template.kind}.${parseApiVersion(template.apiVersion).group}`,
      },
      ownerReferences: [ownerReferenceTo(input.cluster)],
    },
    spec: structuredClone(isObject(source['spec']) ? source['spec'] : {}),
  };
}

/**
 * A copy of a class's template for one object of the topology (upstream templateToTemplate): kept under its
 * current name while its spec is what the topology wants, else a new name (a rotation, which rolls the Machines).
 */
function templateCopy(
  template: TemplateObject,
  input: { cluster: Cluster; prefix: string; current: TemplateObject | undefined; labels: StringMap },
): TemplateObject {
  const spec = structuredClone(template['spec'] ?? {});
  const hash = specHash(spec);
  const current = input.current;
  const keep = current !== undefined && current.metadata.annotations?.[SPEC_HASH_ANNOTATION] === hash;
  return {
    apiVersion: template.apiVersion,
    kind: template.kind,
    metadata: {
      name: keep ? current.metadata.name : nameWithPrefix(input.prefix),
      namespace: input.cluster.metadata.namespace,
      labels: {
        ...input.labels,
        [LABELS.clusterName]: input.cluster.metadata.name!,
        [LABELS.topologyOwned]: '',
      },
      annotations: {
        [ANNOTATIONS.clonedFromName]: template.metadata.name,
        [ANNOTATIONS.clonedFromGroupKind]: `${template.kind}.${parseApiVersion(template.apiVersion).group}`,
        [SPEC_HASH_ANNOTATION]: hash,
      },
      ownerReferences: [ownerReferenceTo(input.cluster)],
    },
    spec,
  };
}

/** A working copy of a class template that patches change; its name stays the class template's. */
const patchable = (template: TemplateObject): TemplateObject => structuredClone(template);

function builtinCluster(cluster: Cluster): Record<string, unknown> {
  const topology = cluster.spec!.topology!;
  const network = cluster.spec?.clusterNetwork;
  const classNamespace = clusterClassKey(cluster)!.namespace;
  return {
    name: cluster.metadata.name,
    namespace: cluster.metadata.namespace,
    uid: cluster.metadata.uid,
    metadata: { labels: cluster.metadata.labels ?? {}, annotations: cluster.metadata.annotations ?? {} },
    topology: {
      version: topology.version,
      classRef: { name: topology.classRef.name, namespace: classNamespace },
      class: topology.classRef.name,
      classNamespace,
    },
    ...(network
      ? {
          network: {
            ...(network.serviceDomain ? { serviceDomain: network.serviceDomain } : {}),
            ...(network.services?.cidrBlocks ? { services: network.services.cidrBlocks } : {}),
            ...(network.pods?.cidrBlocks ? { pods: network.pods.cidrBlocks } : {}),
          },
        }
      : {}),
  };
}

const withBuiltin = (values: VariableValues, builtin: Record<string, unknown>): VariableValues => ({
  ...values,
  builtin,
});

/** The desired state; throws TopologyError when the class and the topology disagree or a patch fails. */
export async function computeDesiredState(input: DesiredStateInput): Promise<DesiredState> {
  const { cluster, blueprint, current, variables } = input;
  const topology = cluster.spec!.topology!;
  const clusterClass = blueprint.clusterClass;
  const clusterName = cluster.metadata.name!;
  const cluster0 = builtinCluster(cluster);
  const namespace = cluster.metadata.namespace!;
  const clusterHolder = (fieldPath: string) => ({
    apiVersion: CORE_API_VERSION,
    kind: 'Cluster',
    namespace,
    name: clusterName,
    fieldPath,
  });

  const workerTopologies = topology.workers?.machineDeployments ?? [];
  for (const md of workerTopologies)
    if (!blueprint.machineDeploymentClasses.has(md.class))
      throw new TopologyError(
        `MachineDeployment topology "${md.name}" uses class "${md.class}", which ClusterClass ${clusterClass.metadata?.name} does not define`,
      );
  if (
    topology.controlPlane?.healthCheck?.enabled === true &&
    !clusterClass.spec.controlPlane.healthCheck &&
    !hasChecks(topology.controlPlane.healthCheck)
  )
    throw new TopologyError(
      `spec.topology.controlPlane.healthCheck.enabled is true, but neither the topology nor ClusterClass ${clusterClass.metadata?.name} defines the health check`,
    );

  // Upstream's webhook refuses a version going down; Capstan has no webhook for it, so the topology says it here.
  const runningVersion = (current.controlPlane?.['spec'] as { version?: string } | undefined)?.version;
  if (runningVersion !== undefined && compareVersions(topology.version, runningVersion) < 0)
    throw new TopologyError(
      `spec.topology.version ${topology.version} is older than the control plane's ${runningVersion}: a downgrade is not supported`,
    );

  // Versions first: they are builtin variables the patches see.
  const upgrade = decideVersions({
    topologyVersion: topology.version,
    controlPlane: current.controlPlane && controlPlaneState(current.controlPlane),
    machineDeployments: workerTopologies.map((md) => {
      const existing = current.machineDeployments.get(md.name);
      return {
        topologyName: md.name,
        version: existing?.object.spec.template.spec.version,
        upgrading: existing?.upgrading ?? false,
        deferred: md.metadata?.annotations?.[DEFER_UPGRADE_ANNOTATION] !== undefined,
        holdsSequence: md.metadata?.annotations?.[HOLD_UPGRADE_SEQUENCE_ANNOTATION] !== undefined,
      };
    }),
    concurrency: upgradeConcurrency(cluster.metadata.annotations),
    hold: input.hold,
  });

  // Names: kept once the objects exist.
  const infrastructureClusterName =
    current.infrastructureCluster?.metadata.name ??
    nameFromTemplate(
      clusterClass.spec.infrastructure.naming?.template ?? DEFAULT_NAMING.infrastructureCluster,
      { cluster: { name: clusterName } },
      'infrastructure cluster',
    );
  const controlPlaneName =
    current.controlPlane?.metadata.name ??
    nameFromTemplate(
      clusterClass.spec.controlPlane.naming?.template ?? DEFAULT_NAMING.controlPlane,
      { cluster: { name: clusterName } },
      'control plane',
    );

  // The templates as the patches change them.
  const infrastructureClusterTemplate = patchable(blueprint.infrastructureClusterTemplate);
  const controlPlaneTemplate = patchable(blueprint.controlPlaneTemplate);
  const controlPlaneInfraTemplate =
    blueprint.controlPlaneMachineInfrastructureTemplate &&
    patchable(blueprint.controlPlaneMachineInfrastructureTemplate);
  const controlPlaneMeta = mergedMetadata(
    clusterClass.spec.controlPlane.metadata,
    topology.controlPlane?.metadata,
  );
  const controlPlaneBuiltin = {
    version: upgrade.controlPlaneVersion,
    metadata: controlPlaneMeta,
    name: controlPlaneName,
    ...(topology.controlPlane?.replicas !== undefined ? { replicas: topology.controlPlane.replicas } : {}),
    ...(current.controlPlaneMachineInfrastructureTemplate
      ? {
          machineTemplate: {
            infrastructureRef: { name: current.controlPlaneMachineInfrastructureTemplate.metadata.name },
          },
        }
      : {}),
  };
  const targets: PatchTarget[] = [
    {
      role: { kind: 'infrastructureCluster' },
      template: infrastructureClusterTemplate,
      variables: withBuiltin(variables.cluster, { cluster: cluster0 }),
      describe: `infrastructure cluster template ${blueprint.infrastructureClusterTemplate.metadata.name}`,
      holder: clusterHolder('spec.infrastructureRef'),
    },
    {
      role: { kind: 'controlPlane' },
      template: controlPlaneTemplate,
      variables: withBuiltin(variables.controlPlane, {
        cluster: cluster0,
        controlPlane: controlPlaneBuiltin,
      }),
      describe: `control plane template ${blueprint.controlPlaneTemplate.metadata.name}`,
      holder: clusterHolder('spec.controlPlaneRef'),
    },
  ];
  if (controlPlaneInfraTemplate)
    targets.push({
      role: { kind: 'controlPlane' },
      template: controlPlaneInfraTemplate,
      variables: withBuiltin(variables.controlPlane, {
        cluster: cluster0,
        controlPlane: controlPlaneBuiltin,
      }),
      describe: `control plane machine infrastructure template ${controlPlaneInfraTemplate.metadata.name}`,
      holder: {
        apiVersion: blueprint.controlPlaneTemplate.apiVersion,
        kind: cloneKindOf(blueprint.controlPlaneTemplate.kind),
        namespace,
        name: controlPlaneName,
        fieldPath: 'spec.machineTemplate.spec.infrastructureRef',
      },
    });

  const workers = workerTopologies
    .filter((md) => !upgrade.createPending.includes(md.name))
    .map((md) => {
      const existing = current.machineDeployments.get(md.name);
      const mdBlueprint = blueprint.machineDeploymentClasses.get(md.class)!;
      const name =
        existing?.object.metadata?.name ??
        nameFromTemplate(
          mdBlueprint.class.naming?.template ?? DEFAULT_NAMING.machineDeployment,
          { cluster: { name: clusterName }, machineDeployment: { topologyName: md.name } },
          `MachineDeployment ${md.name}`,
        );
      const version = upgrade.machineDeploymentVersions.get(md.name) ?? topology.version;
      const bootstrapTemplate = patchable(mdBlueprint.bootstrapTemplate);
      const infrastructureTemplate = patchable(mdBlueprint.infrastructureTemplate);
      const builtin = {
        cluster: cluster0,
        machineDeployment: {
          version,
          metadata: mergedMetadata(mdBlueprint.class.metadata, md.metadata),
          class: md.class,
          name,
          topologyName: md.name,
          ...(md.replicas !== undefined ? { replicas: md.replicas } : {}),
          ...(existing?.bootstrapTemplate
            ? { bootstrap: { configRef: { name: existing.bootstrapTemplate.metadata.name } } }
            : {}),
          ...(existing?.infrastructureTemplate
            ? { infrastructureRef: { name: existing.infrastructureTemplate.metadata.name } }
            : {}),
        },
      };
      const mdVariables = withBuiltin(
        variables.machineDeployments.get(md.name) ?? variables.cluster,
        builtin,
      );
      for (const [template, what, fieldPath] of [
        [bootstrapTemplate, 'bootstrap', 'spec.template.spec.bootstrap.configRef'],
        [infrastructureTemplate, 'infrastructure', 'spec.template.spec.infrastructureRef'],
      ] as const)
        targets.push({
          role: { kind: 'machineDeployment', className: md.class },
          template,
          variables: mdVariables,
          describe: `${what} template ${template.metadata.name} of MachineDeployment topology ${md.name}`,
          holder: { apiVersion: CORE_API_VERSION, kind: 'MachineDeployment', namespace, name, fieldPath },
        });
      return { md, existing, name, version, bootstrapTemplate, infrastructureTemplate };
    });

  await applyPatches(
    clusterClass.spec.patches ?? [],
    targets,
    withBuiltin(variables.cluster, { cluster: cluster0 }),
    {
      caller: input.external,
      forObject: cluster,
    },
  );

  // Objects from the patched templates.
  const infrastructureCluster = objectFromTemplate(infrastructureClusterTemplate, {
    name: infrastructureClusterName,
    cluster,
    labels: {},
    annotations: {},
  });
  const cpInfra =
    controlPlaneInfraTemplate &&
    templateCopy(controlPlaneInfraTemplate, {
      cluster,
      prefix: `${clusterName}-`,
      current: current.controlPlaneMachineInfrastructureTemplate,
      labels: {},
    });
  const controlPlane = objectFromTemplate(controlPlaneTemplate, {
    name: controlPlaneName,
    cluster,
    labels: controlPlaneMeta.labels,
    annotations: controlPlaneMeta.annotations,
  });
  setControlPlaneFields(controlPlane, {
    cluster,
    upgrade,
    meta: controlPlaneMeta,
    infrastructureTemplate: cpInfra,
    classControlPlane: clusterClass.spec.controlPlane,
  });
  // A control plane waiting for its upgrade to start is left as it is (upstream: IsPendingUpgrade).
  const updateControlPlane =
    current.controlPlane === undefined || upgrade.controlPlaneVersion === topology.version;

  const machineDeployments = workers.map((w): DesiredMachineDeployment => {
    const pending = upgrade.upgradePending.includes(w.md.name) || upgrade.deferred.includes(w.md.name);
    const labels = { [LABELS.topologyDeploymentName]: w.md.name };
    // A MachineDeployment waiting for its version upgrade keeps its templates: one rollout, not two.
    const bootstrapTemplate =
      pending && w.existing?.bootstrapTemplate
        ? w.existing.bootstrapTemplate
        : templateCopy(w.bootstrapTemplate, {
            cluster,
            prefix: `${clusterName}-${w.md.name}-`,
            current: w.existing?.bootstrapTemplate,
            labels,
          });
    const infrastructureTemplate =
      pending && w.existing?.infrastructureTemplate
        ? w.existing.infrastructureTemplate
        : templateCopy(w.infrastructureTemplate, {
            cluster,
            prefix: `${clusterName}-${w.md.name}-`,
            current: w.existing?.infrastructureTemplate,
            labels,
          });
    const mdBlueprint = blueprint.machineDeploymentClasses.get(w.md.class)!;
    const object = machineDeploymentObject({
      cluster,
      topology: w.md,
      mdClass: mdBlueprint.class,
      name: w.name,
      version: w.version,
      bootstrapTemplate,
      infrastructureTemplate,
    });
    return {
      topologyName: w.md.name,
      object,
      bootstrapTemplate,
      infrastructureTemplate,
      healthCheck: machineDeploymentHealthCheck(cluster, w.md, mdBlueprint.class, w.name),
    };
  });

  return {
    infrastructureCluster,
    controlPlane,
    updateControlPlane,
    ...(cpInfra ? { controlPlaneMachineInfrastructureTemplate: cpInfra } : {}),
    ...(controlPlaneHealthCheckOf(cluster, blueprint, controlPlaneName) ?? {}),
    machineDeployments,
    upgrade,
  };
}

const hasChecks = (healthCheck: { checks?: unknown } | undefined): boolean =>
  healthCheck?.checks !== undefined;

/** The control plane as the upgrade orchestration sees it: spec.version, the oldest version its machines run, settling. */
export function controlPlaneState(controlPlane: TemplateObject): ControlPlaneState {
  const spec = (controlPlane['spec'] ?? {}) as { version?: string; replicas?: number };
  const status = (controlPlane['status'] ?? {}) as {
    version?: string;
    versions?: { version?: string }[];
    replicas?: number;
    readyReplicas?: number;
    upToDateReplicas?: number;
  };
  const replicas = spec.replicas;
  const settling =
    replicas !== undefined &&
    (status.replicas !== replicas ||
      status.readyReplicas !== replicas ||
      (status.upToDateReplicas ?? replicas) !== replicas);
  // The contract's status.versions (oldest first) where a control plane reports it, else the older status.version.
  const oldest = status.versions
    ?.map((v) => v.version)
    .filter((v): v is string => v !== undefined)
    .sort(compareVersions)[0];
  return { version: spec.version ?? '', statusVersion: oldest ?? status.version, settling };
}

function setControlPlaneFields(
  controlPlane: TemplateObject,
  input: {
    cluster: Cluster;
    upgrade: UpgradeDecision;
    meta: { labels: StringMap; annotations: StringMap };
    infrastructureTemplate: TemplateObject | undefined;
    classControlPlane: ControlPlaneClass;
  },
): void {
  const topology = input.cluster.spec!.topology!;
  const classControlPlane = input.classControlPlane;
  const spec = controlPlane['spec'] as Record<string, unknown>;
  spec['version'] = input.upgrade.controlPlaneVersion;
  if (topology.controlPlane?.replicas !== undefined) spec['replicas'] = topology.controlPlane.replicas;
  if (topology.controlPlane?.rollout?.after)
    spec['rollout'] = {
      ...(spec['rollout'] as object | undefined),
      after: topology.controlPlane.rollout.after,
    };
  if (input.infrastructureTemplate) {
    const machineTemplate = isObject(spec['machineTemplate']) ? spec['machineTemplate'] : {};
    const machineSpec = isObject(machineTemplate['spec']) ? machineTemplate['spec'] : {};
    const machineMeta = isObject(machineTemplate['metadata']) ? machineTemplate['metadata'] : {};
    spec['machineTemplate'] = {
      ...machineTemplate,
      metadata: {
        labels: {
          ...(machineMeta['labels'] as StringMap | undefined),
          ...input.meta.labels,
          [LABELS.clusterName]: input.cluster.metadata.name!,
          [LABELS.topologyOwned]: '',
        },
        annotations: { ...(machineMeta['annotations'] as StringMap | undefined), ...input.meta.annotations },
      },
      spec: {
        ...machineSpec,
        infrastructureRef: refTo(input.infrastructureTemplate),
        ...((topology.controlPlane?.readinessGates ?? classControlPlane.readinessGates)
          ? { readinessGates: topology.controlPlane?.readinessGates ?? classControlPlane.readinessGates }
          : {}),
        ...(topology.controlPlane?.deletion || classControlPlane.deletion
          ? { deletion: { ...classControlPlane.deletion, ...topology.controlPlane?.deletion } }
          : {}),
      },
    };
  }
}

function machineDeploymentObject(input: {
  cluster: Cluster;
  topology: MachineDeploymentTopology;
  mdClass: MachineDeploymentClass;
  name: string;
  version: string;
  bootstrapTemplate: TemplateObject;
  infrastructureTemplate: TemplateObject;
}): MachineDeployment {
  const { cluster, topology: md, mdClass } = input;
  const clusterName = cluster.metadata.name!;
  const meta = mergedMetadata(mdClass.metadata, md.metadata);
  const selectorLabels = {
    [LABELS.clusterName]: clusterName,
    [LABELS.topologyOwned]: '',
    [LABELS.topologyDeploymentName]: md.name,
  };
  const annotations = withoutKeys(meta.annotations, [
    DEFER_UPGRADE_ANNOTATION,
    HOLD_UPGRADE_SEQUENCE_ANNOTATION,
    IN_PLACE_ANNOTATION,
  ]);
  const { order, ...machineDeletion } = { ...mdClass.deletion, ...md.deletion };
  const strategy = md.rollout?.strategy ?? mdClass.rollout?.strategy;
  const inPlace = inPlacePolicyOf(meta.annotations, md.name);
  const rollout = {
    ...(strategy ? { strategy } : {}),
    ...(md.rollout?.after ? { after: md.rollout.after } : {}),
    ...(inPlace ? { inPlace } : {}),
  };
  const maxInFlight =
    md.healthCheck?.remediation?.maxInFlight ?? mdClass.healthCheck?.remediation?.maxInFlight;
  const failureDomain = md.failureDomain ?? mdClass.failureDomain;
  const minReadySeconds = md.minReadySeconds ?? mdClass.minReadySeconds;
  const readinessGates = md.readinessGates ?? mdClass.readinessGates;
  const taints = md.taints ?? mdClass.taints;
  return {
    apiVersion: CORE_API_VERSION,
    kind: 'MachineDeployment',
    metadata: {
      name: input.name,
      namespace: cluster.metadata.namespace,
      labels: { ...meta.labels, ...selectorLabels },
      annotations,
      ownerReferences: [ownerReferenceTo(cluster)],
    },
    spec: {
      clusterName,
      ...(md.replicas !== undefined ? { replicas: md.replicas } : {}),
      ...(Object.keys(rollout).length > 0 ? { rollout } : {}),
      selector: { matchLabels: selectorLabels },
      ...(order ? { deletion: { order } } : {}),
      ...(maxInFlight !== undefined ? { remediation: { maxInFlight } } : {}),
      template: {
        metadata: { labels: { ...meta.labels, ...selectorLabels }, annotations },
        spec: {
          clusterName,
          version: input.version,
          bootstrap: { configRef: refTo(input.bootstrapTemplate) },
          infrastructureRef: refTo(input.infrastructureTemplate),
          ...(failureDomain ? { failureDomain } : {}),
          ...(minReadySeconds !== undefined ? { minReadySeconds } : {}),
          ...(readinessGates ? { readinessGates } : {}),
          ...(Object.keys(machineDeletion).length > 0 ? { deletion: machineDeletion } : {}),
          ...(taints ? { taints } : {}),
        },
      },
    },
  } as MachineDeployment;
}

/**
 * On a worker class's or a MachineDeployment topology's metadata (Capstan): the MachineDeployment's rollout.inPlace.
 * An annotation, not a field, so the class stays valid under upstream's ClusterClass schema (where it is only copied).
 */
export const IN_PLACE_ANNOTATION = 'capstan.dev/rollout-in-place';

function inPlacePolicyOf(annotations: StringMap, topologyName: string): InPlacePolicy | undefined {
  const value = annotations[IN_PLACE_ANNOTATION];
  if (value === undefined) return undefined;
  if (!(IN_PLACE_POLICIES as readonly string[]).includes(value))
    throw new TopologyError(
      `MachineDeployment topology "${topologyName}": annotation ${IN_PLACE_ANNOTATION} must be one of ${IN_PLACE_POLICIES.join(', ')}`,
    );
  return value as InPlacePolicy;
}

/** Checks and remediation: the topology's override, else the class's; `maxInFlight` belongs to the MachineDeployment. */
function healthCheckSpec(
  classCheck: { checks?: unknown; remediation?: Record<string, unknown> } | undefined,
  topologyCheck: { enabled?: boolean; checks?: unknown; remediation?: Record<string, unknown> } | undefined,
): { checks?: unknown; remediation?: unknown } | undefined {
  if (topologyCheck?.enabled === false) return undefined;
  const source = hasChecks(topologyCheck) || topologyCheck?.remediation ? topologyCheck : classCheck;
  if (!source) return undefined;
  if (topologyCheck?.enabled === undefined && !classCheck && !hasChecks(topologyCheck)) return undefined;
  const remediation = source.remediation
    ? withoutKeys(source.remediation as StringMap, ['maxInFlight'])
    : undefined;
  return {
    ...(source.checks ? { checks: source.checks } : {}),
    ...(remediation && Object.keys(remediation).length > 0 ? { remediation } : {}),
  };
}

function healthCheckObject(
  cluster: Cluster,
  name: string,
  matchLabels: StringMap,
  spec: object,
): MachineHealthCheck {
  return {
    apiVersion: CORE_API_VERSION,
    kind: 'MachineHealthCheck',
    metadata: {
      name,
      namespace: cluster.metadata.namespace,
      labels: { [LABELS.clusterName]: cluster.metadata.name!, [LABELS.topologyOwned]: '' },
      ownerReferences: [ownerReferenceTo(cluster)],
    },
    spec: { clusterName: cluster.metadata.name!, selector: { matchLabels }, ...spec },
  } as MachineHealthCheck;
}

function controlPlaneHealthCheckOf(
  cluster: Cluster,
  blueprint: Blueprint,
  controlPlaneName: string,
): { controlPlaneHealthCheck: MachineHealthCheck } | undefined {
  if (!blueprint.controlPlaneMachineInfrastructureTemplate) return undefined;
  const spec = healthCheckSpec(
    blueprint.clusterClass.spec.controlPlane.healthCheck as never,
    cluster.spec!.topology!.controlPlane?.healthCheck as never,
  );
  if (!spec) return undefined;
  return {
    controlPlaneHealthCheck: healthCheckObject(
      cluster,
      controlPlaneName,
      { [LABELS.topologyOwned]: '', [LABELS.controlPlane]: '' },
      spec,
    ),
  };
}

function machineDeploymentHealthCheck(
  cluster: Cluster,
  md: MachineDeploymentTopology,
  mdClass: { healthCheck?: unknown },
  name: string,
): MachineHealthCheck | undefined {
  const spec = healthCheckSpec(mdClass.healthCheck as never, md.healthCheck as never);
  return (
    spec &&
    healthCheckObject(
      cluster,
      name,
      { [LABELS.topologyOwned]: '', [LABELS.topologyDeploymentName]: md.name },
      spec,
    )
  );
}

export type { Unstructured };
