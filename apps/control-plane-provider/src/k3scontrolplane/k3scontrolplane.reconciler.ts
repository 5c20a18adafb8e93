import type { KubernetesObject, V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { AskCanUpdate } from './k3scontrolplane.in-place.js';
import {
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import {
  groupOf,
  hasFinalizer,
  isBeingDeleted,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ReconcileResult,
  type ResourceClient,
  type ResourceType,
} from '@capstan/kube';
import {
  CONFLICT_REQUEUE_MS,
  TemplateClusterOwnership,
  type DeletionResult,
  type ReconcilerParts,
  type ReconcileScope,
} from '@capstan/provider-kit';
import type { StatusInputs } from '../planning/control-plane-status.js';
import { MachineExpectations } from './expectations.js';
import { reconcileCertificates } from './k3scontrolplane.certificates.js';
import { controlPlaneEndpointOf, reconcileKubeconfig } from './k3scontrolplane.kubeconfig.js';
import {
  machineFacts,
  ownedMachines,
  syncTemplateFields,
  syncUpToDateConditions,
} from './k3scontrolplane.machines.js';
import {
  probeAgainAfter,
  probeWorkloadApi,
  reconcileInitialization,
  type WorkloadProbe,
} from './k3scontrolplane.probes.js';
import { ControlPlaneScaler, scaleRequeueDelays } from './k3scontrolplane.scale.js';
import { recordOn, type ControlPlaneScope } from './k3scontrolplane.scope.js';
import { statusInputsOf, writeControlPlaneStatus } from './k3scontrolplane.status.js';
import { ProviderKinds } from '@capstan/provider-kit';
import { SECRETS, type SecretAccess } from './secrets.js';

/**
 * What a reconcile returns when it only waited for the cache to show this controller's own last write of the
 * K3sControlPlane, or lost a write race: it did nothing, and runs again this soon (the reconciler kit's).
 */
export const OWN_WRITE_RECHECK_MS = CONFLICT_REQUEUE_MS;

export interface K3sControlPlaneReconcilerDeps {
  client: KubeClient;
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  /** Secrets with the cluster-name label (certificates, kubeconfig). */
  secrets: Informer<V1Secret>;
  recorder: EventRecorder;
  logger: Logger;
  /** Whether the workload API answers through a kubeconfig; a real HTTPS probe by default. */
  probe?: WorkloadProbe;
  /** Asks a machine's bootstrap provider whether a change can be applied in place (docs/in-place-updates.md). */
  askCanUpdate?: AskCanUpdate;
  /** The informer of a machine template kind (the manager's, shared): templates are read from it. */
  templateCacheOf?: (type: ResourceType) => Informer<KubernetesObject>;
}

/**
 * Converges a K3sControlPlane in the reconciler kit's envelope (pause, finalizer, one patch of what changed,
 * events after the write), in phases as upstream KCP splits its controller: certificates, kubeconfig,
 * initialization probes, scaling one machine at a time (see planning/planner.ts), then the contract status
 * and the hand-off events. Deletion deletes its Machines and lets the K3sControlPlane go once they are gone.
 */
export class K3sControlPlaneReconciler implements ReconcilerParts<K3sControlPlane> {
  private readonly secrets: SecretAccess;
  private readonly machineClient: ResourceClient<Machine>;
  private readonly expectations = new MachineExpectations();
  private readonly scaler: ControlPlaneScaler;
  private readonly probe: WorkloadProbe;
  private readonly templateOwnership: TemplateClusterOwnership;

  constructor(private readonly deps: K3sControlPlaneReconcilerDeps) {
    this.secrets = { client: deps.client.resource<V1Secret>(SECRETS), cache: deps.secrets };
    this.machineClient = deps.client.resource<Machine>(RESOURCES.Machine);
    const kinds = new ProviderKinds(deps.client);
    this.templateOwnership = new TemplateClusterOwnership(
      deps.client,
      (ref) => kinds.resourceOf(ref.apiGroup, ref.kind),
      deps.templateCacheOf,
    );
    this.scaler = new ControlPlaneScaler({
      client: deps.client,
      recorder: deps.recorder,
      machineClient: this.machineClient,
      configClient: deps.client.resource<K3sConfig>(RESOURCES.K3sConfig),
      machines: deps.machines,
      kinds,
      expectations: this.expectations,
      ...(deps.askCanUpdate && { askCanUpdate: deps.askCanUpdate }),
      ...(deps.templateCacheOf && { templateCacheOf: deps.templateCacheOf }),
    });
    this.probe = deps.probe ?? ((kubeconfig) => probeWorkloadApi(kubeconfig));
  }

  forget(key: string): void {
    this.expectations.forget(key);
  }

  async reconcileNormal(kit: ReconcileScope<K3sControlPlane>): Promise<ReconcileResult | void> {
    const cluster = this.clusterOf(kit.obj);
    if (!cluster) {
      kit.rc.log.debug('waiting for the Cluster of this control plane');
      return;
    }
    // Written before anything the finalizer guards exists (certificate secrets, machines).
    if (!hasFinalizer(kit.original, FINALIZERS.k3sControlPlane)) await kit.patchNow();
    await this.templateOwnership.ensure(cluster, kit.obj.metadata.namespace!, [
      kit.obj.spec.machineTemplate.spec.infrastructureRef,
    ]);
    const scope = this.scopeOf(kit, cluster);
    const base: StatusInputs = {
      ...statusInputsOf(kit.obj, scope.clusterName, scope.facts),
      certificates: { available: true },
    };

    await syncTemplateFields(scope, this.machineClient);
    await syncUpToDateConditions(scope, this.machineClient);
    const certificates = await reconcileCertificates(scope, this.secrets);
    const gate = controlPlaneEndpointOf(cluster);
    if ('blockedBy' in gate) {
      await this.writeStatus(kit, { ...base, blockedBy: gate.blockedBy }, scope.now);
      return;
    }
    const kubeconfig = await reconcileKubeconfig(scope, gate.endpoint, certificates, this.secrets);
    const initialized = await reconcileInitialization(scope, kubeconfig, this.probe);
    const scale = await this.scaler.reconcile(scope, initialized);
    await this.writeStatus(
      kit,
      {
        ...base,
        initialized,
        plan: scale.plan,
        ...(scale.execution.blockedBy && { blockedBy: scale.execution.blockedBy }),
        ...(scale.execution.lastRemediation && { lastRemediation: scale.execution.lastRemediation }),
      },
      scope.now,
    );
    const now = scope.now.getTime();
    const delays = [probeAgainAfter(initialized, scope.facts), ...scaleRequeueDelays(kit.obj, scale, now)];
    const soonest = Math.min(...delays.filter((d) => d !== undefined));
    return { requeueAfter: Number.isFinite(soonest) ? soonest : undefined };
  }

  /** The whole control plane goes: every machine at once, each through the core's deletion (drain, infrastructure). */
  async reconcileDelete(kit: ReconcileScope<K3sControlPlane>): Promise<DeletionResult> {
    const kcp = kit.obj;
    this.scaler.forget(kcp);
    const owned = ownedMachines(this.deps.machines, kcp);
    if (owned.length === 0) {
      this.expectations.forget(kit.key);
      return { done: true };
    }
    for (const machine of owned.filter((m) => !isBeingDeleted(m))) {
      await this.scaler.deleteMachine(kcp, machine.metadata.name!);
    }
    const now = new Date();
    const clusterName = this.clusterOf(kcp)?.metadata.name ?? kcp.metadata.labels?.[LABELS.clusterName] ?? '';
    const facts = machineFacts(kcp, owned, now.getTime());
    await this.writeStatus(kit, { ...statusInputsOf(kcp, clusterName, facts), deleting: true }, now);
    return {};
  }

  private scopeOf(kit: ReconcileScope<K3sControlPlane>, cluster: Cluster): ControlPlaneScope {
    const now = new Date();
    const machines = ownedMachines(this.deps.machines, kit.obj);
    return {
      kit,
      cluster,
      clusterName: cluster.metadata.name!,
      now,
      machines,
      facts: machineFacts(kit.obj, machines, now.getTime()),
      log: kit.rc.log,
      record: (reason, action, note) => recordOn(this.deps.recorder, kit.obj, reason, action, note),
    };
  }

  private writeStatus(kit: ReconcileScope<K3sControlPlane>, inputs: StatusInputs, now: Date): Promise<void> {
    return writeControlPlaneStatus(kit, inputs, now, (kcp, reason, action, note) =>
      recordOn(this.deps.recorder, kcp, reason, action, note),
    );
  }

  /** The owning Cluster (owner reference, else the cluster-name label, else the Cluster referring to it). */
  clusterOf(kcp: K3sControlPlane): Cluster | undefined {
    const namespace = kcp.metadata.namespace;
    const isCluster = (ref: V1OwnerReference) =>
      ref.kind === RESOURCES.Cluster.kind && groupOf(ref.apiVersion) === RESOURCES.Cluster.group;
    const owner = (kcp.metadata.ownerReferences ?? []).find(isCluster);
    const named = owner?.name ?? kcp.metadata.labels?.[LABELS.clusterName];
    if (named) return this.deps.clusters.getByName(namespace, named);
    return this.deps.clusters.list(namespace).find((c) => refersTo(c, kcp));
  }
}

/** Whether a Cluster's `spec.controlPlaneRef` names this object. */
export function refersTo(cluster: Cluster, obj: KubernetesObject): boolean {
  const ref = cluster.spec?.controlPlaneRef;
  return (
    ref?.apiGroup === RESOURCES.K3sControlPlane.group &&
    ref.kind === RESOURCES.K3sControlPlane.kind &&
    ref.name === obj.metadata?.name
  );
}
