import { RESOURCES, type Machine, type MachineSet } from '@capstan/api';
import { objectKey, runWithoutCallSignal, type EventRecorder, type ResourceClient } from '@capstan/kube';
import type { Logger } from 'pino';
import { waitForCache } from '../shared/cache-wait.js';
import { machinesToDelete } from '../shared/deletion-order.js';
import type { ObjectReference } from '../shared/template-cloner.js';
import { randomSuffix, renderMachineName } from './machine-naming.js';
import { isDeleting } from '../shared/machine-state.js';
import { desiredMachine, machineAnnotations, machineLabels } from './machineset.machines.js';
import { deleteIfPresent, ownerReferenceTo } from '../shared/ownership.js';
import type { WorkloadContext } from '../shared/workload-context.js';
import type { MachineCreationStage } from './machineset.v1beta1-status.js';

// Scaling a MachineSet (upstream syncReplicas): clone the bootstrap config and infrastructure machine from their
// templates, create the Machine referencing them; or delete Machines in the set's deletion order. Both wait for the
// cache to show the writes, so the next reconcile counts them.

export interface ScaleDeps {
  workload: WorkloadContext;
  machinesApi: ResourceClient<Machine>;
  recorder: EventRecorder;
  log: Logger;
  signal: AbortSignal;
}

export async function scaleUp(deps: ScaleDeps, machineSet: MachineSet, count: number): Promise<void> {
  const created: string[] = [];
  const reflected = () =>
    waitForCache(
      `${created.length} created Machines`,
      () => created.every((key) => deps.workload.machines.get(key) !== undefined),
      deps.signal,
    );
  try {
    for (let i = 0; i < count; i++) {
      const machine = await createMachine(deps, machineSet);
      created.push(objectKey(machine));
      deps.log.info(
        { machine: machine.metadata.name, creating: i + 1, of: count },
        'created machine (scale up)',
      );
      void deps.recorder.event(machineSet, {
        type: 'Normal',
        reason: 'SuccessfulCreate',
        action: 'Create',
        note: `Created Machine ${machine.metadata.name}`,
      });
    }
  } catch (err) {
    // The Machines created before the failure must be counted by the next reconcile too; the failure is what
    // this reconcile reports.
    await reflected().catch(() => undefined);
    throw err;
  }
  await reflected();
}

/** The stage at which a Machine's creation failed, by the error it failed with (for the v1beta1 MachinesCreated). */
const failedStages = new WeakMap<object, MachineCreationStage>();

/** What `scaleUp` was doing when it threw `error`: cloning a template or creating the Machine. */
export function creationStageOf(error: unknown): MachineCreationStage {
  return (typeof error === 'object' && error !== null && failedStages.get(error)) || 'machine';
}

async function createMachine(deps: ScaleDeps, machineSet: MachineSet): Promise<Machine> {
  const { templates } = deps.workload;
  const namespace = machineSet.metadata.namespace!;
  const template = machineSet.spec.template.spec;
  const name = renderMachineName(machineSet.spec.machineNaming?.template, {
    clusterName: machineSet.spec.clusterName,
    machineSetName: machineSet.metadata.name!,
    random: randomSuffix(),
  });
  const cloneInput = {
    name,
    namespace,
    clusterName: machineSet.spec.clusterName,
    labels: machineLabels(machineSet),
    annotations: machineAnnotations(machineSet),
    // Clones are owned by the set until the Machine controller takes them over (upstream CreateFromTemplate).
    ownerReferences: [ownerReferenceTo(machineSet, RESOURCES.MachineSet, false)],
  };
  let bootstrap: ObjectReference | undefined;
  let infrastructure: ObjectReference | undefined;
  try {
    if (template.bootstrap.configRef) {
      bootstrap = await templates.createFromTemplate({
        ...cloneInput,
        templateRef: template.bootstrap.configRef,
      });
    }
    infrastructure = await templates.createFromTemplate({
      ...cloneInput,
      templateRef: template.infrastructureRef,
    });
    return await deps.machinesApi.create(desiredMachine(machineSet, name, { infrastructure, bootstrap }));
  } catch (err) {
    if (typeof err === 'object' && err !== null) {
      failedStages.set(
        err,
        template.bootstrap.configRef && !bootstrap ? 'bootstrap' : !infrastructure ? 'infrastructure' : 'machine',
      );
    }
    // Outside the reconcile's signal: the failure may be that signal's abort (the cluster moved to another
    // replica, the deadline passed), and the clean-up must still run (each request keeps its own timeout).
    const outcome = await runWithoutCallSignal(() => createdAnyway(deps, namespace, name));
    if (outcome.state === 'created') {
      deps.log.info({ machine: name }, 'the create failed on the way back, but the Machine exists');
      return outcome.machine;
    }
    // Nothing references the clones: remove them so a failed attempt leaks nothing. When that is unknown (the
    // Machine may exist and reference them), the orphaned-clone sweep judges them later.
    for (const clone of [infrastructure, bootstrap]) {
      if (!clone || outcome.state === 'unknown') continue;
      await runWithoutCallSignal(() => templates.delete(namespace, clone)).catch((cleanupErr: unknown) => {
        deps.log.warn(
          { err: cleanupErr, kind: clone.kind, clone: clone.name },
          'could not delete a clone after a failed create',
        );
      });
    }
    void deps.recorder.event(machineSet, {
      type: 'Warning',
      reason: 'FailedCreate',
      action: 'Create',
      note: `Failed to create Machine ${name}: ${err instanceof Error ? err.message : String(err)}`,
    });
    throw err;
  }
}

/**
 * Whether a Machine whose create failed exists after all (the request reached the API server, the response was
 * lost): its name is unique to this attempt, so one that exists is this attempt's.
 */
async function createdAnyway(
  deps: ScaleDeps,
  namespace: string,
  name: string,
): Promise<{ state: 'created'; machine: Machine } | { state: 'absent' } | { state: 'unknown' }> {
  try {
    const machine = await deps.machinesApi.getIfExists({ namespace, name });
    return machine ? { state: 'created', machine } : { state: 'absent' };
  } catch {
    return { state: 'unknown' };
  }
}

export async function scaleDown(
  deps: ScaleDeps,
  machineSet: MachineSet,
  machines: readonly Machine[],
  count: number,
): Promise<void> {
  const chosen = machinesToDelete(
    machines,
    count,
    machineSet.spec.deletion?.order,
    deps.workload.now().getTime(),
  );
  for (const machine of chosen) {
    if (isDeleting(machine)) continue;
    await deleteIfPresent(deps.machinesApi, machine);
    deps.log.info({ machine: machine.metadata.name }, 'deleting machine (scale down)');
    void deps.recorder.event(machineSet, {
      type: 'Normal',
      reason: 'SuccessfulDelete',
      action: 'Delete',
      note: `Deleted Machine ${machine.metadata.name}`,
      related: machine,
    });
  }
  await waitForCache(
    `${chosen.length} deleted Machines`,
    () =>
      chosen.every((m) => {
        const cached = deps.workload.machines.get(objectKey(m));
        return cached === undefined || cached.metadata.uid !== m.metadata.uid || isDeleting(cached);
      }),
    deps.signal,
  );
}
