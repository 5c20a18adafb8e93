import { RESOURCES } from '@capstan/api';
import { eventHandlerModule } from '@capstan/provider-kit';
import { referencedSimRoute } from '@capstan/sim';
import { SIM_MACHINE_CONTROLLER } from '../reconcilers/simmachine.reconciler.js';

/** `machine.provisioning`: the Machine's bootstrap data is ready, so its SimMachine can boot (it only enqueues). */
export const MachineLifecycleModule = eventHandlerModule('MachineLifecycleHandler', {
  'machine.provisioning': referencedSimRoute(RESOURCES.SimMachine.kind, SIM_MACHINE_CONTROLLER),
});
