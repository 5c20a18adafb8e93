import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { RESOURCES, type Cluster, type Machine } from '@capstan/api';
import { JetStreamEventPattern, type CapstanEvent } from '@capstan/events';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { CLUSTER_CONTROLLER, MACHINE_CONTROLLER } from './controller-names.js';
import { handoffKeys } from './handoff-keys.js';

/**
 * The core's hand-off consumer: each provider event only enqueues the Cluster or Machine it concerns.
 * Patterns are CloudEvents types, so they hold whatever subject root the deployment uses.
 */
@Controller()
export class HandoffListener {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @JetStreamEventPattern('dev.capstan.handoff.infrastructure-cluster.provisioned')
  infrastructureClusterProvisioned(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.infrastructure-cluster.deleted')
  infrastructureClusterDeleted(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.control-plane.initialized')
  controlPlaneInitialized(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.control-plane.available')
  controlPlaneAvailable(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.control-plane.scaled')
  controlPlaneScaled(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.bootstrap.data-secret-created')
  bootstrapDataSecretCreated(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.infrastructure-machine.provisioned')
  infrastructureMachineProvisioned(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.infrastructure-machine.failed')
  infrastructureMachineFailed(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  @JetStreamEventPattern('dev.capstan.handoff.infrastructure-machine.deleted')
  infrastructureMachineDeleted(@Payload() event: CapstanEvent): void {
    this.enqueue(event);
  }

  private enqueue(event: CapstanEvent): void {
    const manager = this.context.manager;
    const keys = handoffKeys(event, {
      clusters: manager.informer<Cluster>(RESOURCES.Cluster),
      machines: manager.informer<Machine>(RESOURCES.Machine),
    });
    for (const key of keys.clusters) this.context.controllers.enqueue(CLUSTER_CONTROLLER, key);
    for (const key of keys.machines) this.context.controllers.enqueue(MACHINE_CONTROLLER, key);
  }
}
