import {
  ConditionStatus,
  ConditionType,
  LABELS,
  parseApiVersion,
  RESOURCES,
  withConditions,
  type Cluster,
  type ClusterClass,
  type ConditionInput,
  type MachineDeployment,
  type MachineHealthCheck,
} from '@capstan/api';
import {
  BY_CLUSTER_NAME,
  clusterIndexValue,
  isNotFound,
  type Informer,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceType,
} from '@capstan/kube';
import type { DeletionResult, ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { WorkloadContext } from '../shared/workload-context.js';
import type { ExternalPatchCaller } from './external-patches.js';
import {
  computeDesiredState,
  refTo,
  SPEC_HASH_ANNOTATION,
  specHash,
  type DesiredState,
} from './desired-state.js';
import type { CurrentState, TemplateObject } from './topology-blueprint.js';
import { TopologyError } from './topology-errors.js';
import { setPending, TopologyHooks, type BlockingHook, type LifecycleHookCaller } from './topology-hooks.js';
import { containsIntent } from './topology-intent.js';
import { readBlueprint, readCurrentState, topologyMachineDeployments } from './topology-reads.js';
import { resolveVariables, variableDefinitions } from './topology-variables.js';
import { clusterClassKey, clusterClassReadiness } from './cluster-class-ref.js';

// Upstream's Cluster topology controller (core/reconcilers/topology/cluster): from a Cluster's spec.topology and its
// ClusterClass, the desired state (desired-state.ts) is computed in full, then written with server-side apply under
// the topology's field manager: the infrastructure cluster, the control plane and its machine template, the
// Cluster's references, the MachineDeployments with their templates, the MachineHealthChecks; objects the topology
// no longer wants are deleted, and template copies nothing references any more are collected. A write is skipped
// when the object already holds everything the topology wants. The controller owns only TopologyReconciled.

/** Upstream's field manager: objects stay with the same owner when a management cluster moves between cores. */
export const TOPOLOGY_FIELD_MANAGER = 'capi-topology';
/** On the objects the topology writes: the hash of what it wrote, so a field it stopped setting is noticed. */
export const APPLIED_HASH_ANNOTATION = 'topology.capstan.dev/applied-hash';

export const TopologyReconciledReason = {
  ReconcileSucceeded: 'ReconcileSucceeded',
  ReconcileFailed: 'ReconcileFailed',
  ClusterClassNotReconciled: 'ClusterClassNotReconciled',
  ClusterCreating: 'ClusterCreating',
  Deleting: 'Deleting',
  ClusterUpgrading: 'ClusterUpgrading',
  MachineDeploymentsUpgradeDeferred: 'MachineDeploymentsUpgradeDeferred',
} as const;

/** How soon a topology that cannot be reconciled as written is tried again (a class or template may appear). */
const RETRY_MS = 30_000;
/** How often an upgrade's progress is looked at besides the events that wake the controller. */
const UPGRADE_POLL_MS = 10_000;
/** How soon to look again when the cache is behind the API. */
const AGAIN_MS = 2_000;

export interface TopologyDeps {
  workload: Pick<
    WorkloadContext,
    'client' | 'templates' | 'machineDeployments' | 'machineSets' | 'machines' | 'machineHealthChecks'
  >;
  clusterClasses: Informer<ClusterClass>;
  /** The Runtime SDK client lifecycle hooks and external patches are called through; none: no hooks are called. */
  runtime?: LifecycleHookCaller & ExternalPatchCaller;
  /** The cache of a template kind: copies nothing references any more are found there. */
  informerOf: (type: ResourceType) => Informer<TemplateObject>;
  now?: () => Date;
}

const sameRef = (
  a: { apiGroup?: string; kind?: string; name?: string } | undefined,
  b: ReturnType<typeof refTo>,
) => a?.apiGroup === b.apiGroup && a?.kind === b.kind && a?.name === b.name;

/** The object with the hash of its intent in an annotation (computed without the annotation). */
function withAppliedHash<T extends KubernetesObject>(object: T): T {
  const { metadata, ...rest } = object as T & { metadata: Record<string, unknown> };
  const hash = specHash({ ...rest, metadata: { ...metadata, annotations: metadata['annotations'] ?? {} } });
  const annotations = {
    ...(metadata['annotations'] as Record<string, string> | undefined),
    [APPLIED_HASH_ANNOTATION]: hash,
  };
  return { ...object, metadata: { ...object.metadata, annotations } };
}

export class TopologyReconciler implements ReconcilerParts<Cluster> {
  private readonly hooks: TopologyHooks;

  constructor(private readonly deps: TopologyDeps) {
    this.hooks = new TopologyHooks(deps.runtime);
  }

  get now(): () => Date {
    return this.deps.now ?? (() => new Date());
  }

  /** A Cluster pauses its own topology (spec.paused or the paused annotation). */
  clusterOf(cluster: Cluster): Cluster {
    return cluster;
  }

  async reconcileNormal(scope: ReconcileScope<Cluster>): Promise<ReconcileResult | void> {
    const cluster = scope.obj;
    const topology = cluster.spec?.topology;
    if (!topology) return undefined;
    try {
      const clusterClass = this.classOf(cluster);
      const variables = resolveVariables(variableDefinitions(clusterClass), topology);
      const blueprint = await readBlueprint(this.deps.workload, clusterClass);
      const current = await readCurrentState(this.deps.workload, cluster);

      const creating = await this.hooks.beforeClusterCreate(cluster);
      if (creating) return this.blocked(scope, TopologyReconciledReason.ClusterCreating, creating);
      await this.hooks.afterControlPlaneInitialized(cluster);
      const afterControlPlane = await this.hooks.afterControlPlaneUpgrade(cluster, current);
      const hold = { workers: afterControlPlane.holdWorkers };
      let desired = await computeDesiredState({
        cluster,
        blueprint,
        current,
        variables,
        hold,
        external: this.deps.runtime,
      });
      const beforeUpgrade = await this.hooks.beforeClusterUpgrade(cluster, current, desired);
      // The control plane stays where it is until BeforeClusterUpgrade lets it go.
      if (beforeUpgrade)
        desired = await computeDesiredState({
          cluster,
          blueprint,
          current,
          variables,
          external: this.deps.runtime,
          hold: { ...hold, controlPlane: true },
        });
      if (!current.controlPlane) setPending(cluster, ['AfterControlPlaneInitialized']);

      const outcome = await this.apply(scope, current, desired);
      if (outcome === 'cache-behind') return { requeueAfter: AGAIN_MS };
      // scope.obj, not `cluster`: writing the references replaced the object the reconcile goes on with.
      const afterUpgrade = await this.hooks.afterClusterUpgrade(scope.obj, desired);
      const blocking = beforeUpgrade ?? afterControlPlane.blocking ?? afterUpgrade;
      if (blocking) return this.blocked(scope, TopologyReconciledReason.ClusterUpgrading, blocking);
      const condition = progressCondition(desired);
      this.setCondition(scope.obj, condition);
      if (condition.reason !== TopologyReconciledReason.ReconcileSucceeded)
        return { requeueAfter: UPGRADE_POLL_MS };
      return undefined;
    } catch (error) {
      if (!(error instanceof TopologyError)) throw error;
      scope.rc.log.info({ reason: error.reason, problem: error.message }, 'topology not reconciled');
      this.setCondition(scope.obj, {
        type: ConditionType.TopologyReconciled,
        status: ConditionStatus.False,
        reason: error.reason,
        message: error.message,
      });
      return { requeueAfter: RETRY_MS };
    }
  }

  /** A deleted topology Cluster: BeforeClusterDelete decides when the Cluster controller may delete its objects. */
  async reconcileDelete(scope: ReconcileScope<Cluster>): Promise<DeletionResult> {
    if (!scope.obj.spec?.topology) return { done: true };
    const blocking = await this.hooks.beforeClusterDelete(scope.obj);
    if (blocking) return { ...this.blocked(scope, TopologyReconciledReason.Deleting, blocking), done: false };
    return { done: true };
  }

  /** A lifecycle hook holds the topology back: said on TopologyReconciled, and asked again when the hook wants. */
  private blocked(scope: ReconcileScope<Cluster>, reason: string, blocking: BlockingHook): ReconcileResult {
    scope.rc.log.info(
      { hook: blocking.hook, retryAfterSeconds: blocking.retryAfterSeconds },
      'lifecycle hook blocking',
    );
    this.setCondition(scope.obj, {
      type: ConditionType.TopologyReconciled,
      status: ConditionStatus.False,
      reason,
      message: `${blocking.hook} hook is blocking${blocking.message ? `: ${blocking.message}` : ''}`,
    });
    return { requeueAfter: blocking.retryAfterSeconds * 1000 };
  }

  private setCondition(cluster: Cluster, condition: ConditionInput): void {
    cluster.status = {
      ...cluster.status,
      conditions: withConditions(
        cluster.status?.conditions,
        [condition],
        cluster.metadata.generation,
        this.now(),
      ),
    };
  }

  /** The class, reconciled for its current generation (its variables known), or a TopologyError saying why not. */
  private classOf(cluster: Cluster): ClusterClass {
    const { namespace, name } = clusterClassKey(cluster)!;
    const clusterClass = this.deps.clusterClasses.getByName(namespace, name);
    if (!clusterClass) throw new TopologyError(`ClusterClass ${namespace}/${name} was not found`);
    const { reconciled, variablesReady } = clusterClassReadiness(clusterClass);
    if (!reconciled)
      throw new TopologyError(
        `ClusterClass ${namespace}/${name} is not reconciled yet${variablesReady?.message ? `: ${variablesReady.message}` : ''}`,
        'ClusterClassNotReconciled',
      );
    return clusterClass;
  }

  /**
   * Writes the desired state, or stops early when the cache is behind the API (a MachineDeployment it does not show
   * yet): the reconcile runs again soon.
   */
  private async apply(
    scope: ReconcileScope<Cluster>,
    current: CurrentState,
    desired: DesiredState,
  ): Promise<'done' | 'cache-behind'> {
    const { rc } = scope;
    const cluster = scope.obj;
    const infrastructureCluster = await this.write(
      desired.infrastructureCluster,
      current.infrastructureCluster,
      rc,
    );
    const cpTemplate = desired.controlPlaneMachineInfrastructureTemplate;
    if (cpTemplate) {
      const existing = current.controlPlaneMachineInfrastructureTemplate;
      await this.write(
        cpTemplate,
        existing?.metadata.name === cpTemplate.metadata.name ? existing : undefined,
        rc,
      );
    }
    const controlPlane = desired.updateControlPlane
      ? await this.write(desired.controlPlane, current.controlPlane, rc)
      : current.controlPlane!;

    // The Cluster's references, written before anything else can fail.
    const spec = cluster.spec!;
    if (
      !sameRef(spec.infrastructureRef, refTo(infrastructureCluster)) ||
      !sameRef(spec.controlPlaneRef, refTo(controlPlane))
    ) {
      spec.infrastructureRef = refTo(infrastructureCluster);
      spec.controlPlaneRef = refTo(controlPlane);
      await scope.patchNow();
    }

    const healthChecks = new Set<string>();
    if (desired.controlPlaneHealthCheck) {
      healthChecks.add(desired.controlPlaneHealthCheck.metadata.name!);
      await this.writeTyped(
        RESOURCES.MachineHealthCheck,
        desired.controlPlaneHealthCheck,
        this.healthCheck(cluster, desired.controlPlaneHealthCheck),
        rc,
      );
    }

    const existingByTopology = new Map(
      topologyMachineDeployments(this.deps.workload, cluster).map((md) => [
        md.metadata.labels![LABELS.topologyDeploymentName]!,
        md,
      ]),
    );
    for (const md of desired.machineDeployments) {
      const existing = current.machineDeployments.get(md.topologyName);
      // One of this name still being deleted: its replacement waits for it to go (its deletion wakes the controller).
      if (!existing && existingByTopology.get(md.topologyName)?.metadata.deletionTimestamp) continue;
      if (
        !existing &&
        (existingByTopology.has(md.topologyName) || (await this.existsLive(cluster, md.topologyName)))
      )
        return 'cache-behind';
      for (const [template, before] of [
        [md.bootstrapTemplate, existing?.bootstrapTemplate],
        [md.infrastructureTemplate, existing?.infrastructureTemplate],
      ] as const) {
        // A MachineDeployment waiting for its upgrade keeps the templates it has, as they are.
        if (template === before) continue;
        await this.write(template, before?.metadata.name === template.metadata.name ? before : undefined, rc);
      }
      await this.writeTyped(RESOURCES.MachineDeployment, md.object, existing?.object, rc);
      if (md.healthCheck) {
        healthChecks.add(md.healthCheck.metadata.name!);
        await this.writeTyped(
          RESOURCES.MachineHealthCheck,
          md.healthCheck,
          this.healthCheck(cluster, md.healthCheck),
          rc,
        );
      }
    }

    // What the topology no longer wants.
    const wanted = new Set([
      ...desired.machineDeployments.map((md) => md.topologyName),
      ...desired.upgrade.createPending,
    ]);
    for (const [topologyName, md] of existingByTopology)
      if (!wanted.has(topologyName) && !md.metadata.deletionTimestamp) {
        rc.log.info(
          { machineDeployment: md.metadata.name },
          'deleting a MachineDeployment the topology no longer has',
        );
        await this.deleteTyped(RESOURCES.MachineDeployment, md);
      }
    for (const mhc of this.deps.workload.machineHealthChecks.byIndex(
      BY_CLUSTER_NAME,
      this.clusterKey(cluster),
    ))
      if (
        mhc.metadata.labels?.[LABELS.topologyOwned] !== undefined &&
        !healthChecks.has(mhc.metadata.name!) &&
        !mhc.metadata.deletionTimestamp
      )
        await this.deleteTyped(RESOURCES.MachineHealthCheck, mhc);
    await this.collectTemplates(cluster, current, desired, rc);
    return 'done';
  }

  private clusterKey(cluster: Cluster): string {
    return clusterIndexValue(cluster.metadata.namespace, cluster.metadata.name!);
  }

  private healthCheck(cluster: Cluster, wanted: MachineHealthCheck): MachineHealthCheck | undefined {
    return this.deps.workload.machineHealthChecks.getByName(
      cluster.metadata.namespace,
      wanted.metadata.name!,
    );
  }

  /** Whether the API already has the MachineDeployment the cache does not show yet (upstream's live double check). */
  private async existsLive(cluster: Cluster, topologyName: string): Promise<boolean> {
    const { items } = await this.deps.workload.client
      .resource<MachineDeployment>(RESOURCES.MachineDeployment)
      .list({
        namespace: cluster.metadata.namespace,
        labelSelector: `${LABELS.clusterName}=${cluster.metadata.name},${LABELS.topologyDeploymentName}=${topologyName}`,
      });
    return items.length > 0;
  }

  /** A provider object or template: its resource resolved from its API version, then applied as writeTyped does. */
  private async write(
    wanted: TemplateObject,
    current: TemplateObject | undefined,
    rc: ReconcileContext,
  ): Promise<TemplateObject> {
    const { group, version } = parseApiVersion(wanted.apiVersion);
    const type = await this.deps.workload.templates.resolve(group, wanted.kind, version);
    return this.writeTyped(type, wanted, current, rc);
  }

  /** Server-side apply under the topology's field manager, unless the object already holds all of the intent. */
  private async writeTyped<T extends KubernetesObject>(
    type: ResourceType,
    wanted: T,
    current: T | undefined,
    rc: ReconcileContext,
  ): Promise<T> {
    const intent = withAppliedHash(wanted);
    if (current && containsIntent(current, intent)) return current;
    const written = await this.deps.workload.client
      .resource<T>(type)
      .apply(intent, { fieldManager: TOPOLOGY_FIELD_MANAGER });
    rc.log.info(
      { kind: type.kind, name: wanted.metadata?.name, created: current === undefined },
      'topology object applied',
    );
    return written;
  }

  private async deleteTyped(type: ResourceType, object: KubernetesObject): Promise<void> {
    await this.deps.workload.client
      .resource(type)
      .delete({ namespace: object.metadata!.namespace, name: object.metadata!.name! })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }

  /**
   * Deletes the template copies of this Cluster that nothing references any more: not the control plane, not a
   * MachineDeployment (as the cache or the desired state has it), not a MachineSet still winding down.
   */
  private async collectTemplates(
    cluster: Cluster,
    current: CurrentState,
    desired: DesiredState,
    rc: ReconcileContext,
  ): Promise<void> {
    const referenced = new Set<string>();
    const note = (ref: { kind?: string; name?: string } | undefined) =>
      ref?.name && referenced.add(`${ref.kind}/${ref.name}`);
    const kinds = new Map<string, TemplateObject>();
    const consider = (template: TemplateObject | undefined) => {
      if (!template) return;
      note({ kind: template.kind, name: template.metadata.name });
      kinds.set(`${template.apiVersion}/${template.kind}`, template);
    };
    consider(desired.controlPlaneMachineInfrastructureTemplate);
    consider(current.controlPlaneMachineInfrastructureTemplate);
    for (const md of desired.machineDeployments) {
      consider(md.bootstrapTemplate);
      consider(md.infrastructureTemplate);
    }
    for (const md of current.machineDeployments.values()) {
      consider(md.bootstrapTemplate);
      consider(md.infrastructureTemplate);
      note(md.object.spec.template.spec.bootstrap.configRef);
      note(md.object.spec.template.spec.infrastructureRef);
    }
    for (const machineSet of this.deps.workload.machineSets.byIndex(
      BY_CLUSTER_NAME,
      this.clusterKey(cluster),
    )) {
      note(machineSet.spec.template.spec.bootstrap.configRef);
      note(machineSet.spec.template.spec.infrastructureRef);
    }
    const cpRef = (
      current.controlPlane?.['spec'] as
        { machineTemplate?: { spec?: { infrastructureRef?: { kind?: string; name?: string } } } } | undefined
    )?.machineTemplate?.spec?.infrastructureRef;
    note(cpRef);
    for (const template of kinds.values()) {
      const { group, version } = parseApiVersion(template.apiVersion);
      const type = await this.deps.workload.templates.resolve(group, template.kind, version);
      for (const copy of this.deps.informerOf(type).byIndex(BY_CLUSTER_NAME, this.clusterKey(cluster))) {
        const ours =
          copy.metadata.labels?.[LABELS.topologyOwned] !== undefined &&
          copy.metadata.annotations?.[SPEC_HASH_ANNOTATION] !== undefined;
        if (
          !ours ||
          copy.metadata.deletionTimestamp ||
          referenced.has(`${copy.kind ?? template.kind}/${copy.metadata.name}`)
        )
          continue;
        rc.log.info(
          { kind: template.kind, name: copy.metadata.name },
          'deleting a template copy nothing references',
        );
        await this.deleteTyped(type, copy);
      }
    }
  }
}

/** TopologyReconciled once everything is written: True, or False while an upgrade moves or waits. */
function progressCondition(desired: DesiredState): ConditionInput {
  const upgrade = desired.upgrade;
  const version = desired.controlPlane['spec'] as { version?: string };
  const parts: string[] = [];
  if (upgrade.controlPlaneUpgrading) parts.push(`control plane upgrading to ${version.version}`);
  if (upgrade.machineDeploymentsUpgrading.length > 0)
    parts.push(`MachineDeployments ${upgrade.machineDeploymentsUpgrading.join(', ')} upgrading`);
  if (upgrade.upgradePending.length > 0)
    parts.push(`MachineDeployments ${upgrade.upgradePending.join(', ')} pending upgrade`);
  if (upgrade.createPending.length > 0)
    parts.push(
      `MachineDeployments ${upgrade.createPending.join(', ')} pending create (the control plane is upgrading)`,
    );
  if (parts.length > 0)
    return {
      type: ConditionType.TopologyReconciled,
      status: ConditionStatus.False,
      reason: TopologyReconciledReason.ClusterUpgrading,
      message: `Cluster is upgrading: ${parts.join('; ')}`,
    };
  if (upgrade.deferred.length > 0)
    return {
      type: ConditionType.TopologyReconciled,
      status: ConditionStatus.False,
      reason: TopologyReconciledReason.MachineDeploymentsUpgradeDeferred,
      message: `MachineDeployments ${upgrade.deferred.join(', ')} upgrade deferred`,
    };
  return {
    type: ConditionType.TopologyReconciled,
    status: ConditionStatus.True,
    reason: TopologyReconciledReason.ReconcileSucceeded,
  };
}
