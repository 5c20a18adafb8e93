import { Controller, Inject, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { RESOURCES } from '@capstan/api';
import { EVENT_CATALOGUE, isEventOf, JetStreamEventPattern, type CapstanEvent } from '@capstan/events';
import { SERVICE_CONTEXT, type ServiceContext } from '@capstan/provider-kit';
import { referencedSimKey } from '@capstan/sim';
import { SIM_CLUSTER_CONTROLLER } from '../reconcilers/simcluster.reconciler.js';

/** `cluster.created` names the Cluster's infrastructure: a SimCluster is reconciled at once (it only enqueues). */
@Controller()
export class ClusterLifecycleHandler {
  constructor(@Inject(SERVICE_CONTEXT) private readonly context: ServiceContext) {}

  @JetStreamEventPattern(EVENT_CATALOGUE['cluster.created'].type)
  onClusterCreated(@Payload() event: CapstanEvent): void {
    if (!isEventOf(event, 'cluster.created')) return;
    const keys = referencedSimKey(
      event.data.object.namespace,
      event.data.infrastructureRef,
      RESOURCES.SimCluster.kind,
    );
    for (const key of keys) this.context.controllers.enqueue(SIM_CLUSTER_CONTROLLER, key);
  }
}

@Module({ controllers: [ClusterLifecycleHandler] })
export class ClusterLifecycleModule {}
