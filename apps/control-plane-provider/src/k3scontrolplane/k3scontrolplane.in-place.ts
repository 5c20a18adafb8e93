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
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';
import type { ProviderKinds } from './provider-kinds.js';

// The control plane's in-place updates (docs/in-place-updates.md): whether out-of-date machines can be updated in
// place (asked of the bootstrap provider once per spec, recorded on the K3sControlPlane), and starting one update:
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

/** Whether the control plane's out-of-date machines are updated in place, replaced, or neither yet. */
export async function inPlaceVerdict(scope: ControlPlaneScope, deps: InPlaceDeps): Promise<InPlaceVerdict> {
  const kcp = scope.kit.obj;
  const policy = kcp.spec.rollout?.inPlace ?? 'Never';
  if (policy === 'Never' || !deps.ask) return { kind: 'replace' };
  const outdated = scope.facts.filter((f) => !f.deleting && !f.upToDate && (!f.updating || f.updateStale));
  if (outdated.length === 0) return { kind: 'apply' };
  // Machines `rollout.after` asks to renew are replaced: that is what it is for.
  if (outdated.some((f) => f.outdatedReasons.some((r) => r.startsWith(ROLLOUT_AFTER_REASON)))) return { kind: 'replace' };
  const target = machineSpecHash(kcp);
  const decision = recordedDecision(kcp.metadata.annotations, target) ?? (await decide(scope, deps, outdated[0]!.name, target));
  if ('waiting' in decision) return { kind: 'waiting', reason: decision.waiting };
  if (decision.inPlace) return { kind: 'apply' };
  if (policy === 'Preferred') return { kind: 'replace' };
  const fields = decision.fields && decision.fields.length > 0 ? ` (${decision.fields.join(', ')})` : '';
  return { kind: 'blocked', reason: `Cannot update the control plane in place${fields}: ${decision.reason ?? 'refused'}` };
}

async function decide(
  scope: ControlPlaneScope,
  deps: InPlaceDeps,
  machineName: string,
  target: string,
): Promise<InPlaceDecision | { waiting: string }> {
  const kcp = scope.kit.obj;
  const machine = scope.machines.find((m) => m.metadata.name === machineName)!;
  let decision: InPlaceDecision;
  const templateName = await infrastructureTemplateOf(machine, deps);
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
      const answer = await deps.ask!({
        machine: { namespace: machine.metadata.namespace!, name: machineName },
        bootstrapConfig: machine.spec.bootstrap.configRef,
        ...(runningVersion(machine) && { currentVersion: runningVersion(machine) }),
        desiredVersion: kcp.spec.version,
        desiredConfigFrom: { apiGroup: RESOURCES.K3sControlPlane.group, kind: RESOURCES.K3sControlPlane.kind, name: kcp.metadata.name! },
      });
      decision = { target, ...answer };
    } catch (error) {
      return { waiting: `Asking whether the control plane can be updated in place: ${describeFailure(error)}` };
    }
  }
  kcp.metadata.annotations = { ...kcp.metadata.annotations, [IN_PLACE_ANNOTATIONS.decision]: JSON.stringify(decision) };
  await scope.kit.patchNow();
  scope.log.info({ target, inPlace: decision.inPlace, restart: decision.restart, fields: decision.fields }, 'in-place decision recorded');
  return decision;
}

/** The template the machine's infrastructure machine was cloned from, if it says so. */
async function infrastructureTemplateOf(machine: Machine, deps: InPlaceDeps): Promise<string | undefined> {
  const ref = machine.spec.infrastructureRef;
  const type = await deps.kinds.resolve(ref.apiGroup, ref.kind);
  const infra = await deps.client.resource(type).getIfExists({ namespace: machine.metadata.namespace, name: ref.name });
  return infra?.metadata?.annotations?.[ANNOTATIONS.clonedFromName];
}

/** Starts the in-place update of one machine to the control plane's spec. */
export async function startInPlaceUpdate(scope: ControlPlaneScope, deps: InPlaceDeps, machineName: string): Promise<void> {
  const kcp = scope.kit.obj;
  const machine = scope.machines.find((m) => m.metadata.name === machineName);
  if (!machine) return;
  const target = machineSpecHash(kcp);
  const decision = recordedDecision(kcp.metadata.annotations, target);
  const namespace = kcp.metadata.namespace!;
  const configName = machine.spec.bootstrap.configRef?.name;
  if (configName) {
    // The whole spec is replaced (a merge patch would keep fields the new spec dropped).
    await deps.configClient.jsonPatch({ namespace, name: configName }, [
      { op: 'add', path: '/spec', value: structuredClone(kcp.spec.k3sConfigSpec ?? {}) },
    ]);
  }
  await deps.machineClient.mergePatch(
    { namespace, name: machineName },
    {
      metadata: {
        resourceVersion: machine.metadata.resourceVersion,
        annotations: {
          [CONTROL_PLANE_ANNOTATIONS.specHash]: target,
          [IN_PLACE_ANNOTATIONS.updateInProgress]: target,
          [IN_PLACE_ANNOTATIONS.restart]: decision?.restart ? 'true' : null,
          [IN_PLACE_ANNOTATIONS.readyToUpdate]: null,
        },
      },
      spec: { version: kcp.spec.version },
    },
  );
  scope.log.info({ machine: machineName, target, version: kcp.spec.version }, 'control plane machine updating in place');
  await scope.record('MachineUpdating', 'UpdateMachine', `Updating machine ${machineName} in place to ${kcp.spec.version}`);
}
