import type { KubernetesObject, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import {
  ConditionStatus,
  ConditionType,
  getCondition,
  RESOURCES,
  withConditions,
  type Cluster,
  type ClusterResourceSet,
  type ClusterResourceSetBinding,
  type ConditionInput,
  type ResourceBinding,
  type ResourceRef,
  type ResourceSetBinding,
} from '@capstan/api';
import {
  CONFIG_MAPS,
  hasOwnerReference,
  isBeingDeleted,
  isConflict,
  isNotFound,
  removeOwnerReference,
  SECRETS,
  setOwnerReference,
  type Informer,
  type KubeClient,
  type ReconcileResult,
} from '@capstan/kube';
import type { DeletionResult, ReconcilerParts, ReconcileScope } from '@capstan/provider-kit';
import { WorkloadClusterUnavailableError, type WorkloadClusters } from '../../remote/workload-clusters.js';
import { selectorMatches } from '../shared/label-selector.js';
import {
  RESOURCE_SET_SECRET_TYPE,
  resourceHash,
  resourceObjects,
  ResourceSetDataError,
  resourceValues,
} from './resource-set-data.js';
import { applyToWorkload, WorkloadApplyError } from './workload-apply.js';

// Upstream's ClusterResourceSet controller (exp/addons, core/reconcilers/clusterresourceset): the Secrets and
// ConfigMaps a set names are applied to every Cluster its selector matches, once (ApplyOnce) or again whenever their
// content changes (Reconcile); one ClusterResourceSetBinding per Cluster records what was applied, with its hash.

export const CLUSTER_RESOURCE_SET_FINALIZER = 'addons.cluster.x-k8s.io';
export const RESOURCES_APPLIED = 'ResourcesApplied';
export const CLUSTER_RESOURCE_SET_CONDITIONS = [RESOURCES_APPLIED] as const;

export const ResourcesAppliedReason = {
  Applied: 'Applied',
  NotApplied: 'NotApplied',
  WrongSecretType: 'WrongSecretType',
  ResourceNotFound: 'ResourceNotFound',
} as const;

/** How often a Reconcile set looks at its resources again by default (their content is read, not watched). */
export const RECONCILE_STRATEGY_PERIOD_MS = 30_000;
/** How soon a set that could not apply everything tries again. */
export const RETRY_MS = 15_000;
/** How many problems a condition message lists before it says how many more there are. */
const LISTED_PROBLEMS = 5;

interface ResolvedResource {
  ref: ResourceRef;
  hash: string;
  objects: KubernetesObject[];
}

type Problem = { reason: keyof typeof ResourcesAppliedReason; message: string };

const refKey = (ref: Pick<ResourceRef, 'kind' | 'name'>) => `${ref.kind}/${ref.name}`;

/** An empty selector matches nothing (upstream: a set must say which clusters it is for). */
function selects(set: ClusterResourceSet, cluster: Cluster): boolean {
  const selector = set.spec.clusterSelector;
  const empty =
    Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
  return !empty && selectorMatches(selector, cluster.metadata.labels);
}

export interface ClusterResourceSetDeps {
  client: KubeClient;
  clusters: Informer<Cluster>;
  bindings: Informer<ClusterResourceSetBinding>;
  workloadClusters: WorkloadClusters;
  now: () => Date;
  /** How often a Reconcile set reads its resources again. */
  reconcilePeriodMs: number;
}

export class ClusterResourceSetReconciler implements ReconcilerParts<ClusterResourceSet> {
  constructor(private readonly deps: ClusterResourceSetDeps) {}

  /** The Clusters a set applies to now: matched, not being deleted, their control plane initialized. */
  targetsOf(set: ClusterResourceSet): Cluster[] {
    return this.deps.clusters
      .list(set.metadata.namespace)
      .filter((cluster) => selects(set, cluster) && !isBeingDeleted(cluster));
  }

  async reconcileNormal(scope: ReconcileScope<ClusterResourceSet>): Promise<ReconcileResult | undefined> {
    const set = scope.obj;
    await this.dropStaleBindings(set);
    const problems: Problem[] = [];
    const resources = await this.resolve(set, problems);
    let waiting = false;
    for (const cluster of this.targetsOf(set)) {
      const name = cluster.metadata.name!;
      if (
        getCondition(cluster.status?.conditions, ConditionType.ControlPlaneInitialized)?.status !== 'True'
      ) {
        // The Cluster watch brings the set back when the control plane is initialized.
        waiting = true;
        continue;
      }
      try {
        await this.applyTo(set, cluster, resources, problems);
      } catch (error) {
        if (error instanceof WorkloadClusterUnavailableError) {
          problems.push({
            reason: 'NotApplied',
            message: `cluster ${name} cannot be reached (${error.reason})`,
          });
        } else if (isConflict(error)) {
          problems.push({
            reason: 'NotApplied',
            message: `ClusterResourceSetBinding ${name} changed meanwhile`,
          });
        } else throw error;
      }
    }
    scope.obj.status = {
      ...scope.obj.status,
      conditions: withConditions(
        scope.obj.status?.conditions,
        [appliedCondition(problems, waiting)],
        set.metadata.generation,
        this.deps.now(),
      ),
    };
    if (problems.some((p) => p.reason === 'NotApplied' || p.reason === 'ResourceNotFound'))
      return { requeueAfter: RETRY_MS };
    // Reconcile: the resources' content is read on each pass, so a change is applied at the next one.
    return set.spec.strategy === 'Reconcile' ? { requeueAfter: this.deps.reconcilePeriodMs } : undefined;
  }

  /**
   * The set goes: its entry leaves every binding (a binding left empty is deleted), and what it applied stays in the
   * workload clusters, as upstream leaves it.
   */
  async reconcileDelete(scope: ReconcileScope<ClusterResourceSet>): Promise<DeletionResult> {
    const set = scope.obj;
    for (const cached of this.deps.bindings.list(set.metadata.namespace)) {
      const listed = (cached.spec.bindings ?? []).some((b) => b.clusterResourceSetName === set.metadata.name);
      if (!listed && !hasOwnerReference(set, cached)) continue;
      try {
        await this.leaveBinding(set, cached);
      } catch (error) {
        if (isConflict(error)) return { requeueAfter: 1_000 };
        throw error;
      }
    }
    return { done: true };
  }

  /**
   * The set's bindings whose Cluster is gone or going are deleted: a binding belongs to its Cluster (upstream's
   * ClusterResourceSetBinding controller does this; the garbage collector cannot, since the sets own the binding too).
   * A Cluster the set no longer selects (its labels changed) loses the set's entry; what was applied stays.
   */
  private async dropStaleBindings(set: ClusterResourceSet): Promise<void> {
    const bindings = this.deps.client.resource<ClusterResourceSetBinding>(
      RESOURCES.ClusterResourceSetBinding,
    );
    for (const binding of this.deps.bindings.list(set.metadata.namespace)) {
      if (!(binding.spec.bindings ?? []).some((b) => b.clusterResourceSetName === set.metadata.name))
        continue;
      const cluster = this.deps.clusters.getByName(binding.metadata.namespace, binding.spec.clusterName);
      if (cluster && !isBeingDeleted(cluster)) {
        if (!selects(set, cluster)) await this.leaveBinding(set, binding);
        continue;
      }
      await bindings
        .delete({ namespace: binding.metadata.namespace, name: binding.metadata.name! })
        .catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
    }
  }

  /** Takes the set out of a binding: its entry and owner reference; a binding left empty is deleted. */
  private async leaveBinding(set: ClusterResourceSet, cached: ClusterResourceSetBinding): Promise<void> {
    const bindings = this.deps.client.resource<ClusterResourceSetBinding>(
      RESOURCES.ClusterResourceSetBinding,
    );
    const binding = structuredClone(cached);
    binding.spec.bindings = (binding.spec.bindings ?? []).filter(
      (b) => b.clusterResourceSetName !== set.metadata.name,
    );
    removeOwnerReference(set, binding);
    try {
      if (binding.spec.bindings.length === 0)
        await bindings.delete({ namespace: binding.metadata.namespace, name: binding.metadata.name! });
      else await bindings.replace(binding);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** The set's Secrets and ConfigMaps, read and parsed; what cannot be used is a problem, the rest goes on. */
  private async resolve(set: ClusterResourceSet, problems: Problem[]): Promise<ResolvedResource[]> {
    const namespace = set.metadata.namespace!;
    const resolved: ResolvedResource[] = [];
    for (const ref of set.spec.resources) {
      const type = ref.kind === 'Secret' ? SECRETS : CONFIG_MAPS;
      const client = this.deps.client.resource<V1Secret | V1ConfigMap>(type);
      let resource: V1Secret | V1ConfigMap;
      try {
        resource = await client.get({ namespace, name: ref.name });
      } catch (error) {
        if (!isNotFound(error)) throw error;
        problems.push({ reason: 'ResourceNotFound', message: `${ref.kind} ${ref.name} not found` });
        continue;
      }
      if (ref.kind === 'Secret' && (resource as V1Secret).type !== RESOURCE_SET_SECRET_TYPE) {
        problems.push({
          reason: 'WrongSecretType',
          message: `Secret ${ref.name} has type ${(resource as V1Secret).type ?? 'Opaque'}, not ${RESOURCE_SET_SECRET_TYPE}`,
        });
        continue;
      }
      // Upstream also makes the set an owner of its Secrets and ConfigMaps (for clusterctl move); the core only reads
      // them, so it needs no right to write any Secret.
      const values = resourceValues(resource, ref.kind);
      try {
        resolved.push({ ref, hash: resourceHash(values), objects: resourceObjects(values) });
      } catch (error) {
        if (!(error instanceof ResourceSetDataError)) throw error;
        problems.push({ reason: 'NotApplied', message: `${ref.kind} ${ref.name}: ${error.message}` });
      }
    }
    return resolved;
  }

  /** Applies what the cluster's binding says is not applied (or, under Reconcile, changed), and records it. */
  private async applyTo(
    set: ClusterResourceSet,
    cluster: Cluster,
    resources: readonly ResolvedResource[],
    problems: Problem[],
  ): Promise<void> {
    const namespace = cluster.metadata.namespace!;
    const name = cluster.metadata.name!;
    const cached = this.deps.bindings.getByName(namespace, name);
    const listedBefore = (cached?.spec.bindings ?? []).some(
      (b) => b.clusterResourceSetName === set.metadata.name,
    );
    // Nothing to apply and nothing recorded (every resource missing or refused): no binding is made for it.
    if (resources.length === 0 && !listedBefore) return;
    const binding = this.bindingFor(set, cluster, cached);
    const entry: ResourceSetBinding = binding.spec.bindings?.find(
      (b) => b.clusterResourceSetName === set.metadata.name,
    ) ?? { clusterResourceSetName: set.metadata.name!, resources: [] };
    const recorded = new Map((entry.resources ?? []).map((r) => [refKey(r), r]));
    const reconcile = set.spec.strategy === 'Reconcile';
    let access: Awaited<ReturnType<WorkloadClusters['access']>>;
    let changed = false;
    for (const resource of resources) {
      const prior = recorded.get(refKey(resource.ref));
      if (prior?.applied && (!reconcile || prior.hash === resource.hash)) continue;
      access ??= await this.deps.workloadClusters.access(namespace, name);
      if (!access)
        throw new WorkloadClusterUnavailableError(namespace, name, 'NotConnected', 'not connected yet');
      let result: ResourceBinding;
      try {
        await applyToWorkload(access.client, resource.objects, reconcile);
        result = {
          ...resource.ref,
          hash: resource.hash,
          applied: true,
          lastAppliedTime: isoNow(this.deps.now()),
        };
      } catch (error) {
        if (!(error instanceof WorkloadApplyError)) throw error;
        problems.push({
          reason: 'NotApplied',
          message: `${refKey(resource.ref)} on cluster ${name}: ${error.message}`,
        });
        result = { ...resource.ref, hash: resource.hash, applied: false };
      }
      recorded.set(refKey(resource.ref), result);
      changed = true;
    }
    const listed = (binding.spec.bindings ?? []).some((b) => b.clusterResourceSetName === set.metadata.name);
    if (!changed && listed && binding.metadata.resourceVersion) return;
    const bindings = (binding.spec.bindings ?? []).filter(
      (b) => b.clusterResourceSetName !== set.metadata.name,
    );
    bindings.push({ clusterResourceSetName: set.metadata.name!, resources: [...recorded.values()] });
    binding.spec.bindings = bindings;
    const client = this.deps.client.resource<ClusterResourceSetBinding>(RESOURCES.ClusterResourceSetBinding);
    if (binding.metadata.resourceVersion) await client.replace(binding);
    else await client.create(binding);
  }

  /** The cluster's binding as cached (a copy), or a new one: named like the Cluster, owned by it and by the set. */
  private bindingFor(
    set: ClusterResourceSet,
    cluster: Cluster,
    cached: ClusterResourceSetBinding | undefined,
  ): ClusterResourceSetBinding {
    const binding: ClusterResourceSetBinding = cached
      ? structuredClone(cached)
      : {
          apiVersion: RESOURCES.ClusterResourceSetBinding.apiVersion,
          kind: RESOURCES.ClusterResourceSetBinding.kind,
          metadata: { namespace: cluster.metadata.namespace, name: cluster.metadata.name },
          spec: { clusterName: cluster.metadata.name!, bindings: [] },
        };
    // The Cluster owns it, so it goes with the Cluster; each set is an owner too, as upstream records them.
    if (!hasOwnerReference(cluster, binding)) setOwnerReference(cluster, binding);
    if (!hasOwnerReference(set, binding)) setOwnerReference(set, binding);
    return binding;
  }
}

const isoNow = (now: Date) => now.toISOString().replace(/\.\d{3}Z$/, 'Z');

function appliedCondition(problems: readonly Problem[], waiting: boolean): ConditionInput {
  if (problems.length === 0) {
    return {
      type: RESOURCES_APPLIED,
      status: ConditionStatus.True,
      reason: ResourcesAppliedReason.Applied,
      message: waiting ? 'applied to every matched cluster whose control plane is initialized' : '',
    };
  }
  const listed = problems.slice(0, LISTED_PROBLEMS).map((p) => p.message);
  if (problems.length > LISTED_PROBLEMS) listed.push(`and ${problems.length - LISTED_PROBLEMS} more`);
  return {
    type: RESOURCES_APPLIED,
    status: ConditionStatus.False,
    reason: ResourcesAppliedReason[problems[0]!.reason],
    message: listed.join('; '),
  };
}
