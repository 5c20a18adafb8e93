import {
  ANNOTATIONS,
  IN_PLACE_ANNOTATIONS,
  inPlaceUpdateFailure,
  LABELS,
  RESOURCES,
  recordedDecision,
  runningVersion,
  updateInProgress,
  type InPlaceDecision,
  type Machine,
  type MachineDeployment,
  type MachineSet,
  type MachineTemplateSpec,
} from '@capstan/api';
import type { CanUpdateMachineRequest, CanUpdateMachineResponse } from '@capstan/events';
import { canonicalJson, describeFailure, objectKey, type ReconcileContext, type ResourceClient } from '@capstan/kube';
import { waitForCache } from '../shared/cache-wait.js';
import { isAvailable, isDeleting, timeMs } from '../shared/machine-state.js';
import { ownerReferenceTo } from '../shared/ownership.js';
import type { WorkloadContext } from '../shared/workload-context.js';
import { machineLabels } from '../machineset/machineset.machines.js';
import type { RolloutLimits } from './rollout-limits.js';
import { rolloutRelevantSpec, sameMachines } from './template-hash.js';

// A MachineDeployment rollout in place (docs/in-place-updates.md): instead of creating Machines from the new set and
// deleting old ones, old Machines move to the new set and are updated where they stand. Per old set the bootstrap
// provider is asked once whether its Machines can take the new template (the answer is recorded on the set). A
// move changes a Machine and two sets, so it is marked on the Machine first (`moving-to`): while any Machine of a
// set carries it, the set leaves its count alone (machineset.machines.ts), and a restarted core finishes the move.

export type InPlaceOutcome =
  /** The change is not for in place (policy Never, or Preferred and a provider said no): replace Machines. */
  | { kind: 'replace' }
  /** Handled in place this reconcile (or halted on a failed update). */
  | { kind: 'in-place'; halted?: string }
  /** Required and not possible in place: nothing is replaced; `reason` names what blocks it. */
  | { kind: 'blocked'; reason: string }
  /** No answer from the bootstrap provider yet: ask again later. */
  | { kind: 'waiting'; reason: string };

/** How soon to ask again after the bootstrap provider did not answer. */
export const ASK_RETRY_MS = 10_000;

/** Machine template fields that may differ for an in-place update; the bootstrap provider judges them. */
const UPDATABLE = new Set(['version', 'bootstrap']);

export interface InPlaceRolloutDeps {
  workload: WorkloadContext;
  machinesApi: ResourceClient<Machine>;
  setsApi: ResourceClient<MachineSet>;
  /** Sets one set's spec.replicas (and waits for the cache to show it). */
  scaleSet: (ms: MachineSet, replicas: number) => Promise<void>;
  rc: ReconcileContext;
}

const movingTo = (m: Machine) => m.metadata.annotations?.[IN_PLACE_ANNOTATIONS.movingTo];
const isUpdating = (m: Machine) => movingTo(m) !== undefined || updateInProgress(m.metadata.annotations) !== undefined;

function updateFailed(m: Machine): string | undefined {
  const failure = inPlaceUpdateFailure(m);
  return failure && `Machine ${m.metadata.name}: ${failure}`;
}

/**
 * Template fields that keep Machines from moving in place, whatever the bootstrap provider says: everything but
 * the version and the bootstrap config template (infrastructure changes are never applied in place).
 */
export function fieldsNeverInPlace(from: MachineTemplateSpec, to: MachineTemplateSpec): string[] {
  const a = rolloutRelevantSpec(from) as Record<string, unknown>;
  const b = rolloutRelevantSpec(to) as Record<string, unknown>;
  const fields = new Set<string>();
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (UPDATABLE.has(key)) continue;
    if (canonicalJson(a[key] ?? null) !== canonicalJson(b[key] ?? null)) fields.add(`spec.template.spec.${key}`);
  }
  const refA = from.spec.bootstrap;
  const refB = to.spec.bootstrap;
  if (
    refA.dataSecretName !== refB.dataSecretName ||
    refA.configRef?.apiGroup !== refB.configRef?.apiGroup ||
    refA.configRef?.kind !== refB.configRef?.kind
  ) {
    fields.add('spec.template.spec.bootstrap');
  }
  return [...fields].sort();
}

function describeBlocked(decision: InPlaceDecision, set: MachineSet): string {
  const fields = decision.fields && decision.fields.length > 0 ? ` (${decision.fields.join(', ')})` : '';
  return `MachineSet ${set.metadata.name} cannot be updated in place${fields}: ${decision.reason ?? 'refused'}`;
}

export class InPlaceRollout {
  constructor(private readonly deps: InPlaceRolloutDeps) {}

  /**
   * One step of an in-place rollout from `oldSets` to `current`: the decisions, then finishing moves a restart
   * interrupted, then new moves within the availability budget.
   */
  async step(
    deployment: MachineDeployment,
    current: MachineSet,
    oldSets: readonly MachineSet[],
    machinesBySet: ReadonlyMap<string, readonly Machine[]>,
    limits: RolloutLimits,
  ): Promise<InPlaceOutcome> {
    const policy = deployment.spec.rollout?.inPlace ?? 'Never';
    const target = current.metadata.labels?.[LABELS.machineTemplateHash] ?? '';
    const live = (ms: MachineSet) => (machinesBySet.get(ms.metadata.uid!) ?? []).filter((m) => !isDeleting(m));
    const decisions = new Map<string, InPlaceDecision>();
    for (const ms of oldSets) {
      const machines = live(ms);
      if (machines.length === 0) continue;
      // Same template, newer set: `rollout.after` asks for new Machines, which is what it is for.
      if (sameMachines(ms.spec.template, current.spec.template)) return { kind: 'replace' };
      const decision = await this.decisionFor(ms, current, target, machines);
      if ('waiting' in decision) return { kind: 'waiting', reason: decision.waiting };
      if (!decision.inPlace) {
        return policy === 'Required' ? { kind: 'blocked', reason: describeBlocked(decision, ms) } : { kind: 'replace' };
      }
      decisions.set(ms.metadata.name!, decision);
    }

    const all = [current, ...oldSets].flatMap(live);
    // Moves a restart interrupted are finished first.
    for (const machine of all.filter((m) => movingTo(m) === current.metadata.name)) {
      const from = oldSets.find((ms) => live(ms).includes(machine));
      await this.alignReplicas(current, oldSets, all, limits);
      await this.completeMove(machine, current, target, from ? decisions.get(from.metadata.name!) : undefined);
    }
    // A failed update for the current template halts the rollout; one for an older template is moved again.
    const stale = (m: Machine) => updateFailed(m) !== undefined && updateInProgress(m.metadata.annotations) !== target;
    const halted = all
      .filter((m) => updateInProgress(m.metadata.annotations) === target)
      .map(updateFailed)
      .find((failure) => failure !== undefined);
    if (halted) return { kind: 'in-place', halted };

    let budget = all.filter((m) => isAvailable(m) && !isUpdating(m)).length - (limits.replicas - limits.maxUnavailable);
    const candidates = oldSets
      .flatMap((ms) => live(ms).map((machine) => ({ machine, set: ms })))
      .filter(({ machine }) => !isUpdating(machine) || stale(machine))
      // Machines that are not Available anyway (or failed an earlier update) go first: moving them costs nothing.
      .sort(
        (a, b) =>
          Number(isAvailable(a.machine) && !isUpdating(a.machine)) - Number(isAvailable(b.machine) && !isUpdating(b.machine)) ||
          (timeMs(a.machine.metadata.creationTimestamp) ?? 0) - (timeMs(b.machine.metadata.creationTimestamp) ?? 0),
      );
    let moving = 0;
    for (const { machine, set } of candidates) {
      // A machine whose earlier update failed is already counted as unavailable: moving it costs nothing more.
      if (isAvailable(machine) && !isUpdating(machine)) {
        if (budget <= 0) break;
        budget--;
      }
      const marked = await this.markMoving(machine, current);
      moving++;
      const index = all.indexOf(machine);
      all[index] = marked;
      await this.alignReplicas(current, oldSets, all, limits);
      await this.completeMove(marked, current, target, decisions.get(set.metadata.name!));
      this.deps.rc.log.info(
        { machine: machine.metadata.name, from: set.metadata.name, to: current.metadata.name, target },
        'moved machine for an in-place update',
      );
    }
    if (moving === 0) await this.alignReplicas(current, oldSets, all, limits);
    return { kind: 'in-place' };
  }

  /** The recorded decision for `target`, or the bootstrap provider's answer (then recorded on the old set). */
  private async decisionFor(
    oldSet: MachineSet,
    current: MachineSet,
    target: string,
    machines: readonly Machine[],
  ): Promise<InPlaceDecision | { waiting: string }> {
    const recorded = recordedDecision(oldSet.metadata.annotations, target);
    if (recorded) return recorded;
    const never = fieldsNeverInPlace(oldSet.spec.template, current.spec.template);
    let decision: InPlaceDecision;
    if (never.length > 0) {
      decision = {
        target,
        inPlace: false,
        reason: never.some((f) => f.startsWith('spec.template.spec.infrastructureRef'))
          ? 'infrastructure template changes are never applied in place'
          : 'only the version and the bootstrap configuration can change in place',
        fields: never,
      };
    } else {
      const representative = machines.find((m) => m.spec.bootstrap.configRef);
      const desiredRef = current.spec.template.spec.bootstrap.configRef;
      if (!representative?.spec.bootstrap.configRef || !desiredRef) {
        decision = { target, inPlace: false, reason: 'the Machines have no bootstrap config to update', fields: ['spec.template.spec.bootstrap'] };
      } else {
        const request: CanUpdateMachineRequest = {
          machine: { namespace: representative.metadata.namespace!, name: representative.metadata.name! },
          bootstrapConfig: representative.spec.bootstrap.configRef,
          ...(runningVersion(representative) && { currentVersion: runningVersion(representative) }),
          ...(current.spec.template.spec.version && { desiredVersion: current.spec.template.spec.version }),
          desiredConfigFrom: desiredRef,
        };
        let answer: CanUpdateMachineResponse;
        try {
          answer = await this.deps.workload.askCanUpdate(request);
        } catch (error) {
          return { waiting: `asking whether MachineSet ${oldSet.metadata.name} can be updated in place: ${describeFailure(error)}` };
        }
        decision = { target, ...answer };
      }
    }
    await this.deps.setsApi.mergePatch(
      { namespace: oldSet.metadata.namespace, name: oldSet.metadata.name! },
      { metadata: { annotations: { [IN_PLACE_ANNOTATIONS.decision]: JSON.stringify(decision) } } },
    );
    this.deps.rc.log.info(
      { machineSet: oldSet.metadata.name, target, inPlace: decision.inPlace, restart: decision.restart, fields: decision.fields },
      'in-place decision recorded',
    );
    return decision;
  }

  /**
   * Old sets keep the Machines that are not moving (they never grow back); the new set takes the rest of
   * spec.replicas, plus maxSurge while old Machines remain and no Machine may be unavailable (upstream surges
   * first when maxUnavailable is 0).
   */
  private async alignReplicas(
    current: MachineSet,
    oldSets: readonly MachineSet[],
    all: readonly Machine[],
    limits: RolloutLimits,
  ): Promise<void> {
    const owned = (ms: MachineSet) =>
      all.filter((m) => m.metadata.ownerReferences?.some((o) => o.controller && o.uid === ms.metadata.uid));
    let oldKeep = 0;
    for (const ms of oldSets) {
      const keep = owned(ms).filter((m) => movingTo(m) === undefined).length;
      oldKeep += keep;
      if ((ms.spec.replicas ?? 1) !== keep) await this.deps.scaleSet(this.fresh(ms), keep);
    }
    const surge = limits.maxUnavailable === 0 && oldKeep > 0 ? limits.maxSurge : 0;
    const replicas = Math.max(0, limits.replicas - oldKeep + surge);
    if ((current.spec.replicas ?? 1) !== replicas) await this.deps.scaleSet(this.fresh(current), replicas);
  }

  private fresh(ms: MachineSet): MachineSet {
    return this.deps.workload.machineSets.get(objectKey(ms)) ?? ms;
  }

  private async markMoving(machine: Machine, current: MachineSet): Promise<Machine> {
    const written = await this.deps.machinesApi.mergePatch(
      { namespace: machine.metadata.namespace, name: machine.metadata.name! },
      {
        metadata: {
          resourceVersion: machine.metadata.resourceVersion,
          annotations: { [IN_PLACE_ANNOTATIONS.movingTo]: current.metadata.name! },
        },
      },
    );
    await this.waitFor(written);
    return written;
  }

  /**
   * The Machine joins the new set: its bootstrap config takes the new template's spec, and the Machine the set's
   * labels, controller reference and version, with `update-in-progress` for the Machine controller to carry on.
   */
  private async completeMove(
    machine: Machine,
    current: MachineSet,
    target: string,
    decision: InPlaceDecision | undefined,
  ): Promise<void> {
    const template = current.spec.template.spec;
    const configRef = machine.spec.bootstrap.configRef;
    const templateRef = template.bootstrap.configRef;
    if (configRef && templateRef) {
      const source = await this.deps.workload.templates.get(machine.metadata.namespace!, templateRef);
      const spec = (source['spec'] as { template?: { spec?: unknown } } | undefined)?.template?.spec ?? {};
      const type = await this.deps.workload.templates.resolve(configRef.apiGroup, configRef.kind);
      const configs = this.deps.workload.client.resource(type);
      const ref = { namespace: machine.metadata.namespace, name: configRef.name };
      // The whole spec is replaced (a merge patch would keep fields the new template dropped).
      await configs.jsonPatch(ref, [{ op: 'add', path: '/spec', value: spec }]);
      await configs.mergePatch(ref, { metadata: { annotations: { [ANNOTATIONS.clonedFromName]: templateRef.name } } });
    }
    const ownerReferences = [
      ...(machine.metadata.ownerReferences ?? []).filter((o) => !(o.controller && o.kind === RESOURCES.MachineSet.kind)),
      ownerReferenceTo(current, RESOURCES.MachineSet, true),
    ];
    const written = await this.deps.machinesApi.mergePatch(
      { namespace: machine.metadata.namespace, name: machine.metadata.name! },
      {
        metadata: {
          labels: machineLabels(current),
          ownerReferences,
          annotations: {
            [IN_PLACE_ANNOTATIONS.movingTo]: null,
            [IN_PLACE_ANNOTATIONS.updateInProgress]: target,
            [IN_PLACE_ANNOTATIONS.restart]: decision?.restart ? 'true' : null,
            [IN_PLACE_ANNOTATIONS.readyToUpdate]: null,
          },
        },
        spec: { version: template.version ?? null },
      },
    );
    await this.waitFor(written);
  }

  private async waitFor(written: Machine): Promise<void> {
    await waitForCache(
      `Machine ${written.metadata.name} at resourceVersion ${written.metadata.resourceVersion}`,
      () => {
        const cached = this.deps.workload.machines.get(objectKey(written));
        return cached === undefined || Number(cached.metadata.resourceVersion) >= Number(written.metadata.resourceVersion);
      },
      this.deps.rc.signal,
    );
  }
}
