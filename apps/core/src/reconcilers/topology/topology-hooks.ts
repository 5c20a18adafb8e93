import { ConditionStatus, type Cluster } from '@capstan/api';
import type { HookName, HookRequestBody } from '../../runtime/runtime-hooks.js';
import type { HookResult, HookTarget } from '../../runtime/runtime-client.js';
import type { CurrentState } from './topology-blueprint.js';
import type { DesiredState } from './desired-state.js';

// The Runtime SDK lifecycle hooks of a topology Cluster (upstream's desiredstate lifecycle_hooks.go and
// internal/hooks/tracking.go), called where upstream calls them:
// - BeforeClusterCreate before the topology's first objects exist; a blocking answer holds the creation.
// - AfterControlPlaneInitialized once the control plane is initialized (tracked as pending from creation on).
// - BeforeClusterUpgrade when the control plane is about to move to a new version; a blocking answer holds it. Once
//   it passes, AfterControlPlaneUpgrade and AfterClusterUpgrade are pending.
// - AfterControlPlaneUpgrade once the control plane has arrived; a blocking answer holds the workers.
// - AfterClusterUpgrade once everything runs the new version; a blocking answer holds the next upgrade.
// - BeforeClusterDelete when the Cluster is deleted; until it lets go, the Cluster controller deletes nothing.
// What is still to be called lives in the Cluster's pending-hooks annotation, so a restart or another replica goes
// on where this one stopped.

export const PENDING_HOOKS_ANNOTATION = 'runtime.cluster.x-k8s.io/pending-hooks';
/** Set once BeforeClusterDelete lets a topology Cluster go: the Cluster controller deletes its objects only then. */
export const OK_TO_DELETE_ANNOTATION = 'runtime.cluster.x-k8s.io/ok-to-delete';

/** The part of the Runtime SDK client the topology uses. */
export interface LifecycleHookCaller {
  callAll<H extends HookName>(hook: H, target: HookTarget, request: HookRequestBody<H>): Promise<HookResult>;
}

/** What a blocking hook says, for the Cluster's condition (the extension's message, bounded). */
export interface BlockingHook {
  hook: HookName;
  retryAfterSeconds: number;
  message: string;
}

const MESSAGE_LIMIT = 256;

export function pendingHooks(cluster: Cluster): Set<string> {
  const value = cluster.metadata.annotations?.[PENDING_HOOKS_ANNOTATION] ?? '';
  return new Set(value.split(',').filter((hook) => hook !== ''));
}

/** Marks hooks pending (or done) on the Cluster object the reconcile writes. */
export function setPending(
  cluster: Cluster,
  add: readonly HookName[],
  remove: readonly HookName[] = [],
): void {
  const pending = pendingHooks(cluster);
  for (const hook of add) pending.add(hook);
  for (const hook of remove) pending.delete(hook);
  const annotations = { ...cluster.metadata.annotations };
  if (pending.size === 0) delete annotations[PENDING_HOOKS_ANNOTATION];
  else annotations[PENDING_HOOKS_ANNOTATION] = [...pending].sort().join(',');
  cluster.metadata.annotations = annotations;
}

/** The Cluster as hooks receive it: without the server's bookkeeping. */
function hookCluster(cluster: Cluster): Cluster {
  const { managedFields: _managed, ...metadata } = cluster.metadata as Cluster['metadata'] & {
    managedFields?: unknown;
  };
  return { ...cluster, metadata };
}

export class TopologyHooks {
  constructor(private readonly caller: LifecycleHookCaller | undefined) {}

  private async call<H extends HookName>(
    hook: H,
    cluster: Cluster,
    request: Omit<HookRequestBody<H>, 'cluster'>,
  ): Promise<BlockingHook | undefined> {
    if (!this.caller) return undefined;
    const body = { ...request, cluster: hookCluster(cluster) } as unknown as HookRequestBody<H>;
    const result = await this.caller.callAll(hook, cluster, body);
    return result.retryAfterSeconds > 0
      ? { hook, retryAfterSeconds: result.retryAfterSeconds, message: result.message.slice(0, MESSAGE_LIMIT) }
      : undefined;
  }

  /** Before the first objects of the topology exist: a blocking answer holds the creation. */
  async beforeClusterCreate(cluster: Cluster): Promise<BlockingHook | undefined> {
    if (cluster.spec?.infrastructureRef || cluster.spec?.controlPlaneRef) return undefined;
    return this.call('BeforeClusterCreate', cluster, {});
  }

  /** BeforeClusterUpgrade, when the desired state starts moving the control plane to a new version. */
  async beforeClusterUpgrade(
    cluster: Cluster,
    current: CurrentState,
    desired: DesiredState,
  ): Promise<BlockingHook | undefined> {
    const from = (current.controlPlane?.['spec'] as { version?: string } | undefined)?.version;
    const to = (desired.controlPlane['spec'] as { version?: string }).version;
    if (from === undefined || to === undefined || from === to) return undefined;
    // The previous upgrade's AfterClusterUpgrade holds the next one (upstream's webhook refuses the change meanwhile).
    if (pendingHooks(cluster).has('AfterClusterUpgrade'))
      return {
        hook: 'AfterClusterUpgrade',
        retryAfterSeconds: 10,
        message: 'the previous upgrade is not done: AfterClusterUpgrade has not let it finish',
      };
    const blocking = await this.call('BeforeClusterUpgrade', cluster, {
      fromKubernetesVersion: from,
      toKubernetesVersion: to,
      controlPlaneUpgrades: [{ version: to }],
      workersUpgrades: [{ version: to }],
    });
    if (!blocking) setPending(cluster, ['AfterControlPlaneUpgrade', 'AfterClusterUpgrade']);
    return blocking;
  }

  /**
   * While AfterControlPlaneUpgrade is pending the workers wait: for the control plane to run the topology version,
   * then for the hook to answer without blocking.
   */
  async afterControlPlaneUpgrade(
    cluster: Cluster,
    current: CurrentState,
  ): Promise<{ holdWorkers: boolean; blocking?: BlockingHook }> {
    if (!pendingHooks(cluster).has('AfterControlPlaneUpgrade')) return { holdWorkers: false };
    const version = cluster.spec!.topology!.version;
    const status = current.controlPlane?.['status'] as { version?: string } | undefined;
    const spec = current.controlPlane?.['spec'] as { version?: string } | undefined;
    if (spec?.version !== version || status?.version !== version) return { holdWorkers: true };
    const blocking = await this.call('AfterControlPlaneUpgrade', cluster, {
      kubernetesVersion: version,
      controlPlaneUpgrades: [],
      workersUpgrades: [{ version }],
    });
    if (!blocking) setPending(cluster, [], ['AfterControlPlaneUpgrade']);
    return blocking ? { holdWorkers: true, blocking } : { holdWorkers: false };
  }

  /** AfterControlPlaneInitialized, once pending and the Cluster says its control plane is initialized (never blocks). */
  async afterControlPlaneInitialized(cluster: Cluster): Promise<void> {
    if (!pendingHooks(cluster).has('AfterControlPlaneInitialized')) return;
    const initialized =
      cluster.status?.initialization?.controlPlaneInitialized === true ||
      cluster.status?.conditions?.some(
        (c) => c.type === 'ControlPlaneInitialized' && c.status === ConditionStatus.True,
      );
    if (!initialized) return;
    await this.call('AfterControlPlaneInitialized', cluster, {});
    setPending(cluster, [], ['AfterControlPlaneInitialized']);
  }

  /** BeforeClusterDelete; once it lets go, the ok-to-delete annotation (also when no extension has a handler). */
  async beforeClusterDelete(cluster: Cluster): Promise<BlockingHook | undefined> {
    if (cluster.metadata.annotations?.[OK_TO_DELETE_ANNOTATION] !== undefined) return undefined;
    const blocking = await this.call('BeforeClusterDelete', cluster, {});
    if (!blocking)
      cluster.metadata.annotations = { ...cluster.metadata.annotations, [OK_TO_DELETE_ANNOTATION]: '' };
    return blocking;
  }

  /** AfterClusterUpgrade, once pending and nothing of the upgrade is left: a blocking answer holds the next upgrade. */
  async afterClusterUpgrade(cluster: Cluster, desired: DesiredState): Promise<BlockingHook | undefined> {
    const pending = pendingHooks(cluster);
    if (!pending.has('AfterClusterUpgrade') || pending.has('AfterControlPlaneUpgrade')) return undefined;
    const upgrade = desired.upgrade;
    if (
      upgrade.controlPlaneUpgrading ||
      upgrade.machineDeploymentsUpgrading.length > 0 ||
      upgrade.upgradePending.length > 0 ||
      upgrade.createPending.length > 0 ||
      upgrade.deferred.length > 0
    )
      return undefined;
    const blocking = await this.call('AfterClusterUpgrade', cluster, {
      kubernetesVersion: cluster.spec!.topology!.version,
    });
    if (!blocking) setPending(cluster, [], ['AfterClusterUpgrade']);
    return blocking;
  }
}
