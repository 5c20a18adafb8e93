import { Controller, Inject, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { INFRASTRUCTURE_GROUP, RESOURCES } from '@capstan/api';
import { EVENT_CATALOGUE, isEventOf, JetStreamEventPattern, type CapstanEvent } from '@capstan/events';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { SIM_MACHINE_CONTROLLER } from '../reconcilers/simmachine.reconciler.js';

/** `machine.provisioning`: the Machine's bootstrap data is ready, so its SimMachine can boot (it only enqueues). */
@Controller()
export class MachineLifecycleHandler {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @JetStreamEventPattern(EVENT_CATALOGUE['machine.provisioning'].type)
  onMachineProvisioning(@Payload() event: CapstanEvent): void {
    if (!isEventOf(event, 'machine.provisioning')) return;
    const ref = event.data.infrastructureRef;
    if (ref?.apiGroup !== INFRASTRUCTURE_GROUP || ref.kind !== RESOURCES.SimMachine.kind) return;
    this.context.controllers.enqueue(SIM_MACHINE_CONTROLLER, `${event.data.object.namespace}/${ref.name}`);
  }
}

@Module({ controllers: [MachineLifecycleHandler] })
export class MachineLifecycleModule {}
