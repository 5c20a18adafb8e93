import {
  LABELS,
  parseApiVersion,
  type Cluster,
  type ClusterClass,
  type ContractVersionedObjectReference,
  type MachineDeployment,
  type TemplateReference,
} from '@capstan/api';
import { BY_CLUSTER_NAME, clusterIndexValue, isNotFound } from '@capstan/kube';
import { controlledBy, type WorkloadContext } from '../shared/workload-context.js';
import type {
  Blueprint,
  MachineDeploymentBlueprint,
  CurrentMachineDeployment,
  CurrentState,
  TemplateObject,
} from './topology-blueprint.js';
import { TopologyError } from './topology-errors.js';

// Reads of a topology: the class's templates (the blueprint) and the objects the topology made (the current state),
// from the caches (a GET only for an object a cache does not hold yet). A missing template of the class is a
// TopologyError naming it; a missing current object is simply absent (it is created again).

type Reads = Pick<WorkloadContext, 'templates' | 'machineDeployments' | 'machineSets' | 'machines'>;

/** A template the class names, in the class's namespace, at the version the reference gives. */
async function classTemplate(
  reads: Reads,
  namespace: string,
  ref: TemplateReference,
  what: string,
): Promise<TemplateObject> {
  const { group, version } = parseApiVersion(ref.apiVersion);
  try {
    return (await reads.templates.get(namespace, {
      apiGroup: group,
      kind: ref.kind,
      name: ref.name,
      version,
    })) as TemplateObject;
  } catch (error) {
    if (isNotFound(error))
      throw new TopologyError(
        `${what} ${ref.kind} ${namespace}/${ref.name} of the ClusterClass was not found`,
      );
    throw error;
  }
}

export async function readBlueprint(reads: Reads, clusterClass: ClusterClass): Promise<Blueprint> {
  const namespace = clusterClass.metadata!.namespace!;
  const spec = clusterClass.spec;
  const [infrastructureClusterTemplate, controlPlaneTemplate, controlPlaneMachineInfrastructureTemplate] =
    await Promise.all([
      classTemplate(reads, namespace, spec.infrastructure.templateRef, 'infrastructure cluster template'),
      classTemplate(reads, namespace, spec.controlPlane.templateRef, 'control plane template'),
      spec.controlPlane.machineInfrastructure
        ? classTemplate(
            reads,
            namespace,
            spec.controlPlane.machineInfrastructure.templateRef,
            'control plane machine infrastructure template',
          )
        : undefined,
    ]);
  const machineDeploymentClasses = new Map<string, MachineDeploymentBlueprint>();
  for (const mdClass of spec.workers?.machineDeployments ?? []) {
    const what = `of worker class ${mdClass.class}`;
    const [bootstrapTemplate, infrastructureTemplate] = await Promise.all([
      classTemplate(reads, namespace, mdClass.bootstrap.templateRef, `bootstrap template ${what}:`),
      classTemplate(reads, namespace, mdClass.infrastructure.templateRef, `infrastructure template ${what}:`),
    ]);
    machineDeploymentClasses.set(mdClass.class, {
      class: mdClass,
      bootstrapTemplate,
      infrastructureTemplate,
    });
  }
  return {
    clusterClass,
    infrastructureClusterTemplate,
    controlPlaneTemplate,
    ...(controlPlaneMachineInfrastructureTemplate ? { controlPlaneMachineInfrastructureTemplate } : {}),
    machineDeploymentClasses,
  };
}

/** The object a reference names, or undefined when it does not exist (yet, or any more). */
async function referenced(
  reads: Reads,
  namespace: string,
  ref: ContractVersionedObjectReference | undefined,
): Promise<TemplateObject | undefined> {
  if (!ref?.name) return undefined;
  try {
    return (await reads.templates.get(namespace, ref)) as TemplateObject;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

const recordAt = (value: unknown, key: string): Record<string, unknown> | undefined => {
  const inner =
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : undefined;
};

/** The topology's MachineDeployments in the cache, by topology name. */
export function topologyMachineDeployments(reads: Reads, cluster: Cluster): MachineDeployment[] {
  return reads.machineDeployments
    .byIndex(BY_CLUSTER_NAME, clusterIndexValue(cluster.metadata.namespace, cluster.metadata.name!))
    .filter(
      (md) =>
        md.metadata.labels?.[LABELS.topologyOwned] !== undefined &&
        md.metadata.labels?.[LABELS.topologyDeploymentName] !== undefined,
    );
}

export async function readCurrentState(reads: Reads, cluster: Cluster): Promise<CurrentState> {
  const namespace = cluster.metadata.namespace!;
  const [infrastructureCluster, controlPlane] = await Promise.all([
    referenced(reads, namespace, cluster.spec?.infrastructureRef),
    referenced(reads, namespace, cluster.spec?.controlPlaneRef),
  ]);
  const machineTemplateRef = recordAt(recordAt(recordAt(controlPlane, 'spec'), 'machineTemplate'), 'spec')?.[
    'infrastructureRef'
  ] as ContractVersionedObjectReference | undefined;
  const controlPlaneMachineInfrastructureTemplate = await referenced(reads, namespace, machineTemplateRef);

  const machineDeployments = new Map<string, CurrentMachineDeployment>();
  for (const md of topologyMachineDeployments(reads, cluster)) {
    if (md.metadata.deletionTimestamp) continue;
    const topologyName = md.metadata.labels![LABELS.topologyDeploymentName]!;
    const machineSpec = md.spec.template.spec;
    const [bootstrapTemplate, infrastructureTemplate] = await Promise.all([
      referenced(reads, namespace, machineSpec.bootstrap.configRef),
      referenced(reads, namespace, machineSpec.infrastructureRef),
    ]);
    const upgrading = controlledBy(reads.machineSets, md).some((machineSet) =>
      controlledBy(reads.machines, machineSet).some(
        (machine) => machine.spec.version !== machineSpec.version,
      ),
    );
    machineDeployments.set(topologyName, {
      object: md,
      ...(bootstrapTemplate ? { bootstrapTemplate } : {}),
      ...(infrastructureTemplate ? { infrastructureTemplate } : {}),
      upgrading,
    });
  }
  return {
    ...(infrastructureCluster ? { infrastructureCluster } : {}),
    ...(controlPlane ? { controlPlane } : {}),
    ...(controlPlaneMachineInfrastructureTemplate ? { controlPlaneMachineInfrastructureTemplate } : {}),
    machineDeployments,
  };
}
