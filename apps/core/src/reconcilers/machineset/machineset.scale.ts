import { RESOURCES, type Machine, type MachineSet } from '@capstan/api';
import { describeFailure, objectKey, type EventRecorder, type ResourceClient } from '@capstan/kube';
import { createMachineUnit, MachineCreationError, type MachineClone } from '@capstan/provider-kit';
import type { Logger } from 'pino';
import { waitForCache } from '../shared/cache-wait.js';
import { machinesToDelete } from '../shared/deletion-order.js';
import { cloneReference, type ObjectReference } from '../shared/template-cloner.js';
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

/** What `scaleUp` was doing when it threw `error`: cloning a template or creating the Machine (v1beta1 MachinesCreated). */
export function creationStageOf(error: unknown): MachineCreationStage {
  if (!(error instanceof MachineCreationError) || error.stage === 'machine') return 'machine';
  return error.cloneKind === BOOTSTRAP_CLONE ? 'bootstrap' : 'infrastructure';
}

/** The clone kinds as the unit names them (the template kinds differ by provider). */
const BOOTSTRAP_CLONE = 'bootstrap config';
const INFRASTRUCTURE_CLONE = 'infrastructure machine';

/** Clones the set's templates, then creates the Machine, as one unit (createMachineUnit). */
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
  const clone = (kind: string, templateRef: ObjectReference): MachineClone => ({
    kind,
    create: (options) => templates.createFromTemplate({ ...cloneInput, templateRef }, options),
    delete: () => templates.delete(namespace, cloneReference(templateRef, name)),
  });
  const bootstrapTemplate = template.bootstrap.configRef;
  const bootstrap = bootstrapTemplate && cloneReference(bootstrapTemplate, name);
  const infrastructure = cloneReference(template.infrastructureRef, name);
  try {
    return await createMachineUnit({
      name,
      log: deps.log,
      clones: [
        ...(bootstrapTemplate ? [clone(BOOTSTRAP_CLONE, bootstrapTemplate)] : []),
        clone(INFRASTRUCTURE_CLONE, template.infrastructureRef),
      ],
      createMachine: (options) =>
        deps.machinesApi.create(desiredMachine(machineSet, name, { infrastructure, bootstrap }), options),
      readMachine: () => deps.machinesApi.getIfExists({ namespace, name }),
    });
  } catch (err) {
    void deps.recorder.event(machineSet, {
      type: 'Warning',
      reason: 'FailedCreate',
      action: 'Create',
      note: `Failed to create Machine ${name}: ${describeFailure(err)}`,
    });
    throw err;
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
