import type { V1OwnerReference, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  ConditionType,
  K3S_INIT_SERVER_ANNOTATION,
  LABELS,
  setCondition,
  RESOURCES,
  type Cluster,
  type K3sConfig,
  type K3sConfigInPlaceUpdateStatus,
  type K3sControlPlane,
  type Machine,
} from '@capstan/api';
import { eventDataBase } from '@capstan/events';
import {
  BootstrapDataError,
  BootstrapRenderError,
  renderK3sCloudConfig,
  type K3sRole,
} from '@capstan/k3s-bootstrap';
import {
  deepEqual,
  getControllerOf,
  groupOf,
  isAlreadyExists,
  objectKey,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
} from '@capstan/kube';
import { type OwedEvent, type ReconcilerParts, type ReconcileScope } from '@capstan/provider-kit';
import { planSecretName, type MachinePlan } from '@capstan/node-agent';
import type { AgentLiveness } from './agent-liveness.js';
import { decideBootstrap, WaitingReason } from './bootstrap-role.js';
import { readClusterCertificates } from './cluster-certificates.js';
import { bootstrapDataSecret, dataSecretNameFor } from './data-secret.js';
import { ensureJoinToken } from './join-token.js';
import {
  K3SCONFIG_CONDITIONS,
  desiredK3sConfigStatus,
  InvalidReason,
  type BootstrapOutcome,
} from './k3sconfig-status.js';
import {
  createPlanSecret,
  initialPlanFor,
  planAppliedCondition,
  planEvents,
  planStatusFrom,
  prepareNodeAgent,
  type AgentConnection,
} from './machine-plan.js';
import {
  currentPlanOf,
  probesDeadlineIn,
  requestedUpdate,
  updateOutcome,
  updatePlanFor,
  writePlan,
} from './in-place-update.js';
import { withRegistriesFiles } from './registries-plan.js';
import { resolveSecretSources } from './secret-sources.js';
import { bootstrapInputFor, k3sReleaseFor } from './render-input.js';
import { getSecretIfExists, SECRETS } from './secrets.js';

/** The conditions this controller writes (the reconciler kit adds `Paused` and `ReconcileSucceeded`). */
export const K3SCONFIG_CONTROLLER_CONDITIONS = [...K3SCONFIG_CONDITIONS, ConditionType.PlanApplied];

/** How often to look again for what no watched object announces (secrets without the cluster-name label). */
export const UNWATCHED_RETRY_MS = 15_000;

export interface K3sConfigReconcilerDeps {
  client: KubeClient;
  configs: Informer<K3sConfig>;
  machines: Informer<Machine>;
  clusters: Informer<Cluster>;
  controlPlanes: Informer<K3sControlPlane>;
  /** Secrets with the cluster-name label: bootstrap data, join tokens, cluster certificates. */
  secrets: Informer<V1Secret>;
  /** Which machines' node agents stopped renewing their heartbeat Lease (absent: none is ever silent). */
  liveness?: AgentLiveness;
  /** The duration of the agents' heartbeat Leases (default AGENT_LEASE_SECONDS; tests shorten it). */
  agentLeaseSeconds?: number;
  recorder: EventRecorder;
  logger: Logger;
  /** How node agents reach the management cluster; without it the bootstrap data installs no node agent. */
  agentConnection?: AgentConnection;
}

type Step = {
  outcome: BootstrapOutcome;
  result?: ReconcileResult;
  created?: boolean;
  planSecretName?: string;
};

/**
 * Renders one K3sConfig's bootstrap data into its data Secret, once: waits for the Machine owner, the
 * cluster infrastructure, the control plane (for joiners) and the certificates (for servers), then writes
 * the secret, the contract status fields and the `bootstrap.data-secret-created` hand-off event. Data
 * already written is never rendered again unless its secret is deleted. Pausing, the status write and the
 * owed events are the reconciler kit's (k3sConfigController).
 */
export class K3sConfigReconciler implements ReconcilerParts<K3sConfig> {
  private readonly secretClient: ResourceClient<V1Secret>;

  constructor(private readonly deps: K3sConfigReconcilerDeps) {
    this.secretClient = deps.client.resource<V1Secret>(SECRETS);
  }

  async reconcileNormal(scope: ReconcileScope<K3sConfig>): Promise<ReconcileResult | void> {
    const config = scope.obj;
    const machine = this.owningMachine(config);
    if (!machine) {
      scope.rc.log.debug('waiting for the Machine owner reference');
      return;
    }
    const step = await this.converge(config, machine, scope.rc);
    config.status = desiredK3sConfigStatus(config.status, step.outcome, config.metadata.generation);
    if (step.planSecretName) config.status.plan ??= { secretName: step.planSecretName };
    if (step.outcome.state === 'created') await this.startInPlaceUpdate(scope, machine);
    const observed = await this.observePlan(scope, machine);
    if (!deepEqual(scope.original.status, config.status)) {
      scope.rc.log.info(
        { outcome: step.outcome.state, reason: 'reason' in step.outcome ? step.outcome.reason : undefined },
        'status updated',
      );
    }
    if (step.created && step.outcome.state === 'created') {
      await this.announceCreated(scope, machine, step.outcome.dataSecretName);
    }
    scope.announce(...observed.events);
    if (observed.recheckInMs === undefined) return step.result;
    const requeueAfter = Math.min(observed.recheckInMs, step.result?.requeueAfter ?? Infinity);
    return { ...step.result, requeueAfter };
  }

  /**
   * What the machine's node agent reported on its plan Secret: `status.plan`, the `PlanApplied` condition (the
   * core mirrors it onto the Machine) and, for each transition, a `machine-plan.*` hand-off. Derived from the
   * status before and after, so a restart neither loses nor repeats one.
   */
  private async observePlan(
    scope: ReconcileScope<K3sConfig>,
    machine: Machine,
  ): Promise<{ events: OwedEvent[]; recheckInMs?: number }> {
    const config = scope.obj;
    const secretName = config.status?.plan?.secretName;
    if (!secretName || !config.status) return { events: [] };
    // From the cache (the plan Secret carries the cluster-name label), else from the API.
    const secret = await this.deps.secrets.getOrFetch(
      config.metadata.namespace!,
      planSecretName(machine.metadata.name!),
    );
    if (!secret && config.status.dataSecretName) {
      // Deleted after the machine got its agent: made again without a plan (the agent's token is its
      // ServiceAccount's, so it goes on with the new Secret); the next plan a writer sets is applied. Until the
      // Secret's event arrives, PlanApplied says it is missing.
      await createPlanSecret(this.secretClient, config, machine, undefined);
    }
    const plan = planStatusFrom(secretName, secret);
    config.status.plan = plan;
    const silentPast = this.deps.liveness?.silentPast(config.metadata.namespace!, secretName);
    config.status.conditions = setCondition(config.status.conditions, {
      ...planAppliedCondition(plan, secret, silentPast),
      observedGeneration: config.metadata.generation,
    });
    const events = planEvents(scope.original.status?.plan, plan, machine, secret);
    const update = config.status.inPlaceUpdate;
    let recheckInMs: number | undefined;
    if (update) {
      // Only an update still running can fail and need the token masked in its message.
      const token = update.state === 'Updating' ? await this.joinTokenOf(machine) : undefined;
      const outcome = updateOutcome(update, plan, secret, token ? [token] : [], new Date(), silentPast);
      config.status.inPlaceUpdate = outcome;
      // Probes that never pass fail the update at their deadline; nothing else would wake this reconcile then.
      recheckInMs = probesDeadlineIn(outcome, plan, secret);
      const before = scope.original.status?.inPlaceUpdate;
      const newlySucceeded =
        outcome.state === 'Succeeded' &&
        !(
          before?.state === 'Succeeded' &&
          before.target === outcome.target &&
          before.planChecksum === outcome.planChecksum
        );
      if (newlySucceeded && outcome.planChecksum) {
        events.push({
          name: 'machine.updated',
          data: {
            ...eventDataBase(machine, RESOURCES.Machine, machine.spec.clusterName),
            target: outcome.target,
            planChecksum: outcome.planChecksum,
          },
        });
      }
    }
    return { events, ...(recheckInMs !== undefined && { recheckInMs }) };
  }

  /**
   * Starts the in-place update the Machine asks for once the core let it start: writes the machine's new plan (its
   * K3s config, registries.yaml, files, and the install script with the new release when K3s restarts) and records
   * its checksum in `status.inPlaceUpdate`. A new target (the spec changed again) gets a new plan; the same target
   * never a second.
   */
  private async startInPlaceUpdate(scope: ReconcileScope<K3sConfig>, machine: Machine): Promise<void> {
    const config = scope.obj;
    const status = config.status!;
    const requested = requestedUpdate(machine);
    if (!requested) return;
    let update: K3sConfigInPlaceUpdateStatus =
      status.inPlaceUpdate?.target === requested.target
        ? status.inPlaceUpdate
        : { target: requested.target, state: 'Updating' };
    status.inPlaceUpdate = update;
    if (!status.plan?.secretName) {
      status.inPlaceUpdate = {
        ...update,
        state: 'Failed',
        message: 'the machine has no node agent to apply a plan',
      };
      return;
    }
    if (!requested.ready || update.planChecksum) return;
    const cluster = this.clusterOfMachine(machine);
    const endpoint = cluster?.spec?.controlPlaneEndpoint;
    if (!cluster || !endpoint) return;
    const namespace = config.metadata.namespace!;
    const spec = config.spec ?? {};
    const version = k3sReleaseFor(spec.version, machine.spec.version);
    const sources = await resolveSecretSources(namespace, spec, this.secretClient);
    if (!version) {
      status.inPlaceUpdate = {
        ...update,
        state: 'Failed',
        message: 'neither spec.version nor the Machine spec.version names a K3s release',
      };
      return;
    }
    if (!sources.resolved) {
      status.inPlaceUpdate = { ...update, state: 'Failed', message: sources.message };
      return;
    }
    const role = this.roleOf(config, machine);
    const token = await ensureJoinToken(cluster, this.secretClient, this.deps.secrets);
    const secret = await this.secretClient.getIfExists({ namespace, name: status.plan.secretName });
    if (!secret) return;
    let plan: MachinePlan;
    try {
      plan = updatePlanFor({
        render: bootstrapInputFor({ role, spec, ...sources.read, version, machine, cluster, token }),
        restart: requested.restart,
        probes: initialPlanFor(role, endpoint).probes,
        periodicInstructions: initialPlanFor(role, endpoint).periodicInstructions,
        current: currentPlanOf(secret),
      });
    } catch (error) {
      // The spec breaks a rule the rendered data keeps too: the update fails saying which field (never its value).
      if (!(error instanceof BootstrapRenderError || error instanceof BootstrapDataError)) throw error;
      status.inPlaceUpdate = { ...update, state: 'Failed', message: error.message };
      return;
    }
    const planChecksum = await writePlan(this.secretClient, secret, plan);
    update = { target: requested.target, planChecksum, state: 'Updating' };
    status.inPlaceUpdate = update;
    scope.rc.log.info(
      { target: requested.target, restart: requested.restart, version },
      'in-place update plan written',
    );
  }

  /** The role a running machine has in its K3s config (the init server keeps `cluster-init`). */
  private roleOf(config: K3sConfig, machine: Machine): K3sRole {
    if (!(LABELS.controlPlane in (machine.metadata.labels ?? {}))) return 'agent';
    return config.metadata.annotations?.[K3S_INIT_SERVER_ANNOTATION] === 'true'
      ? 'init-server'
      : 'join-server';
  }

  private async joinTokenOf(machine: Machine): Promise<string | undefined> {
    const cluster = this.clusterOfMachine(machine);
    return cluster ? ensureJoinToken(cluster, this.secretClient, this.deps.secrets) : undefined;
  }

  /** The Kubernetes Event and the hand-off event of a data secret this reconcile created. */
  private async announceCreated(
    scope: ReconcileScope<K3sConfig>,
    machine: Machine,
    dataSecretName: string,
  ): Promise<void> {
    // Written first: the event carries the resourceVersion that shows the contract fields (its message id).
    const written = await scope.patchNow();
    await this.deps.recorder.event(written, {
      type: 'Normal',
      reason: 'DataSecretCreated',
      action: 'Render',
      note: `Bootstrap data written to secret ${dataSecretName}`,
    });
    scope.announce({
      name: 'bootstrap.data-secret-created',
      data: {
        ...eventDataBase(written, RESOURCES.K3sConfig, machine.spec.clusterName),
        dataSecretName,
        machineName: machine.metadata.name!,
      },
    });
  }

  private async converge(config: K3sConfig, machine: Machine, rc: ReconcileContext): Promise<Step> {
    const cluster = this.clusterOfMachine(machine);
    if (!cluster) {
      return {
        outcome: {
          state: 'waiting',
          reason: WaitingReason.Cluster,
          message: `Waiting for Cluster ${machine.spec.clusterName}`,
        },
      };
    }
    const dataSecretName = dataSecretNameFor(config);
    const existing = await this.existingDataSecret(config, dataSecretName);
    if (existing === 'foreign') {
      return {
        outcome: {
          state: 'invalid',
          reason: InvalidReason.InvalidConfiguration,
          message: `Secret ${dataSecretName} exists and is not controlled by this K3sConfig`,
        },
      };
    }
    if (existing === 'ours') return { outcome: { state: 'created', dataSecretName } };

    const decision = decideBootstrap({
      controlPlaneMachine: LABELS.controlPlane in (machine.metadata.labels ?? {}),
      designatedInitServer: config.metadata.annotations?.[K3S_INIT_SERVER_ANNOTATION] === 'true',
      infrastructureProvisioned: cluster.status?.initialization?.infrastructureProvisioned === true,
      endpointKnown: Boolean(
        cluster.spec?.controlPlaneEndpoint?.host && cluster.spec.controlPlaneEndpoint.port,
      ),
      controlPlaneInitialized: this.controlPlaneInitialized(cluster),
    });
    if (decision.action === 'wait')
      return { outcome: { state: 'waiting', reason: decision.reason, message: decision.message } };
    return this.render(config, machine, cluster, decision.role, dataSecretName, rc);
  }

  private async render(
    config: K3sConfig,
    machine: Machine,
    cluster: Cluster,
    role: K3sRole,
    dataSecretName: string,
    rc: ReconcileContext,
  ): Promise<Step> {
    const namespace = config.metadata.namespace!;
    const spec = config.spec ?? {};
    const version = k3sReleaseFor(spec.version, machine.spec.version);
    if (!version) {
      return {
        outcome: {
          state: 'invalid',
          reason: InvalidReason.InvalidConfiguration,
          message: 'Neither spec.version nor the Machine spec.version names a K3s release',
        },
      };
    }
    let certificates;
    if (role !== 'agent') {
      const lookup = await readClusterCertificates(namespace, cluster.metadata.name!, this.deps.secrets);
      if (!lookup.found) {
        return {
          outcome: {
            state: 'waiting',
            reason: WaitingReason.ClusterCertificates,
            message: `Waiting for the cluster certificates: ${lookup.missing.join(', ')}`,
          },
          result: { requeueAfter: UNWATCHED_RETRY_MS },
        };
      }
      certificates = lookup.certificates;
    }
    const sources = await resolveSecretSources(namespace, spec, this.secretClient);
    if (!sources.resolved) {
      return {
        outcome: { state: 'waiting', reason: sources.reason, message: sources.message },
        result: { requeueAfter: UNWATCHED_RETRY_MS },
      };
    }
    const token = await ensureJoinToken(cluster, this.secretClient, this.deps.secrets);
    const connection = this.deps.agentConnection;
    const nodeAgent = connection
      ? await prepareNodeAgent(
          this.deps.client,
          this.secretClient,
          config,
          machine,
          connection,
          withRegistriesFiles(
            initialPlanFor(role, cluster.spec?.controlPlaneEndpoint),
            sources.read.registries,
          ),
          this.deps.agentLeaseSeconds,
        )
      : undefined;

    let cloudConfig: string;
    try {
      cloudConfig = renderK3sCloudConfig({
        ...bootstrapInputFor({ role, spec, ...sources.read, version, machine, cluster, token, certificates }),
        ...(nodeAgent && { nodeAgent }),
      });
    } catch (error) {
      if (error instanceof BootstrapRenderError) {
        return {
          outcome: { state: 'invalid', reason: InvalidReason.InvalidConfiguration, message: error.message },
        };
      }
      throw error;
    }

    try {
      await this.secretClient.create(bootstrapDataSecret(config, machine.spec.clusterName, cloudConfig));
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      // Written by an earlier attempt whose status update did not land: it stands, as data is never re-rendered.
      const existing = await this.existingDataSecret(config, dataSecretName, true);
      if (existing !== 'ours') throw error;
      return { outcome: { state: 'created', dataSecretName } };
    }
    rc.log.info(
      { role, dataSecretName, nodeAgent: nodeAgent !== undefined },
      'bootstrap data secret created',
    );
    return {
      outcome: { state: 'created', dataSecretName },
      created: true,
      ...(nodeAgent && { planSecretName: nodeAgent.secretName }),
    };
  }

  /**
   * Whether the data secret exists: from the cache, and from the API when the status says it was created
   * (the cache may lag, and rendering again must not happen just because of that).
   */
  private async existingDataSecret(
    config: K3sConfig,
    name: string,
    forceRead = false,
  ): Promise<'ours' | 'foreign' | 'none'> {
    const namespace = config.metadata.namespace!;
    let secret = this.deps.secrets.getByName(namespace, name);
    if (!secret && (forceRead || config.status?.initialization?.dataSecretCreated)) {
      secret = await getSecretIfExists(this.secretClient, namespace, name);
    }
    if (!secret) return 'none';
    return getControllerOf(secret)?.uid === config.metadata.uid ? 'ours' : 'foreign';
  }

  /** The Cluster of the owning Machine: it pauses the K3sConfig, and its state decides the role. */
  clusterOf(config: K3sConfig): Cluster | undefined {
    const machine = this.owningMachine(config);
    return machine && this.clusterOfMachine(machine);
  }

  private clusterOfMachine(machine: Machine): Cluster | undefined {
    return this.deps.clusters.getByName(machine.metadata.namespace, machine.spec.clusterName);
  }

  private owningMachine(config: K3sConfig): Machine | undefined {
    const refs = config.metadata.ownerReferences ?? [];
    const isMachine = (ref: V1OwnerReference) =>
      ref.kind === RESOURCES.Machine.kind && groupOf(ref.apiVersion) === RESOURCES.Machine.group;
    const ref = refs.find((r) => isMachine(r) && r.controller === true) ?? refs.find(isMachine);
    if (!ref) return undefined;
    const machine = this.deps.machines.getByName(config.metadata.namespace, ref.name);
    return machine && machine.metadata.uid === ref.uid ? machine : undefined;
  }

  /** The Cluster's contract field, or the K3sControlPlane's own status, whichever says so first. */
  private controlPlaneInitialized(cluster: Cluster): boolean {
    if (cluster.status?.initialization?.controlPlaneInitialized === true) return true;
    const ref = cluster.spec?.controlPlaneRef;
    if (
      !ref ||
      ref.apiGroup !== RESOURCES.K3sControlPlane.group ||
      ref.kind !== RESOURCES.K3sControlPlane.kind
    )
      return false;
    const controlPlane = this.deps.controlPlanes.getByName(cluster.metadata.namespace, ref.name);
    return controlPlane?.status?.initialization?.controlPlaneInitialized === true;
  }
}

/** Keys of the K3sConfigs a Cluster (or anything of that cluster) may unblock. */
export function configKeysOfCluster(
  configs: Informer<K3sConfig>,
  machines: Informer<Machine>,
  namespace: string | undefined,
  clusterName: string,
): string[] {
  const keys = new Set<string>();
  for (const machine of machines.list(namespace)) {
    const ref = machine.spec?.bootstrap?.configRef;
    if (machine.spec?.clusterName !== clusterName || !ref) continue;
    if (ref.apiGroup !== RESOURCES.K3sConfig.group || ref.kind !== RESOURCES.K3sConfig.kind) continue;
    const config = configs.getByName(machine.metadata.namespace, ref.name);
    if (config && !config.status?.initialization?.dataSecretCreated) keys.add(objectKey(config));
  }
  for (const config of configs.list(namespace)) {
    if (
      config.metadata.labels?.[LABELS.clusterName] === clusterName &&
      !config.status?.initialization?.dataSecretCreated
    ) {
      keys.add(objectKey(config));
    }
  }
  return [...keys];
}
