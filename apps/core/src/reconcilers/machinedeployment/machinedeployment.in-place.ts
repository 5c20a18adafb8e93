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
import {
  canonicalJson,
  describeFailure,
  isNotFound,
  objectKey,
  type ReconcileContext,
  type ResourceClient,
} from '@capstan/kube';
import { waitForCache } from '../shared/cache-wait.js';
import { hasDeleteAnnotation, isAvailable, isDeleting, timeMs } from '../shared/machine-state.js';
import { ownerReferenceTo } from '../shared/ownership.js';
import type { WorkloadContext } from '../shared/workload-context.js';
import { machineLabels } from '../machineset/machineset.machines.js';
import type { RolloutLimits } from './rollout-limits.js';
import { rolloutRelevantSpec, sameMachines } from './template-hash.js';

// A MachineDeployment rollout in place (docs/in-place-updates.md): instead of creating Machines from the new set and
// deleting old ones, old Machines move to the new set and are updated where they stand. The bootstrap provider is
// asked about each Machine on its own whether it can take the new template (the answer is recorded on the Machine):
// after a partial failure the Machines of one set run different versions and configurations. A move changes a
// Machine and two sets, so it is marked on the Machine first (`moving-to`): while any Machine of a set carries it, the
// set leaves its count alone (machineset.machines.ts); a restarted core finishes the move, and a later reconcile
// undoes one whose target is no longer where the deployment is going (clearAbandonedMoves).

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
  /** Sets one set's spec.replicas (and waits for the cache to show it). */
  scaleSet: (ms: MachineSet, replicas: number) => Promise<void>;
  rc: ReconcileContext;
}

const movingTo = (m: Machine) => m.metadata.annotations?.[IN_PLACE_ANNOTATIONS.movingTo];
const isUpdating = (m: Machine) =>
  movingTo(m) !== undefined || updateInProgress(m.metadata.annotations) !== undefined;

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
    if (canonicalJson(a[key] ?? null) !== canonicalJson(b[key] ?? null))
      fields.add(`spec.template.spec.${key}`);
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

function describeBlocked(refused: Candidate & { decision: InPlaceDecision }): string {
  const { decision } = refused;
  const fields = decision.fields && decision.fields.length > 0 ? ` (${decision.fields.join(', ')})` : '';
  return `Machine ${refused.machine.metadata.name} of MachineSet ${refused.set.metadata.name} cannot be updated in place${fields}: ${decision.reason ?? 'refused'}`;
}

/** An old Machine that may move, and the set it is in. */
interface Candidate {
  machine: Machine;
  set: MachineSet;
}

const controllerUid = (m: Machine) => m.metadata.ownerReferences?.find((o) => o.controller)?.uid;
/** Available and neither moving nor updating: what counts towards replicas - maxUnavailable. */
const serving = (m: Machine) => isAvailable(m) && !isUpdating(m);

/**
 * Which of the new set's Machines go once an in-place rollout is over and the set holds more than spec.replicas (the
 * Machines it surged with maxUnavailable 0): one already marked for deletion first, then one that is not Available
 * (it costs nothing), then one the set created for the rollout (the surge, newest first) rather than one that was
 * updated in place. Never one still moving or updating (it is about to be Available again), and only as many as keep
 * replicas - maxUnavailable Machines serving.
 */
export function surplusToDrop(
  joining: readonly Machine[],
  limits: RolloutLimits,
  setCreatedAt: number | undefined,
): Machine[] {
  const surplus = joining.length - limits.replicas;
  if (surplus <= 0) return [];
  const created = (m: Machine) => timeMs(m.metadata.creationTimestamp) ?? 0;
  const surged = (m: Machine) => setCreatedAt !== undefined && created(m) >= setCreatedAt;
  const ranked = joining
    .filter((m) => !isUpdating(m))
    .sort(
      (a, b) =>
        Number(hasDeleteAnnotation(b)) - Number(hasDeleteAnnotation(a)) ||
        Number(serving(a)) - Number(serving(b)) ||
        Number(surged(b)) - Number(surged(a)) ||
        created(b) - created(a),
    );
  let available = joining.filter(serving).length;
  const minAvailable = limits.replicas - limits.maxUnavailable;
  const leaving: Machine[] = [];
  for (const machine of ranked) {
    if (leaving.length === surplus) break;
    if (serving(machine)) {
      if (available - 1 < minAvailable) continue;
      available--;
    }
    leaving.push(machine);
  }
  return leaving;
}

export class InPlaceRollout {
  constructor(private readonly deps: InPlaceRolloutDeps) {}

  /**
   * One step of an in-place rollout from `oldSets` to `current`: finishing moves a restart interrupted, the decisions
   * (each old Machine on its own), then new moves within the availability budget, and the new set's size (its surge
   * held until every moved Machine finished its update, then dropped).
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
    const live = (ms: MachineSet) =>
      (machinesBySet.get(ms.metadata.uid!) ?? []).filter((m) => !isDeleting(m));
    const all = [current, ...oldSets].flatMap(live);
    const setOf = (m: Machine) => oldSets.find((ms) => ms.metadata.uid === controllerUid(m));
    const replaceIn = (written: Machine) => {
      all[all.findIndex((m) => m.metadata.uid === written.metadata.uid)] = written;
    };

    // Moves a restart interrupted are finished first: their Machines were decided on when they were marked.
    for (const machine of all.filter((m) => movingTo(m) === current.metadata.name)) {
      const from = setOf(machine);
      if (!from) continue;
      const decided = await this.decisionFor({ machine, set: from }, current, target);
      if ('waiting' in decided) return { kind: 'waiting', reason: decided.waiting };
      await this.alignReplicas(current, oldSets, all, limits);
      replaceIn(await this.completeMove(decided.machine, current, target, decided.decision));
    }
    // Same template, newer set: `rollout.after` asks for new Machines, which is what it is for.
    if (oldSets.some((ms) => live(ms).length > 0 && sameMachines(ms.spec.template, current.spec.template))) {
      return { kind: 'replace' };
    }
    // A failed update for the current template halts the rollout; one for an older template is moved again.
    const halted = all
      .filter((m) => updateInProgress(m.metadata.annotations) === target)
      .map(updateFailed)
      .find((failure) => failure !== undefined);
    if (halted) return { kind: 'in-place', halted };

    const stale = (m: Machine) =>
      updateFailed(m) !== undefined && updateInProgress(m.metadata.annotations) !== target;
    const able: (Candidate & { decision: InPlaceDecision })[] = [];
    const refused: (Candidate & { decision: InPlaceDecision })[] = [];
    for (const ms of oldSets) {
      for (const machine of live(ms).filter((m) => !isUpdating(m) || stale(m))) {
        const decided = await this.decisionFor({ machine, set: ms }, current, target);
        if ('waiting' in decided) return { kind: 'waiting', reason: decided.waiting };
        replaceIn(decided.machine);
        (decided.decision.inPlace ? able : refused).push({
          machine: decided.machine,
          set: ms,
          decision: decided.decision,
        });
      }
    }
    if (able.length === 0 && refused.length > 0) {
      if (policy === 'Required') return { kind: 'blocked', reason: describeBlocked(refused[0]!) };
      // The rest is replaced once no Machine moves or updates in place any more: the rolling update counts Machines by
      // their availability, and an updating one is about to lose or regain it.
      if (!all.some((m) => isUpdating(m) && !stale(m))) return { kind: 'replace' };
    }

    let budget = all.filter(serving).length - (limits.replicas - limits.maxUnavailable);
    // Machines that are not Available anyway (or failed an earlier update) go first: moving them costs nothing.
    able.sort(
      (a, b) =>
        Number(serving(a.machine)) - Number(serving(b.machine)) ||
        (timeMs(a.machine.metadata.creationTimestamp) ?? 0) -
          (timeMs(b.machine.metadata.creationTimestamp) ?? 0),
    );
    let moving = 0;
    for (const { machine, set, decision } of able) {
      // A machine whose earlier update failed is already counted as unavailable: moving it costs nothing more.
      if (serving(machine)) {
        if (budget <= 0) break;
        budget--;
      }
      const marked = await this.markMoving(machine, current);
      moving++;
      replaceIn(marked);
      await this.alignReplicas(current, oldSets, all, limits);
      replaceIn(await this.completeMove(marked, current, target, decision));
      this.deps.rc.log.info(
        { machine: machine.metadata.name, from: set.metadata.name, to: current.metadata.name, target },
        'moved machine for an in-place update',
      );
    }
    if (moving === 0) await this.alignReplicas(current, oldSets, all, limits);
    return { kind: 'in-place' };
  }

  /**
   * Undoes moves that will not be finished (level-triggered): a Machine marked `moving-to` a set that is not where
   * the deployment goes now (the template changed again, or the deployment no longer rolls out in place) was left by
   * a reconcile cut off between its writes, and freezes both sets for good. Its set counts it again, its bootstrap
   * config takes back its set's template (the cut-off move may have replaced it), and then the mark goes. True when
   * something was undone: the caller plans again from what the cache shows next.
   */
  async clearAbandonedMoves(
    deployment: MachineDeployment,
    current: MachineSet | undefined,
    sets: readonly MachineSet[],
    machinesBySet: ReadonlyMap<string, readonly Machine[]>,
  ): Promise<boolean> {
    const inPlace =
      (deployment.spec.rollout?.inPlace ?? 'Never') !== 'Never' &&
      deployment.spec.rollout?.strategy?.type !== 'OnDelete';
    const kept = (m: Machine) => inPlace && current !== undefined && movingTo(m) === current.metadata.name;
    const live = (ms: MachineSet) =>
      (machinesBySet.get(ms.metadata.uid!) ?? []).filter((m) => !isDeleting(m));
    const isAbandoned = (m: Machine) => movingTo(m) !== undefined && !kept(m);
    // Read again before anything is undone: a cache behind a move that did finish must not have it undone.
    const abandoned: Machine[] = [];
    for (const cached of sets.flatMap(live).filter(isAbandoned)) {
      const machine = await this.deps.machinesApi.getIfExists({
        namespace: cached.metadata.namespace,
        name: cached.metadata.name!,
      });
      if (
        machine &&
        !isDeleting(machine) &&
        isAbandoned(machine) &&
        controllerUid(machine) === controllerUid(cached)
      ) {
        abandoned.push(machine);
      }
    }
    // Both sets are frozen while the mark is on; their counts are put back first, so that neither deletes nor creates
    // a Machine for the move once it is off: the target was raised for each Machine moving into it (alignReplicas),
    // the set the Machine stays in lowered.
    for (const ms of sets) {
      const into = abandoned.filter((m) => movingTo(m) === ms.metadata.name).length;
      const back = abandoned.filter((m) => controllerUid(m) === ms.metadata.uid).length;
      if (into === 0 && back === 0) continue;
      const keeps = live(ms).filter((m) => !kept(m)).length;
      const replicas = Math.max(keeps, (ms.spec.replicas ?? 1) - into);
      if (replicas !== (ms.spec.replicas ?? 1)) await this.deps.scaleSet(this.fresh(ms), replicas);
    }
    for (const machine of abandoned) {
      const ms = sets.find((set) => set.metadata.uid === controllerUid(machine));
      if (ms) await this.restoreBootstrapConfig(machine, ms);
      const written = await this.deps.machinesApi.mergePatch(
        { namespace: machine.metadata.namespace, name: machine.metadata.name! },
        {
          metadata: {
            resourceVersion: machine.metadata.resourceVersion,
            annotations: { [IN_PLACE_ANNOTATIONS.movingTo]: null },
          },
        },
      );
      await this.waitFor(written);
      this.deps.rc.log.info(
        { machine: machine.metadata.name, movingTo: movingTo(machine), machineSet: ms?.metadata.name },
        'cleared an abandoned in-place move',
      );
    }
    return abandoned.length > 0;
  }

  /**
   * The recorded decision for this Machine and `target`, or one made now: refused without asking when the templates
   * differ in what never changes in place, else the bootstrap provider's answer for this Machine (then recorded on
   * it). Returns the Machine as last written, for the conditional writes that follow.
   */
  private async decisionFor(
    candidate: Candidate,
    current: MachineSet,
    target: string,
  ): Promise<{ decision: InPlaceDecision; machine: Machine } | { waiting: string }> {
    const { machine, set } = candidate;
    const recorded = recordedDecision(machine.metadata.annotations, target);
    if (recorded) return { decision: recorded, machine };
    const never = fieldsNeverInPlace(set.spec.template, current.spec.template);
    if (never.length > 0) {
      const reason = never.some((f) => f.startsWith('spec.template.spec.infrastructureRef'))
        ? 'infrastructure template changes are never applied in place'
        : 'only the version and the bootstrap configuration can change in place';
      return { decision: { target, inPlace: false, reason, fields: never }, machine };
    }
    const configRef = machine.spec.bootstrap.configRef;
    const desiredRef = current.spec.template.spec.bootstrap.configRef;
    if (!configRef || !desiredRef) {
      const reason = 'the Machine has no bootstrap config to update';
      return {
        decision: { target, inPlace: false, reason, fields: ['spec.template.spec.bootstrap'] },
        machine,
      };
    }
    const request: CanUpdateMachineRequest = {
      machine: { namespace: machine.metadata.namespace!, name: machine.metadata.name! },
      bootstrapConfig: configRef,
      ...(runningVersion(machine) && { currentVersion: runningVersion(machine) }),
      ...(current.spec.template.spec.version && { desiredVersion: current.spec.template.spec.version }),
      desiredConfigFrom: desiredRef,
    };
    let answer: CanUpdateMachineResponse;
    try {
      answer = await this.deps.workload.askCanUpdate(request);
    } catch (error) {
      return {
        waiting: `asking whether Machine ${machine.metadata.name} can be updated in place: ${describeFailure(error)}`,
      };
    }
    const decision: InPlaceDecision = { target, ...answer };
    const written = await this.deps.machinesApi.mergePatch(
      { namespace: machine.metadata.namespace, name: machine.metadata.name! },
      { metadata: { annotations: { [IN_PLACE_ANNOTATIONS.decision]: JSON.stringify(decision) } } },
    );
    this.deps.rc.log.info(
      {
        machine: machine.metadata.name,
        target,
        inPlace: decision.inPlace,
        restart: decision.restart,
        fields: decision.fields,
      },
      'in-place decision recorded',
    );
    return { decision, machine: written };
  }

  /**
   * Old sets keep the Machines that are not moving (they never grow back); the new set takes the rest of
   * spec.replicas. With maxUnavailable 0 it surges maxSurge first (as upstream does) and keeps the surge until every
   * moved Machine finished its update; then the surplus goes, each Machine to delete marked for the set
   * (surplusToDrop), never taking the Machines serving below replicas - maxUnavailable.
   */
  private async alignReplicas(
    current: MachineSet,
    oldSets: readonly MachineSet[],
    all: readonly Machine[],
    limits: RolloutLimits,
  ): Promise<void> {
    let oldKeep = 0;
    for (const ms of oldSets) {
      const keep = all.filter(
        (m) => controllerUid(m) === ms.metadata.uid && movingTo(m) === undefined,
      ).length;
      oldKeep += keep;
      if ((ms.spec.replicas ?? 1) !== keep) await this.deps.scaleSet(this.fresh(ms), keep);
    }
    const joining = all.filter(
      (m) => controllerUid(m) === current.metadata.uid || movingTo(m) === current.metadata.name,
    );
    const rolling = oldKeep > 0 || joining.some(isUpdating);
    let replicas = Math.max(
      0,
      limits.replicas - oldKeep + (limits.maxUnavailable === 0 && rolling ? limits.maxSurge : 0),
    );
    if (!rolling) {
      const leaving = surplusToDrop(joining, limits, timeMs(current.metadata.creationTimestamp));
      for (const machine of leaving) await this.markForDeletion(machine);
      replicas = Math.max(limits.replicas, joining.length - leaving.length);
    }
    if ((current.spec.replicas ?? 1) !== replicas) await this.deps.scaleSet(this.fresh(current), replicas);
  }

  /** The set deletes a Machine carrying `delete-machine` before any other (deletion-order.ts). */
  private async markForDeletion(machine: Machine): Promise<void> {
    if (hasDeleteAnnotation(machine)) return;
    const written = await this.deps.machinesApi.mergePatch(
      { namespace: machine.metadata.namespace, name: machine.metadata.name! },
      { metadata: { annotations: { [ANNOTATIONS.deleteMachine]: 'true' } } },
    );
    // The set picks what it deletes from the same cache: it must see the mark before it sees the smaller count.
    await this.waitFor(written);
    this.deps.rc.log.info(
      { machine: machine.metadata.name },
      'surplus of the in-place rollout marked for deletion',
    );
  }

  /** The Machine's bootstrap config holds its set's template spec again (a cut-off move may have replaced it). */
  private async restoreBootstrapConfig(machine: Machine, set: MachineSet): Promise<void> {
    const configRef = machine.spec.bootstrap.configRef;
    const templateRef = set.spec.template.spec.bootstrap.configRef;
    if (!configRef || !templateRef) return;
    const configs = this.deps.workload.client.resource(
      await this.deps.workload.templates.resolve(configRef.apiGroup, configRef.kind),
    );
    const ref = { namespace: machine.metadata.namespace, name: configRef.name };
    const config = (await configs.getIfExists(ref)) as { spec?: unknown } | undefined;
    let spec: unknown;
    try {
      spec = await this.templateSpec(machine.metadata.namespace!, templateRef);
    } catch (error) {
      // A template deleted since cannot be put back; the mark still goes, or the sets stay frozen for good.
      if (!isNotFound(error)) throw error;
      this.deps.rc.log.info(
        { machine: machine.metadata.name, template: templateRef.name },
        'bootstrap template gone: config left as it is',
      );
      return;
    }
    if (!config || canonicalJson(config.spec ?? {}) === canonicalJson(spec)) return;
    await this.replaceBootstrapSpec(machine, templateRef, spec);
    this.deps.rc.log.info(
      { machine: machine.metadata.name, template: templateRef.name },
      'bootstrap config put back to its set’s template',
    );
  }

  private async templateSpec(
    namespace: string,
    templateRef: { apiGroup: string; kind: string; name: string },
  ): Promise<unknown> {
    const source = await this.deps.workload.templates.get(namespace, templateRef);
    return (source['spec'] as { template?: { spec?: unknown } } | undefined)?.template?.spec ?? {};
  }

  /** The whole spec is replaced (a merge patch would keep fields the template dropped), and where it came from. */
  private async replaceBootstrapSpec(
    machine: Machine,
    templateRef: { name: string },
    spec: unknown,
  ): Promise<void> {
    const configRef = machine.spec.bootstrap.configRef!;
    const type = await this.deps.workload.templates.resolve(configRef.apiGroup, configRef.kind);
    const configs = this.deps.workload.client.resource(type);
    const ref = { namespace: machine.metadata.namespace, name: configRef.name };
    await configs.jsonPatch(ref, [{ op: 'add', path: '/spec', value: spec }]);
    await configs.mergePatch(ref, {
      metadata: { annotations: { [ANNOTATIONS.clonedFromName]: templateRef.name } },
    });
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
    decision: InPlaceDecision,
  ): Promise<Machine> {
    const template = current.spec.template.spec;
    const templateRef = template.bootstrap.configRef;
    if (machine.spec.bootstrap.configRef && templateRef) {
      await this.replaceBootstrapSpec(
        machine,
        templateRef,
        await this.templateSpec(machine.metadata.namespace!, templateRef),
      );
    }
    const ownerReferences = [
      ...(machine.metadata.ownerReferences ?? []).filter(
        (o) => !(o.controller && o.kind === RESOURCES.MachineSet.kind),
      ),
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
            [IN_PLACE_ANNOTATIONS.restart]: decision.restart ? 'true' : null,
            [IN_PLACE_ANNOTATIONS.readyToUpdate]: null,
          },
        },
        spec: { version: template.version ?? null },
      },
    );
    await this.waitFor(written);
    return written;
  }

  private async waitFor(written: Machine): Promise<void> {
    await waitForCache(
      `Machine ${written.metadata.name} at resourceVersion ${written.metadata.resourceVersion}`,
      () => {
        const cached = this.deps.workload.machines.get(objectKey(written));
        return (
          cached === undefined ||
          Number(cached.metadata.resourceVersion) >= Number(written.metadata.resourceVersion)
        );
      },
      this.deps.rc.signal,
    );
  }
}
