/** The service's EventBusConnection. */
export const EVENT_BUS_CONNECTION = Symbol('EVENT_BUS_CONNECTION');
/** The EventTopology the service publishes and consumes on. */
export const EVENT_TOPOLOGY = Symbol('EVENT_TOPOLOGY');
/** The prom-client Registry event metrics are registered on (the one `/metrics` serves). */
export const EVENT_METRICS_REGISTRY = Symbol('EVENT_METRICS_REGISTRY');
