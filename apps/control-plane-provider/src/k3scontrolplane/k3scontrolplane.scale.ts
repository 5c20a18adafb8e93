import {
  describeFailure,
  formatLabelValue,
  isBeingDeleted,
  isNotFound,
  type EventRecorder,
  type Informer,
  type KubeClient,
  type ResourceClient,
  type ResourceType,
} from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  LABELS,
  RESOURCES,
  toRFC3339,
  type Cluster,
  type K3sConfig,
  type K3sControlPlane,
  type K3sControlPlaneStatus,
  type Machine,
  type Unstructured,
} from '@capstan/api';
import { createMachineUnit, OrphanedClones, StrandedMachines } from '@capstan/provider-kit';
import { CONTROL_PLANE_ANNOTATIONS, formatRemediationRecord } from '../planning/annotations.js';
import type { ControlPlaneMachine, RemediationRecord } from '../planning/control-plane-machine.js';
import { planControlPlane, type Plan, type PlanAction, type PlanInput } from '../planning/planner.js';
import { remediationPolicy } from '../planning/remediation.js';
import { machineSpecHash } from '../planning/spec-hash.js';
import type { CachedState, MachineExpectations } from './expectations.js';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import {
  buildInfrastructureMachine,
  buildK3sConfig,
  buildMachine,
  machineTemplateFields,
  newMachineName,
  TEMPLATE_FIELD_MANAGER,
} from './machine-objects.js';
import { ControlPlaneInPlace, type AskCanUpdate, type InPlaceDeps } from './k3scontrolplane.in-place.js';
import { machineKindOf, type ProviderKinds } from '@capstan/provider-kit';

/** How soon to look again while the cache has not caught up with this controller's own machine changes. */
export const EXPECTATION_RECHECK_MS = 2_000;
/** How soon to ask the bootstrap provider again when it did not answer. */
export const ASK_RETRY_MS = 10_000;
/** How soon to look again for a missing machine template (a template that appears wakes no reconcile). */
export const TEMPLATE_RECHECK_MS = 15_000;

/** Outcome of executing a plan step. */
export interface Execution {
  lastRemediation?: K3sControlPlaneStatus['lastRemediation'];
  retryAfterMs?: number;
  blockedBy?: string;
}

/** What the scale phase did: the plan (for the status), whether it could plan at all, and its step's outcome. */
export interface ScaleResult {
  plan: Plan;
  /** False while the cache does not show the machine changes of an earlier reconcile yet (nothing planned). */
  settled: boolean;
  execution: Execution;
}

export const maxSurgeOf = (kcp: K3sControlPlane): 0 | 1 => {
  const value = kcp.spec.rollout?.strategy?.rollingUpdate?.maxSurge;
  return value === 0 || value === '0' ? 0 : 1;
};

/** What the planner is given: the spec, the machines, the Cluster's control plane failure domains. */
export function planInputFor(
  kcp: K3sControlPlane,
  cluster: Cluster,
  machines: readonly ControlPlaneMachine[],
  initialized: boolean,
  now: number,
): PlanInput {
  return {
    desiredReplicas: kcp.spec.replicas ?? 1,
    initialized,
    maxSurge: maxSurgeOf(kcp),
    machines,
    failureDomains: (cluster.status?.failureDomains ?? [])
      .filter((fd) => fd.controlPlane === true)
      .map((fd) => fd.name),
    remediation: remediationPolicy(kcp.spec.remediation),
    now,
  };
}

/**
 * When the scale phase wants to look again without a watch event to wake it: the cache catching up, a
 * deferred remediation, a missing template, and `rollout.after` coming due.
 */
export function scaleRequeueDelays(kcp: K3sControlPlane, scale: ScaleResult, now: number): number[] {
  const delays: number[] = [];
  if (!scale.settled) delays.push(EXPECTATION_RECHECK_MS);
  const action = scale.plan.action;
  if (action.type === 'wait' && action.retryAt !== undefined) delays.push(Math.max(1, action.retryAt - now));
  if (scale.execution.retryAfterMs !== undefined) delays.push(scale.execution.retryAfterMs);
  const after = kcp.spec.rollout?.after ? Date.parse(kcp.spec.rollout.after) : NaN;
  if (!Number.isNaN(after) && after > now) delays.push(after - now + 1000);
  return delays;
}

export interface ScalerDeps {
  client: KubeClient;
  recorder: EventRecorder;
  machineClient: ResourceClient<Machine>;
  configClient: ResourceClient<K3sConfig>;
  machines: Pick<Informer<Machine>, 'getByName'>;
  kinds: ProviderKinds;
  expectations: MachineExpectations;
  /** Asks a machine's bootstrap provider whether a change can be applied in place; without it, machines are replaced. */
  askCanUpdate?: AskCanUpdate;
  /** The informer of a machine template kind, to read templates from (without it, each read is a GET). */
  templateCacheOf?: (type: ResourceType) => Informer<KubernetesObject>;
  /** How old a Machine must be before it is judged stranded (STRANDED_MACHINE_GRACE_MS by default). */
  strandedGraceMs?: number;
  /** Pauses between attempts to learn the fate of a Machine create whose answer was lost (tests shorten them). */
  resolveDelaysMs?: readonly number[];
}

/**
 * The scale phase: plans one step for the control plane's Machines (see planning/planner.ts) once the cache
 * shows this controller's earlier machine changes, and takes it: create, delete, or remediate one machine.
 */
export class ControlPlaneScaler {
  private readonly orphanedClones: OrphanedClones;
  private readonly strandedMachines: StrandedMachines;

  constructor(private readonly deps: ScalerDeps) {
    this.orphanedClones = new OrphanedClones({
      client: deps.client,
      machines: deps.machines,
      machinesApi: deps.machineClient,
      recorder: deps.recorder,
    });
    this.strandedMachines = new StrandedMachines({
      client: deps.client,
      machinesApi: deps.machineClient,
      resolve: (apiGroup, kind) => deps.kinds.resourceOf(apiGroup, kind),
      recorder: deps.recorder,
      ...(deps.strandedGraceMs !== undefined && { graceMs: deps.strandedGraceMs }),
    });
  }

  async reconcile(scope: ControlPlaneScope, initialized: boolean): Promise<ScaleResult> {
    const kcp = scope.kit.obj;
    let settled = this.deps.expectations.satisfied(scope.kit.key, (name) =>
      this.cachedState(kcp.metadata.namespace!, name),
    );
    let strandedRecheckMs: number | undefined;
    this.orphanedClones.notice(kcp, scope.now);
    if (settled) {
      const replaced = await this.replaceStrandedMachines(scope);
      strandedRecheckMs = replaced.recheckInMs;
      // The planner counts the replaced machines once the cache shows them deleting.
      if (replaced.deleted > 0) settled = false;
    }
    const inPlaceWork = settled && initialized ? new ControlPlaneInPlace(scope, this.inPlaceDeps()) : undefined;
    // A start a restart cut off is finished (or undone) before anything is planned: the planner counts it as running.
    await inPlaceWork?.resume();
    const inPlace = await inPlaceWork?.verdict();
    const plan: Plan = settled
      ? planControlPlane({
          ...planInputFor(scope.kit.obj, scope.cluster, scope.facts, initialized, scope.now.getTime()),
          ...(inPlace && { inPlace }),
        })
      : { action: { type: 'wait', message: 'Waiting for the cache to show the last machine change' } };
    const execution = await this.execute(scope, plan.action, inPlaceWork);
    if (strandedRecheckMs !== undefined)
      execution.retryAfterMs = Math.min(execution.retryAfterMs ?? Infinity, strandedRecheckMs);
    if (inPlace?.kind === 'waiting') execution.retryAfterMs = Math.min(execution.retryAfterMs ?? Infinity, ASK_RETRY_MS);
    const sweepInMs = await this.sweepOrphanedClones(scope);
    if (sweepInMs !== undefined) execution.retryAfterMs = Math.min(execution.retryAfterMs ?? Infinity, sweepInMs);
    return { plan, settled, execution };
  }

  /** Deletes Machines whose bootstrap config or infrastructure machine is gone before they were provisioned. */
  private async replaceStrandedMachines(scope: ControlPlaneScope): Promise<{ deleted: number; recheckInMs?: number }> {
    const scan = await this.strandedMachines.scan(scope.machines, scope.now, scope.log);
    let deleted = 0;
    for (const stranded of scan.stranded) {
      if (!(await this.strandedMachines.replace(scope.kit.obj, stranded, scope.log))) continue;
      this.deps.expectations.expectDelete(scope.kit.key, stranded.machine.metadata.name!);
      deleted++;
    }
    return { deleted, ...(scan.recheckInMs !== undefined && { recheckInMs: scan.recheckInMs }) };
  }

  /** The control plane is deleted with its clones (owner references): nothing is left to sweep. */
  forget(kcp: K3sControlPlane): void {
    this.orphanedClones.forget(kcp.metadata.uid);
  }

  /** Deletes clones a failed or cut-off machine creation left. */
  private async sweepOrphanedClones(scope: ControlPlaneScope): Promise<number | undefined> {
    const kcp = scope.kit.obj;
    const templateRef = kcp.spec.machineTemplate.spec.infrastructureRef;
    const locate = async () => ({
      types: [
        RESOURCES.K3sConfig,
        await this.deps.kinds.resourceOf(templateRef.apiGroup, machineKindOf(templateRef.kind)),
      ],
      labelSelector: `${LABELS.clusterName}=${scope.clusterName},${LABELS.controlPlaneName}=${formatLabelValue(kcp.metadata.name!)}`,
    });
    return this.orphanedClones.sweepOrRetryLater(kcp, locate, scope.now, scope.log);
  }

  private inPlaceDeps(): InPlaceDeps {
    const { client, machineClient, configClient, kinds, askCanUpdate } = this.deps;
    return { client, machineClient, configClient, kinds, ...(askCanUpdate && { ask: askCanUpdate }) };
  }

  async deleteMachine(kcp: K3sControlPlane, name: string): Promise<void> {
    try {
      await this.deps.machineClient.delete({ namespace: kcp.metadata.namespace, name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  private async execute(
    scope: ControlPlaneScope,
    action: PlanAction,
    inPlace: ControlPlaneInPlace | undefined,
  ): Promise<Execution> {
    const key = scope.kit.key;
    const expectations = this.deps.expectations;
    switch (action.type) {
      case 'create': {
        this.orphanedClones.expect(scope.kit.obj, scope.now);
        const created = await this.createMachine(scope, action.initServer, action.failureDomain);
        if ('blockedBy' in created)
          return { blockedBy: created.blockedBy, retryAfterMs: TEMPLATE_RECHECK_MS };
        expectations.expectCreate(key, created.name);
        scope.log.info(
          { machine: created.name, reason: action.reason, initServer: action.initServer },
          'control plane machine created',
        );
        await scope.record(
          'MachineCreated',
          'CreateMachine',
          `Created machine ${created.name} (${action.reason})`,
        );
        return {};
      }
      case 'delete': {
        await this.deleteMachine(scope.kit.obj, action.machine);
        expectations.expectDelete(key, action.machine);
        scope.log.info({ machine: action.machine, reason: action.reason }, 'control plane machine deleted');
        await scope.record(
          'MachineDeleted',
          'DeleteMachine',
          `Deleted machine ${action.machine} (${action.reason})`,
        );
        return {};
      }
      case 'remediate': {
        const record: RemediationRecord = {
          machine: action.machine,
          time: toRFC3339(scope.now),
          retryCount: action.retryCount,
        };
        // Written before the deletion, so the replacement learns it replaces a remediated machine.
        const kcp = scope.kit.obj;
        kcp.metadata.annotations = {
          ...kcp.metadata.annotations,
          [CONTROL_PLANE_ANNOTATIONS.remediationInProgress]: formatRemediationRecord(record),
        };
        await scope.kit.patchNow();
        await this.deleteMachine(scope.kit.obj, action.machine);
        expectations.expectDelete(key, action.machine);
        scope.log.info(
          { machine: action.machine, retryCount: action.retryCount },
          'unhealthy control plane machine remediated',
        );
        await scope.record(
          'MachineRemediated',
          'RemediateMachine',
          `Deleted unhealthy machine ${action.machine} (retry ${action.retryCount})`,
        );
        return { lastRemediation: record };
      }
      case 'update': {
        // The planner only plans an update from an in-place verdict, which this reconcile's in-place work gave.
        await (inPlace ?? new ControlPlaneInPlace(scope, this.inPlaceDeps())).start(action.machine);
        return {};
      }
      default:
        return {};
    }
  }

  /**
   * Creates the infrastructure machine (cloned from the template), the K3sConfig and then the Machine that
   * ties them together, as one unit (createMachineUnit: a hand-over does not cut it, and the clones are deleted
   * only when the Machine is certain not to exist). A remediation in progress is handed to the new Machine and
   * cleared from the K3sControlPlane (written with its status).
   */
  private async createMachine(
    scope: ControlPlaneScope,
    initServer: boolean,
    failureDomain: string | undefined,
  ): Promise<{ name: string } | { blockedBy: string }> {
    const kcp = scope.kit.obj;
    const { client, configClient, machineClient, kinds } = this.deps;
    const namespace = kcp.metadata.namespace!;
    const clusterName = scope.clusterName;
    const templateRef = kcp.spec.machineTemplate.spec.infrastructureRef;
    const templateType = await kinds.resourceOf(templateRef.apiGroup, templateRef.kind);
    const machineType = await kinds.resourceOf(templateRef.apiGroup, machineKindOf(templateRef.kind));
    const cache = this.deps.templateCacheOf?.(templateType);
    const template = (await (cache
      ? cache.getOrFetch(namespace, templateRef.name)
      : client.resource(templateType).getIfExists({ namespace, name: templateRef.name }))) as Unstructured | undefined;
    if (!template) return { blockedBy: `Waiting for machine template ${templateRef.kind} ${templateRef.name}` };
    let name = newMachineName(kcp.metadata.name!);
    while (this.deps.machines.getByName(namespace, name)) name = newMachineName(kcp.metadata.name!);

    const infraClient = client.resource(machineType);
    const infraMachine = buildInfrastructureMachine(kcp, clusterName, name, template, templateType, machineType);
    // The cache shows the remediation recorded by an earlier reconcile: the kit waits while it lags this
    // controller's own writes of the K3sControlPlane.
    const remediationFor = kcp.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.remediationInProgress];
    const machine = await createMachineUnit({
      name,
      log: scope.log,
      clones: [
        {
          kind: machineType.kind,
          create: (options) => infraClient.create(infraMachine, options),
          delete: () => infraClient.delete({ namespace, name }),
        },
        {
          kind: RESOURCES.K3sConfig.kind,
          create: (options) => configClient.create(buildK3sConfig(kcp, clusterName, name, initServer), options),
          delete: () => configClient.delete({ namespace, name }),
        },
      ],
      createMachine: (options) =>
        machineClient.create(
          buildMachine({
            kcp,
            clusterName,
            name,
            specHash: machineSpecHash(kcp),
            infrastructure: { apiGroup: machineType.group, kind: machineType.kind },
            ...(failureDomain && { failureDomain }),
            ...(remediationFor && { remediationFor }),
          }),
          options,
        ),
      readMachine: () => machineClient.getIfExists({ namespace, name }),
      ...(this.deps.resolveDelaysMs && { resolveDelaysMs: this.deps.resolveDelaysMs }),
    });
    // The Machine exists: what is left is bookkeeping. The template fields are applied to every Machine in place by
    // later reconciles too, so a cut here (the cluster moved meanwhile) must not lose the creation.
    await machineClient
      .apply(machineTemplateFields(kcp, machine), { fieldManager: TEMPLATE_FIELD_MANAGER })
      .catch((err: unknown) =>
        scope.log.info(
          { machine: name, err: { message: describeFailure(err) } },
          'the machine template fields are applied by a later reconcile',
        ),
      );
    if (remediationFor) {
      const { [CONTROL_PLANE_ANNOTATIONS.remediationInProgress]: _handedOver, ...rest } =
        kcp.metadata.annotations!;
      kcp.metadata.annotations = rest;
    }
    return { name };
  }

  private cachedState(namespace: string, name: string): CachedState {
    const machine = this.deps.machines.getByName(namespace, name);
    if (!machine) return 'absent';
    return isBeingDeleted(machine) ? 'deleting' : 'present';
  }
}
