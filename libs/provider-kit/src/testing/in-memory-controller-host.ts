import { pino, type Logger } from 'pino';
import { Manager, type KubeClient } from '@capstan/kube';
import { ControllerRegistry } from '../controller-registry.js';
import { type ControllerHost } from '../controller-builder/define-controller.js';
import { EventOutbox } from '../reconciler-kit/event-outbox.js';
import { defaultServiceOptions, type ServiceOptions } from '../service-options.js';

export interface InMemoryControllerHost extends ControllerHost {
  readonly manager: Manager;
  stop(): Promise<void>;
}

/**
 * What a declared controller needs of its service, on a client of the in-memory API server (`@capstan/kube/testing`,
 * held to the real API server's contract): a manager with its informers, the controller registry, the service's
 * options and an outbox. The event bus is down here, so every event a reconcile announces stays owed on its object
 * (tests read it there); a test that needs events delivered runs on the real servers of libs/testing instead.
 */
export function inMemoryControllerHost(
  client: KubeClient,
  options: { name?: string; logger?: Logger; serviceOptions?: Partial<ServiceOptions> } = {},
): InMemoryControllerHost {
  const name = options.name ?? 'test';
  const logger = options.logger ?? pino({ level: 'silent' });
  const manager = new Manager({ client, logger, shutdownTimeoutMs: 2_000 });
  const serviceOptions: ServiceOptions = { ...defaultServiceOptions(name, {}), ...options.serviceOptions };
  return {
    client,
    manager,
    logger,
    options: serviceOptions,
    controllers: new ControllerRegistry(manager),
    outbox: new EventOutbox({
      publisher: {
        publish: () => Promise.reject(new Error('the event bus is down in the in-memory host')),
      },
      bus: { isConnected: false },
      logger,
    }),
    recorder: (controller) => manager.eventRecorder(`capstan.dev/${controller}`, 'test'),
    stop: () => manager.stop(),
  };
}
