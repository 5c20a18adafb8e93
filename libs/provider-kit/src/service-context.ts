import { type ClusterConnection, type EventRecorder, type KubeClient, type Manager } from '@capstan/kube';
import { type EventBusConnection, type EventPublisher, type EventTopology } from '@capstan/events';
import { type Readiness } from '@capstan/observability';
import { type Logger } from 'pino';
import { type Registry } from 'prom-client';
import { type EventOutbox } from './reconciler-kit/event-outbox.js';
import { type ControllerRegistry } from './controller-registry.js';
import { type ServiceOptions } from './service-options.js';

/** Everything a service's controllers and event handlers share. */
export interface ServiceContext {
  readonly name: string;
  readonly options: ServiceOptions;
  readonly logger: Logger;
  /** The management cluster's API server and this service's credentials there. */
  readonly connection: ClusterConnection;
  readonly manager: Manager;
  /** The manager's client; writes carry the service's field manager `capstan-<service>`. */
  readonly client: KubeClient;
  readonly registry: Registry;
  readonly bus: EventBusConnection;
  readonly topology: EventTopology;
  /** Publishes catalogued events; a failure throws, so the reconcile retries. */
  readonly publisher: EventPublisher;
  /** The one outbox of events owed to the bus (see EventOutbox); reconcilers announce through it. */
  readonly outbox: EventOutbox;
  readonly readiness: Readiness;
  readonly controllers: ControllerRegistry;
  /** Kubernetes Events on objects, reported as `capstan.dev/<controller>`. */
  recorder(controller: string): EventRecorder;
}
