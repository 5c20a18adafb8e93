import type { KubernetesObject, V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  ConditionType,
  FINALIZERS,
  LABELS,
  RESOURCES,
  isTrue,
  toRFC3339,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type K3sControlPlaneStatus,
  type Machine,
  type Unstructured,
} from '@capstan/api';
import type { EventPublisher } from '@capstan/events';
import { addFinalizer, BY_OWNER, type EventRecorder, getControllerOf, groupOf, hasFinalizer, type Informer, isBeingDeleted, isNotFound, type KubeClient, OwnWrites, patchStatus, type ReconcileContext, type ReconcileResult, removeFinalizer, type ResourceClient } from '@capstan/kube';
import { CONTROL_PLANE_ANNOTATIONS, formatRemediationRecord } from '../planning/annotations.js';
import type { ControlPlaneMachine, RemediationRecord } from '../planning/control-plane-machine.js';
import {
  controlPlaneStatusChanged,
  desiredControlPlaneStatus,
  type StatusInputs,
} from '../planning/control-plane-status.js';
import { controlPlaneMachineFrom, timestampMs, type DesiredMachineSpec } from '../planning/machine-facts.js';
import { planControlPlane, type Plan, type PlanAction } from '../planning/planner.js';
import { remediationPolicy } from '../planning/remediation.js';
import { machineSpecHash } from '../planning/spec-hash.js';
import { ensureClusterCertificates } from './cluster-certificates.js';
import { MachineExpectations, type CachedState } from './expectations.js';
import { ensureKubeconfig } from './kubeconfig.js';
import {
  buildInfrastructureMachine,
  buildK3sConfig,
  buildMachine,
  machineTemplateFields,
  machineTemplateFieldsHash,
  newMachineName,
  TEMPLATE_FIELD_MANAGER,
} from './machine-objects.js';
import { PendingEvents } from '@capstan/provider-kit';
import { machineKindOf, ProviderKinds } from './provider-kinds.js';
import { SECRETS } from './secrets.js';
import { probeWorkloadApi } from './workload-probe.js';

/** How often to probe the workload API while waiting for the first server to answer. */
export const INITIALIZATION_PROBE_INTERVAL_MS = 2_000;
/** How soon to look again while the cache has not caught up with this controller's own writes. */
const EXPECTATION_RECHECK_MS = 2_000;
/** How soon to look again while the cache has not caught up with this controller's own write of the object. */
export const OWN_WRITE_RECHECK_MS = 200;
/** How soon to look again for a missing machine template (templates are not watched). */
const TEMPLATE_RECHECK_MS = 15_000;

export interface K3sControlPlaneReconcilerDeps {
  client: KubeClient;
  controlPlanes: Informer<K3sControlPlane>;
  clusters: Informer<Cluster>;
  machines: Informer<Machine>;
  /** Secrets with the cluster-name label (certificates, kubeconfig). */
  secrets: Informer<V1Secret>;
  publisher: EventPublisher;
  recorder: EventRecorder;
  /** Whether the workload API answers through a kubeconfig; a real HTTPS probe by default. */
  probe?: (kubeconfig: string) => Promise<boolean>;
}

/** Outcome of executing a plan step. */
interface Execution {
  lastRemediation?: K3sControlPlaneStatus['lastRemediation'];
  retryAfterMs?: number;
  blockedBy?: string;
}

const maxSurgeOf = (kcp: K3sControlPlane): 0 | 1 => {
  const value = kcp.spec.rollout?.strategy?.rollingUpdate?.maxSurge;
  return value === 0 || value === '0' ? 0 : 1;
};

/**
 * Converges a K3sControlPlane: cluster certificates and the admin kubeconfig, then its Machines one step at
 * a time (see planning/planner.ts), then the contract status and the hand-off events. Deletion deletes its
 * Machines and lets the K3sControlPlane go once they are gone.
 */
export class K3sControlPlaneReconciler {
  private readonly kcpClient: ResourceClient<K3sControlPlane>;
  private readonly secretClient: ResourceClient<V1Secret>;
  private readonly machineClient: ResourceClient<Machine>;
  private readonly configClient: ResourceClient<K3sConfig>;
  private readonly kinds: ProviderKinds;
  private readonly expectations = new MachineExpectations();
  private readonly pending = new PendingEvents();
  private readonly ownWrites = new OwnWrites();
  private readonly probe: (kubeconfig: string) => Promise<boolean>;

  constructor(private readonly deps: K3sControlPlaneReconcilerDeps) {
    this.kcpClient = deps.client.resource<K3sControlPlane>(RESOURCES.K3sControlPlane);
    this.secretClient = deps.client.resource<V1Secret>(SECRETS);
    this.machineClient = deps.client.resource<Machine>(RESOURCES.Machine);
    this.configClient = deps.client.resource<K3sConfig>(RESOURCES.K3sConfig);
    this.kinds = new ProviderKinds(deps.client);
    this.probe = deps.probe ?? ((kubeconfig) => probeWorkloadApi(kubeconfig));
  }

  readonly reconcile = async (key: string, ctx: ReconcileContext): Promise<ReconcileResult | void> => {
    await this.pending.flush(key);
    let kcp = this.deps.controlPlanes.get(key);
    if (!kcp) {
      this.expectations.forget(key);
      return;
    }
    if (this.ownWrites.isStale(key, kcp.metadata.resourceVersion))
      return { requeueAfter: OWN_WRITE_RECHECK_MS };
    const cluster = this.clusterOf(kcp);
    if (isBeingDeleted(kcp)) return this.reconcileDelete(kcp, cluster, ctx);
    if (!cluster) {
      ctx.log.debug('waiting for the Cluster of this control plane');
      return;
    }
    if (!hasFinalizer(kcp, FINALIZERS.k3sControlPlane)) {
      const read = kcp.metadata.resourceVersion;
      kcp = await addFinalizer(this.kcpClient, kcp, FINALIZERS.k3sControlPlane);
      this.ownWrites.record(kcp, read);
    }
    const clusterName = cluster.metadata.name!;
    const now = new Date();
    const machines = this.machineFacts(kcp, now.getTime());
    const base: StatusInputs = {
      clusterName,
      desiredReplicas: kcp.spec.replicas ?? 1,
      generation: kcp.metadata.generation,
      machines,
      initialized: kcp.status?.initialization?.controlPlaneInitialized === true,
      paused: false,
      deleting: false,
    };
    if (cluster.spec?.paused === true || ANNOTATIONS.paused in (kcp.metadata.annotations ?? {})) {
      await this.writeStatus(key, kcp, { ...base, paused: true }, ctx);
      return;
    }

    await this.syncTemplateFields(kcp, ctx);
    const certs = await ensureClusterCertificates(kcp, clusterName, this.secretClient, this.deps.secrets);
    if (certs.created.length > 0) {
      ctx.log.info({ secrets: certs.created }, 'cluster certificates generated');
      await this.record(
        kcp,
        'CertificatesGenerated',
        'GenerateCertificates',
        `Generated ${certs.created.join(', ')}`,
      );
    }
    const withCertificates: StatusInputs = { ...base, certificates: { available: true } };

    const endpoint = cluster.spec?.controlPlaneEndpoint;
    if (
      cluster.status?.initialization?.infrastructureProvisioned !== true ||
      !endpoint?.host ||
      !endpoint.port
    ) {
      await this.writeStatus(
        key,
        kcp,
        { ...withCertificates, blockedBy: 'Waiting for the cluster infrastructure and its endpoint' },
        ctx,
      );
      return;
    }
    const kubeconfig = await ensureKubeconfig(
      kcp,
      clusterName,
      endpoint,
      certs.certificates,
      this.secretClient,
      this.deps.secrets,
    );
    if (kubeconfig.issued) {
      ctx.log.info({ reason: kubeconfig.issued }, 'admin kubeconfig issued');
      await this.record(
        kcp,
        'KubeconfigIssued',
        'IssueKubeconfig',
        `Issued ${clusterName}-kubeconfig (${kubeconfig.issued})`,
      );
    }

    const initialized =
      withCertificates.initialized || (machines.length > 0 && (await this.probe(kubeconfig.kubeconfig)));
    const settled = this.expectations.satisfied(key, (name) =>
      this.cachedState(kcp.metadata.namespace!, name),
    );
    const plan: Plan = settled
      ? planControlPlane({
          desiredReplicas: base.desiredReplicas,
          initialized,
          maxSurge: maxSurgeOf(kcp),
          machines,
          failureDomains: (cluster.status?.failureDomains ?? [])
            .filter((fd) => fd.controlPlane === true)
            .map((fd) => fd.name),
          remediation: remediationPolicy(kcp.spec.remediation),
          now: now.getTime(),
        })
      : { action: { type: 'wait', message: 'Waiting for the cache to show the last machine change' } };
    const execution = await this.execute(kcp, clusterName, plan.action, now, ctx);
    const next = await this.writeStatus(
      key,
      kcp,
      {
        ...withCertificates,
        initialized,
        plan,
        ...(execution.blockedBy && { blockedBy: execution.blockedBy }),
        ...(execution.lastRemediation && { lastRemediation: execution.lastRemediation }),
      },
      ctx,
    );
    if (initialized && !base.initialized) {
      await this.record(next, 'Initialized', 'Initialize', 'The workload API server answers');
    }
    return {
      requeueAfter: this.requeueAfter(kcp, {
        initialized,
        machines,
        settled,
        plan,
        execution,
        now: now.getTime(),
      }),
    };
  };

  /** A Normal Kubernetes Event on the K3sControlPlane (never a secret in the note). */
  private record(kcp: K3sControlPlane, reason: string, action: string, note: string): Promise<unknown> {
    return this.deps.recorder.event(kcp, { type: 'Normal', reason, action, note });
  }

  private requeueAfter(
    kcp: K3sControlPlane,
    s: {
      initialized: boolean;
      machines: ControlPlaneMachine[];
      settled: boolean;
      plan: Plan;
      execution: Execution;
      now: number;
    },
  ): number | undefined {
    const delays: number[] = [];
    if (!s.initialized && s.machines.length > 0) delays.push(INITIALIZATION_PROBE_INTERVAL_MS);
    if (!s.settled) delays.push(EXPECTATION_RECHECK_MS);
    if (s.plan.action.type === 'wait' && s.plan.action.retryAt !== undefined)
      delays.push(Math.max(1, s.plan.action.retryAt - s.now));
    if (s.execution.retryAfterMs !== undefined) delays.push(s.execution.retryAfterMs);
    const after = kcp.spec.rollout?.after ? Date.parse(kcp.spec.rollout.after) : NaN;
    if (!Number.isNaN(after) && after > s.now) delays.push(after - s.now + 1000);
    return delays.length > 0 ? Math.min(...delays) : undefined;
  }

  private async execute(
    kcp: K3sControlPlane,
    clusterName: string,
    action: PlanAction,
    now: Date,
    ctx: ReconcileContext,
  ): Promise<Execution> {
    const key = `${kcp.metadata.namespace}/${kcp.metadata.name}`;
    switch (action.type) {
      case 'create': {
        const created = await this.createMachine(
          kcp,
          clusterName,
          action.initServer,
          action.failureDomain,
          ctx,
        );
        if ('blockedBy' in created)
          return { blockedBy: created.blockedBy, retryAfterMs: TEMPLATE_RECHECK_MS };
        this.expectations.expectCreate(key, created.name);
        ctx.log.info(
          { machine: created.name, reason: action.reason, initServer: action.initServer },
          'control plane machine created',
        );
        await this.record(
          kcp,
          'MachineCreated',
          'CreateMachine',
          `Created machine ${created.name} (${action.reason})`,
        );
        return {};
      }
      case 'delete': {
        await this.deleteMachine(kcp, action.machine);
        this.expectations.expectDelete(key, action.machine);
        ctx.log.info({ machine: action.machine, reason: action.reason }, 'control plane machine deleted');
        await this.record(
          kcp,
          'MachineDeleted',
          'DeleteMachine',
          `Deleted machine ${action.machine} (${action.reason})`,
        );
        return {};
      }
      case 'remediate': {
        const record: RemediationRecord = {
          machine: action.machine,
          time: toRFC3339(now),
          retryCount: action.retryCount,
        };
        // Recorded before the deletion, so the replacement learns it replaces a remediated machine.
        const annotated = await this.kcpClient.mergePatch(
          { namespace: kcp.metadata.namespace, name: kcp.metadata.name! },
          {
            metadata: {
              annotations: {
                [CONTROL_PLANE_ANNOTATIONS.remediationInProgress]: formatRemediationRecord(record),
              },
            },
          },
        );
        this.ownWrites.record(annotated, kcp.metadata.resourceVersion);
        await this.deleteMachine(kcp, action.machine);
        this.expectations.expectDelete(key, action.machine);
        ctx.log.info(
          { machine: action.machine, retryCount: action.retryCount },
          'unhealthy control plane machine remediated',
        );
        await this.record(
          kcp,
          'MachineRemediated',
          'RemediateMachine',
          `Deleted unhealthy machine ${action.machine} (retry ${action.retryCount})`,
        );
        return { lastRemediation: record };
      }
      default:
        return {};
    }
  }

  /**
   * Creates the infrastructure machine (cloned from the template), the K3sConfig and then the Machine that
   * ties them together; if the Machine cannot be created the other two are deleted again.
   */
  private async createMachine(
    kcp: K3sControlPlane,
    clusterName: string,
    initServer: boolean,
    failureDomain: string | undefined,
    ctx: ReconcileContext,
  ): Promise<{ name: string } | { blockedBy: string }> {
    const namespace = kcp.metadata.namespace!;
    const templateRef = kcp.spec.machineTemplate.spec.infrastructureRef;
    const templateType = await this.kinds.resolve(templateRef.apiGroup, templateRef.kind);
    const machineType = await this.kinds.resolve(templateRef.apiGroup, machineKindOf(templateRef.kind));
    let template: Unstructured;
    try {
      template = (await this.deps.client
        .resource(templateType)
        .get({ namespace, name: templateRef.name })) as unknown as Unstructured;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return { blockedBy: `Waiting for machine template ${templateRef.kind} ${templateRef.name}` };
    }
    let name = newMachineName(kcp.metadata.name!);
    while (this.deps.machines.getByName(namespace, name)) name = newMachineName(kcp.metadata.name!);

    const infraClient = this.deps.client.resource(machineType);
    const infra = await infraClient.create(
      buildInfrastructureMachine(kcp, clusterName, name, template, templateType, machineType),
    );
    const cleanUp = async () => {
      for (const remove of [
        () => infraClient.delete({ namespace, name }),
        () => this.configClient.delete({ namespace, name }),
      ]) {
        await remove().catch((error: unknown) => {
          if (!isNotFound(error))
            ctx.log.warn({ err: error, machine: name }, 'could not clean up after a failed machine creation');
        });
      }
    };
    // Read fresh: the cache may not show yet the remediation recorded by the reconcile that deleted the machine.
    const fresh = await this.kcpClient.get({ namespace, name: kcp.metadata.name! });
    const remediationFor = fresh.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.remediationInProgress];
    let machine: Machine;
    try {
      await this.configClient.create(buildK3sConfig(kcp, clusterName, name, initServer));
      machine = await this.machineClient.create(
        buildMachine({
          kcp,
          clusterName,
          name,
          specHash: machineSpecHash(kcp),
          infrastructure: { apiGroup: machineType.group, kind: infra.kind ?? machineType.kind },
          ...(failureDomain && { failureDomain }),
          ...(remediationFor && { remediationFor }),
        }),
      );
    } catch (error) {
      await cleanUp();
      throw error;
    }
    await this.machineClient.apply(machineTemplateFields(kcp, machine), {
      fieldManager: TEMPLATE_FIELD_MANAGER,
    });
    if (remediationFor) {
      const cleared = await this.kcpClient.mergePatch(
        { namespace, name: kcp.metadata.name! },
        { metadata: { annotations: { [CONTROL_PLANE_ANNOTATIONS.remediationInProgress]: null } } },
      );
      this.ownWrites.record(cleared, kcp.metadata.resourceVersion);
    }
    return { name };
  }

  /** Applies changed machine template fields (labels, annotations, deletion, readiness gates) to the Machines in place. */
  private async syncTemplateFields(kcp: K3sControlPlane, ctx: ReconcileContext): Promise<void> {
    const hash = machineTemplateFieldsHash(kcp);
    for (const machine of this.ownedMachines(kcp)) {
      if (
        isBeingDeleted(machine) ||
        machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.templateFieldsHash] === hash
      )
        continue;
      try {
        await this.machineClient.apply(machineTemplateFields(kcp, machine), {
          fieldManager: TEMPLATE_FIELD_MANAGER,
        });
        ctx.log.info({ machine: machine.metadata.name }, 'machine template fields applied in place');
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  private async deleteMachine(kcp: K3sControlPlane, name: string): Promise<void> {
    try {
      await this.machineClient.delete({ namespace: kcp.metadata.namespace, name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  private async reconcileDelete(
    kcp: K3sControlPlane,
    cluster: Cluster | undefined,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult | void> {
    const key = `${kcp.metadata.namespace}/${kcp.metadata.name}`;
    const owned = this.ownedMachines(kcp);
    if (owned.length === 0) {
      this.expectations.forget(key);
      if (hasFinalizer(kcp, FINALIZERS.k3sControlPlane)) {
        await removeFinalizer(this.kcpClient, kcp, FINALIZERS.k3sControlPlane);
        ctx.log.info('control plane machines gone: finalizer removed');
      }
      return;
    }
    // The whole control plane goes: every machine at once, each through the core's deletion (drain, infrastructure).
    for (const machine of owned.filter((m) => !isBeingDeleted(m)))
      await this.deleteMachine(kcp, machine.metadata.name!);
    const now = Date.now();
    await this.writeStatus(
      key,
      kcp,
      {
        clusterName: cluster?.metadata.name ?? kcp.metadata.labels?.[LABELS.clusterName] ?? '',
        desiredReplicas: kcp.spec.replicas ?? 1,
        generation: kcp.metadata.generation,
        machines: this.machineFacts(kcp, now),
        initialized: kcp.status?.initialization?.controlPlaneInitialized === true,
        paused: false,
        deleting: true,
      },
      ctx,
    );
  }

  /** Writes the status when it changed and publishes the hand-off events of the transitions it shows. */
  private async writeStatus(
    key: string,
    kcp: K3sControlPlane,
    inputs: StatusInputs,
    ctx: ReconcileContext,
  ): Promise<K3sControlPlane> {
    const previous = kcp.status;
    const next = desiredControlPlaneStatus(previous, inputs);
    if (!controlPlaneStatusChanged(previous, next)) return kcp;
    const written = await patchStatus(this.kcpClient, kcp, next);
    this.ownWrites.record(written, kcp.metadata.resourceVersion);
    ctx.log.debug({ replicas: next.replicas, ready: next.readyReplicas }, 'status updated');
    await this.publishTransitions(key, written, previous, next, inputs.clusterName);
    return written;
  }

  private async publishTransitions(
    key: string,
    kcp: K3sControlPlane,
    previous: K3sControlPlaneStatus | undefined,
    next: K3sControlPlaneStatus,
    clusterName: string,
  ): Promise<void> {
    const base = {
      object: {
        apiGroup: RESOURCES.K3sControlPlane.group,
        kind: RESOURCES.K3sControlPlane.kind,
        namespace: kcp.metadata.namespace!,
        name: kcp.metadata.name!,
        uid: kcp.metadata.uid!,
      },
      generation: kcp.metadata.generation ?? 0,
      resourceVersion: kcp.metadata.resourceVersion!,
      clusterName,
    };
    const counts = {
      replicas: next.replicas ?? 0,
      readyReplicas: next.readyReplicas ?? 0,
      availableReplicas: next.availableReplicas ?? 0,
      upToDateReplicas: next.upToDateReplicas ?? 0,
      ...(next.versions && {
        versions: next.versions.map((v) => ({ version: v.version, replicas: v.replicas ?? 0 })),
      }),
    };
    const desired = kcp.spec.replicas ?? 1;
    const publisher = this.deps.publisher;
    if (!previous?.initialization?.controlPlaneInitialized && next.initialization?.controlPlaneInitialized) {
      await this.pending.publish(key, 'control-plane.initialized', () =>
        publisher.publish('control-plane.initialized', { ...base, version: kcp.spec.version }),
      );
    }
    if (
      !isTrue(previous?.conditions, ConditionType.Available) &&
      isTrue(next.conditions, ConditionType.Available)
    ) {
      await this.pending.publish(key, 'control-plane.available', () =>
        publisher.publish('control-plane.available', { ...base, ...counts }),
      );
    }
    const reached = (s: K3sControlPlaneStatus | undefined) =>
      s?.replicas === desired && s.readyReplicas === desired;
    if (!reached(previous) && reached(next)) {
      await this.pending.publish(key, 'control-plane.scaled', () =>
        publisher.publish('control-plane.scaled', { ...base, ...counts, desiredReplicas: desired }),
      );
    }
  }

  private ownedMachines(kcp: K3sControlPlane): Machine[] {
    return this.deps.machines
      .byIndex(BY_OWNER, kcp.metadata.uid!)
      .filter((m) => getControllerOf(m)?.uid === kcp.metadata.uid);
  }

  private machineFacts(kcp: K3sControlPlane, now: number): ControlPlaneMachine[] {
    const desired: DesiredMachineSpec = {
      specHash: machineSpecHash(kcp),
      version: kcp.spec.version,
      ...(kcp.spec.rollout?.after && { rolloutAfter: timestampMs(kcp.spec.rollout.after) }),
    };
    return this.ownedMachines(kcp).map((m) => controlPlaneMachineFrom(m, desired, now));
  }

  private cachedState(namespace: string, name: string): CachedState {
    const machine = this.deps.machines.getByName(namespace, name);
    if (!machine) return 'absent';
    return isBeingDeleted(machine) ? 'deleting' : 'present';
  }

  /** The owning Cluster (owner reference, else the cluster-name label, else the Cluster referring to it). */
  private clusterOf(kcp: K3sControlPlane): Cluster | undefined {
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
