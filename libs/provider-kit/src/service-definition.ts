import { type Type } from '@nestjs/common';
import { type ServiceContext } from './service-context.js';

/** What makes a service: its controllers, its event handlers and what it consumes. */
export interface ServiceDefinition {
  /** `core`, `cluster-provider`, ...: names the durable consumer, the Lease and the field manager. */
  name: string;
  /** Registers the service's controllers on the context; may return a hook run at shutdown. */
  setup(context: ServiceContext): void | (() => Promise<void>) | Promise<void | (() => Promise<void>)>;
  /**
   * Nest modules with `@EventPattern` handlers (they inject SERVICE_CONTEXT and only enqueue keys) and
   * any other providers the service needs.
   */
  modules?: Type[];
  /** Subjects of the service's durable consumer, below the root, e.g. `handoff.>`; none: no consumer. */
  consumes?: string;
  /** The service's own flags and environment, shown after the shared ones in `--help`. */
  helpText?: string;
  /**
   * Paths besides `/admin` that carry credentials (bearer tokens) and so are served on the HTTPS admin port only; the
   * plain port answers them 404.
   */
  tlsOnlyPaths?: readonly string[];
}
