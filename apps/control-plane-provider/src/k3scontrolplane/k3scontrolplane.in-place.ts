import {
  ANNOTATIONS,
  IN_PLACE_ANNOTATIONS,
  RESOURCES,
  recordedDecision,
  runningVersion,
  type InPlaceDecision,
  type K3sConfig,
  type Machine,
} from '@capstan/api';
import type { CanUpdateMachineRequest, CanUpdateMachineResponse } from '@capstan/events';
import { describeFailure, type KubeClient, type ResourceClient } from '@capstan/kube';
import { CONTROL_PLANE_ANNOTATIONS } from '../planning/annotations.js';
import type { InPlaceVerdict } from '../planning/planner.js';
import { machineSpecHash } from '../planning/spec-hash.js';
import { desiredVersionOf } from '../planning/upgrade-hold.js';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import type { ProviderKinds } from '@capstan/provider-kit';

// The control plane's in-place updates (docs/in-place-updates.md): whether out-of-date machines can be updated in
// place (asked of the bootstrap provider per machine and spec, recorded on each Machine), and starting one update:
// the machine's K3sConfig takes the new spec, the Machine the new version and `update-in-progress`; the core drains
// it and the bootstrap provider's plan does the rest. The planner updates one machine at a time within quorum.

export type AskCanUpdate = (request: CanUpdateMachineRequest) => Promise<CanUpdateMachineResponse>;

export interface InPlaceDeps {
  client: KubeClient;
  machineClient: ResourceClient<Machine>;
  configClient: ResourceClient<K3sConfig>;
  kinds: ProviderKinds;
  ask?: AskCanUpdate;
}

const ROLLOUT_AFTER_REASON = 'created before rollout.after';

/** Why the bootstrap provider refused the first of `refused`, naming that machine and the others it refused. */
function describeRefusals(refused: readonly { name: string; decision: InPlaceDecision }[]): string {
  const [first, ...others] = refused;
  if (!first) return 'Cannot update the control plane in place';
  const { decision } = first;
  const fields = decision.fields && decision.fields.length > 0 ? ` (${decision.fields.join(', ')})` : '';
  const more = others.length > 0 ? `; machine(s) ${others.map((r) => r.name).join(', ')} cannot either` : '';
  return `Cannot update machine ${first.name} in place${fields}: ${decision.reason ?? 'refused'}${more}`;
}

/**
 * One reconcile's in-place work on the control plane: finishing or undoing a start a restart cut off, the verdict for
 * the out-of-date machines (each asked about on its own), and starting one machine's update.
 */
export class ControlPlaneInPlace {
  /** The Machines as this reconcile last wrote them: a conditional write later in it starts from these, not the cache. */
  private readonly written = new Map<string, Machine>();

  constructor(
    private readonly scope: ControlPlaneScope,
    private readonly deps: InPlaceDeps,
  ) {}

  /**
   * Whether the out-of-date machines are updated in place, replaced, or neither yet. Each machine is asked about on
   * its own and its answer recorded on it (`in-place.capstan.dev/decision`, keyed by the spec hash): after a partial
   * failure machines run different versions and configurations, and one machine's answer is not another's. Those the
   * provider said yes for go first; the others are replaced (Preferred) or block the rollout (Required) once they are
   * all that is left.
   */
  async verdict(): Promise<InPlaceVerdict> {
    const kcp = this.scope.kit.obj;
    const policy = kcp.spec.rollout?.inPlace ?? 'Never';
    if (policy === 'Never' || !this.deps.ask) return { kind: 'replace' };
    const outdated = this.scope.facts.filter((f) => !f.deleting && !f.upToDate && (!f.updating || f.updateStale));
    if (outdated.length === 0) return { kind: 'apply' };
    // Machines `rollout.after` asks to renew are replaced: that is what it is for.
    if (outdated.some((f) => f.outdatedReasons.some((r) => r.startsWith(ROLLOUT_AFTER_REASON)))) return { kind: 'replace' };
    const target = machineSpecHash(kcp);
    const able: string[] = [];
    const refused: { name: string; decision: InPlaceDecision }[] = [];
    for (const fact of outdated) {
      const machine = this.machine(fact.name);
      if (!machine) continue;
      const decision = recordedDecision(machine.metadata.annotations, target) ?? (await this.decide(machine, target));
      if ('waiting' in decision) return { kind: 'waiting', reason: decision.waiting };
      if (decision.inPlace) able.push(fact.name);
      else refused.push({ name: fact.name, decision });
    }
    if (able.length > 0 || refused.length === 0) return { kind: 'apply', machines: able };
    if (policy === 'Preferred') return { kind: 'replace' };
    return { kind: 'blocked', reason: describeRefusals(refused) };
  }

  /**
   * Finishes or undoes (level-triggered) what a cut-off start left: one for the current spec is finished; one for a spec that is
   * gone is undone when the spec went back to what the machine runs (its K3sConfig takes that spec again). One for a
   * spec that moved on stays marked until the machine's next update, which then restarts K3s (see decide).
   */
  async resume(): Promise<void> {
    const kcp = this.scope.kit.obj;
    const target = machineSpecHash(kcp);
    for (const cached of this.scope.machines) {
      if (!cached.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]) continue;
      // Read again: a cache behind the start's last write would have a finished start done twice, or undone.
      const machine = await this.deps.machineClient.getIfExists(refOf(cached));
      const starting = machine?.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting];
      if (!machine || !starting || machine.metadata.deletionTimestamp) continue;
      if (starting === target) {
        await this.finishStart(machine, target);
        this.scope.log.info({ machine: machine.metadata.name, target }, 'finished an in-place start that was cut off');
      } else if (machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.specHash] === target) {
        await this.writeConfigSpec(machine);
        this.remember(
          await this.deps.machineClient.mergePatch(refOf(machine), {
            metadata: { annotations: { [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: null } },
          }),
        );
        this.scope.log.info(
          { machine: machine.metadata.name, abandoned: starting },
          'undid an in-place start that was cut off: the K3sConfig holds the spec the machine runs again',
        );
      }
    }
  }

  /**
   * Starts the in-place update of one machine to the control plane's spec. The one conditional write comes first and
   * changes nothing another controller acts on (the start marker): a conflict, because the plan was made from a cache
   * that was behind, leaves the Machine and its K3sConfig as they were. Then the K3sConfig takes the new spec, and
   * last the Machine the version, spec hash and `update-in-progress`, which set the core and the bootstrap provider
   * going: nothing renders a plan from a K3sConfig that does not hold the new spec yet.
   */
  async start(machineName: string): Promise<void> {
    const kcp = this.scope.kit.obj;
    const machine = this.machine(machineName);
    if (!machine) return;
    const target = machineSpecHash(kcp);
    const marked = await this.deps.machineClient.mergePatch(refOf(machine), {
      metadata: {
        resourceVersion: machine.metadata.resourceVersion,
        annotations: { [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: target },
      },
    });
    await this.finishStart(marked, target);
    this.scope.log.info({ machine: machineName, target, version: kcp.spec.version }, 'control plane machine updating in place');
    await this.scope.record('MachineUpdating', 'UpdateMachine', `Updating machine ${machineName} in place to ${kcp.spec.version}`);
  }

  /** The K3sConfig takes the spec, then the Machine the update (and loses the start marker), in one write each. */
  private async finishStart(machine: Machine, target: string): Promise<void> {
    const kcp = this.scope.kit.obj;
    const decision = recordedDecision(machine.metadata.annotations, target);
    await this.writeConfigSpec(machine);
    this.remember(
      await this.deps.machineClient.mergePatch(refOf(machine), {
        metadata: {
          annotations: {
            [CONTROL_PLANE_ANNOTATIONS.inPlaceStarting]: null,
            [CONTROL_PLANE_ANNOTATIONS.specHash]: target,
            [IN_PLACE_ANNOTATIONS.updateInProgress]: target,
            // Without a recorded answer (it is recorded before any start) the node is drained: a restart is never wrong.
            [IN_PLACE_ANNOTATIONS.restart]: decision === undefined || decision.restart === true ? 'true' : null,
            [IN_PLACE_ANNOTATIONS.readyToUpdate]: null,
          },
        },
        spec: { version: desiredVersionOf(kcp) },
      }),
    );
  }

  /** The machine's K3sConfig takes the control plane's spec, whole (a merge patch would keep fields it dropped). */
  private async writeConfigSpec(machine: Machine): Promise<void> {
    const configName = machine.spec.bootstrap.configRef?.name;
    if (!configName) return;
    await this.deps.configClient.jsonPatch({ namespace: machine.metadata.namespace, name: configName }, [
      { op: 'add', path: '/spec', value: structuredClone(this.scope.kit.obj.spec.k3sConfigSpec ?? {}) },
    ]);
  }

  /** The bootstrap provider's answer for one machine (or a refusal decided without asking), recorded on the Machine. */
  private async decide(machine: Machine, target: string): Promise<InPlaceDecision | { waiting: string }> {
    const kcp = this.scope.kit.obj;
    const machineName = machine.metadata.name!;
    let decision: InPlaceDecision;
    const templateName = await infrastructureTemplateOf(machine, this.deps);
    if (templateName !== undefined && templateName !== kcp.spec.machineTemplate.spec.infrastructureRef.name) {
      decision = {
        target,
        inPlace: false,
        reason: 'infrastructure template changes are never applied in place',
        fields: ['spec.machineTemplate.spec.infrastructureRef'],
      };
    } else if (!machine.spec.bootstrap.configRef) {
      decision = { target, inPlace: false, reason: 'the machine has no bootstrap config', fields: [] };
    } else {
      try {
        const answer = await this.deps.ask!({
          machine: { namespace: machine.metadata.namespace!, name: machineName },
          bootstrapConfig: machine.spec.bootstrap.configRef,
          ...(runningVersion(machine) && { currentVersion: runningVersion(machine) }),
          desiredVersion: desiredVersionOf(kcp),
          desiredConfigFrom: { apiGroup: RESOURCES.K3sControlPlane.group, kind: RESOURCES.K3sControlPlane.kind, name: kcp.metadata.name! },
        });
        decision = { target, ...answer };
      } catch (error) {
        return { waiting: `Asking whether machine ${machineName} can be updated in place: ${describeFailure(error)}` };
      }
    }
    // A start abandoned for another spec may have left the K3sConfig ahead of what K3s runs, and the provider compared
    // from there: what it leaves out may need the restart it did not ask for. Restarting is never wrong, only slower.
    const abandoned = machine.metadata.annotations?.[CONTROL_PLANE_ANNOTATIONS.inPlaceStarting];
    if (decision.inPlace && abandoned !== undefined && abandoned !== target) decision = { ...decision, restart: true };
    this.remember(
      await this.deps.machineClient.mergePatch(refOf(machine), {
        metadata: { annotations: { [IN_PLACE_ANNOTATIONS.decision]: JSON.stringify(decision) } },
      }),
    );
    this.scope.log.info(
      { machine: machineName, target, inPlace: decision.inPlace, restart: decision.restart, fields: decision.fields },
      'in-place decision recorded',
    );
    return decision;
  }

  private machine(name: string): Machine | undefined {
    return this.written.get(name) ?? this.scope.machines.find((m) => m.metadata.name === name);
  }

  private remember(machine: Machine): void {
    this.written.set(machine.metadata.name!, machine);
  }
}

const refOf = (machine: Machine) => ({ namespace: machine.metadata.namespace, name: machine.metadata.name! });

/** The template the machine's infrastructure machine was cloned from, if it says so. */
async function infrastructureTemplateOf(machine: Machine, deps: InPlaceDeps): Promise<string | undefined> {
  const ref = machine.spec.infrastructureRef;
  const type = await deps.kinds.resourceOf(ref.apiGroup, ref.kind);
  const infra = await deps.client.resource(type).getIfExists({ namespace: machine.metadata.namespace, name: ref.name });
  return infra?.metadata?.annotations?.[ANNOTATIONS.clonedFromName];
}
