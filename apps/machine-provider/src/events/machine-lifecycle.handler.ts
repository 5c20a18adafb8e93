import { Controller, Inject, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { RESOURCES } from '@capstan/api';
import { EVENT_CATALOGUE, isEventOf, JetStreamEventPattern, type CapstanEvent } from '@capstan/events';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { referencedSimKey } from '@capstan/sim';
import { SIM_MACHINE_CONTROLLER } from '../reconcilers/simmachine.reconciler.js';

/** `machine.provisioning`: the Machine's bootstrap data is ready, so its SimMachine can boot (it only enqueues). */
@Controller()
export class MachineLifecycleHandler {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @JetStreamEventPattern(EVENT_CATALOGUE['machine.provisioning'].type)
  onMachineProvisioning(@Payload() event: CapstanEvent): void {
    if (!isEventOf(event, 'machine.provisioning')) return;
    const keys = referencedSimKey(
      event.data.object.namespace,
      event.data.infrastructureRef,
      RESOURCES.SimMachine.kind,
    );
    for (const key of keys) this.context.controllers.enqueue(SIM_MACHINE_CONTROLLER, key);
  }
}

@Module({ controllers: [MachineLifecycleHandler] })
export class MachineLifecycleModule {}
