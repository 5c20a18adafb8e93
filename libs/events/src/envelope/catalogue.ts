import { type EventSource } from '../subjects/event-subject.js';
import { type EventData } from './event-data.js';
import {
  BootstrapDataSecretCreatedData,
  ControlPlaneAvailableData,
  ControlPlaneInitializedData,
  ControlPlaneScaledData,
  InfrastructureClusterDeletedData,
  InfrastructureClusterProvisionedData,
  InfrastructureMachineDeletedData,
  InfrastructureMachineFailedData,
  InfrastructureMachineProvisionedData,
} from './handoff-events.js';
import {
  ClusterAvailableData,
  ClusterCreatedData,
  ClusterDeletedData,
  ClusterDeletingData,
  ClusterProvisionedData,
  MachineDeletedData,
  MachineDeletingData,
  MachineProvisionedData,
  MachineProvisioningData,
  MachineRemediatedData,
  MachineRunningData,
  MachineUnhealthyData,
} from './lifecycle-events.js';
import {
  MachinePlanAppliedData,
  MachinePlanFailedData,
  MachinePlanProbesHealthyData,
  MachineUpdatedData,
} from './machine-plan-events.js';

/** Prefix of every CloudEvents `type`: `dev.capstan.<source>.<subject role>.<event>`. */
export const EVENT_TYPE_PREFIX = 'dev.capstan';

export interface EventDefinition<
  Name extends string = string,
  Data extends EventData = EventData,
  Source extends EventSource = EventSource,
> {
  /** `<role>.<event>`, e.g. `bootstrap.data-secret-created`: what publishers and handlers name it by. */
  name: Name;
  source: Source;
  /** `infrastructure-cluster`, `bootstrap`, ... for hand-off events; the core kind for lifecycle events. */
  role: string;
  /** The last subject token and the `<event>` of the message id. */
  event: string;
  /** The CloudEvents `type`. */
  type: `${typeof EVENT_TYPE_PREFIX}.${Source}.${Name}`;
  /** Lifecycle events are about exactly one kind; hand-off events about whatever kind the provider serves. */
  kind?: string;
  dataClass: new () => Data;
  description: string;
}

function define<
  const Name extends `${string}.${string}`,
  Data extends EventData,
  const Source extends EventSource,
>(
  source: Source,
  name: Name,
  dataClass: new () => Data,
  description: string,
  kind?: string,
): EventDefinition<Name, Data, Source> {
  const dot = name.indexOf('.');
  return {
    name,
    source,
    role: name.slice(0, dot),
    event: name.slice(dot + 1),
    type: `${EVENT_TYPE_PREFIX}.${source}.${name}`,
    kind,
    dataClass,
    description,
  };
}

/** Every event Capstan publishes. Integrators: docs/events.md renders the same list. */
export const EVENT_CATALOGUE = {
  'infrastructure-cluster.provisioned': define(
    'handoff',
    'infrastructure-cluster.provisioned',
    InfrastructureClusterProvisionedData,
    'The infrastructure cluster is provisioned (status.initialization.provisioned); carries the endpoint and failure domains.',
  ),
  'infrastructure-cluster.deleted': define(
    'handoff',
    'infrastructure-cluster.deleted',
    InfrastructureClusterDeletedData,
    'The infrastructure cluster is gone.',
  ),
  'bootstrap.data-secret-created': define(
    'handoff',
    'bootstrap.data-secret-created',
    BootstrapDataSecretCreatedData,
    'The bootstrap data secret exists (status.initialization.dataSecretCreated); carries its name.',
  ),
  'infrastructure-machine.provisioned': define(
    'handoff',
    'infrastructure-machine.provisioned',
    InfrastructureMachineProvisionedData,
    'The server exists (status.initialization.provisioned); carries providerID, addresses, failure domain.',
  ),
  'infrastructure-machine.failed': define(
    'handoff',
    'infrastructure-machine.failed',
    InfrastructureMachineFailedData,
    'The server could not be provisioned (terminal); carries a reason and message.',
  ),
  'infrastructure-machine.deleted': define(
    'handoff',
    'infrastructure-machine.deleted',
    InfrastructureMachineDeletedData,
    'The server is gone.',
  ),
  'control-plane.initialized': define(
    'handoff',
    'control-plane.initialized',
    ControlPlaneInitializedData,
    'The control plane answers and <cluster>-kubeconfig exists (status.initialization.controlPlaneInitialized).',
  ),
  'control-plane.available': define(
    'handoff',
    'control-plane.available',
    ControlPlaneAvailableData,
    'The control plane is Available; carries replica counts and versions.',
  ),
  'control-plane.scaled': define(
    'handoff',
    'control-plane.scaled',
    ControlPlaneScaledData,
    'The control plane reached its desired replicas; carries replica counts.',
  ),
  'cluster.created': define(
    'lifecycle',
    'cluster.created',
    ClusterCreatedData,
    'The core took a new Cluster in; carries its infrastructure and control plane references.',
    'Cluster',
  ),
  'cluster.provisioned': define(
    'lifecycle',
    'cluster.provisioned',
    ClusterProvisionedData,
    'Infrastructure provisioned and control plane endpoint set (phase Provisioned).',
    'Cluster',
  ),
  'cluster.available': define(
    'lifecycle',
    'cluster.available',
    ClusterAvailableData,
    'The Cluster is Available.',
    'Cluster',
  ),
  'cluster.deleting': define(
    'lifecycle',
    'cluster.deleting',
    ClusterDeletingData,
    'The Cluster is being deleted.',
    'Cluster',
  ),
  'cluster.deleted': define(
    'lifecycle',
    'cluster.deleted',
    ClusterDeletedData,
    'The Cluster is gone.',
    'Cluster',
  ),
  'machine.provisioning': define(
    'lifecycle',
    'machine.provisioning',
    MachineProvisioningData,
    'Bootstrap data is ready; infrastructure is being provisioned (phase Provisioning).',
    'Machine',
  ),
  'machine.provisioned': define(
    'lifecycle',
    'machine.provisioned',
    MachineProvisionedData,
    'The Machine has a providerID (phase Provisioned).',
    'Machine',
  ),
  'machine.running': define(
    'lifecycle',
    'machine.running',
    MachineRunningData,
    'The Machine has a Node (phase Running).',
    'Machine',
  ),
  'machine.unhealthy': define(
    'lifecycle',
    'machine.unhealthy',
    MachineUnhealthyData,
    'A MachineHealthCheck marked the Machine unhealthy.',
    'Machine',
  ),
  'machine.remediated': define(
    'lifecycle',
    'machine.remediated',
    MachineRemediatedData,
    'Remediation of the unhealthy Machine started.',
    'Machine',
  ),
  'machine.deleting': define(
    'lifecycle',
    'machine.deleting',
    MachineDeletingData,
    'The Machine is being deleted (drain, then infrastructure and bootstrap).',
    'Machine',
  ),
  'machine.deleted': define(
    'lifecycle',
    'machine.deleted',
    MachineDeletedData,
    'The Machine is gone.',
    'Machine',
  ),
  'machine-plan.applied': define(
    'handoff',
    'machine-plan.applied',
    MachinePlanAppliedData,
    "The Machine's node agent applied its plan; carries the plan checksum and revision.",
    'Machine',
  ),
  'machine-plan.failed': define(
    'handoff',
    'machine-plan.failed',
    MachinePlanFailedData,
    "The Machine's node agent could not apply its plan; carries the failing step, never its output.",
    'Machine',
  ),
  'machine-plan.probes-healthy': define(
    'handoff',
    'machine-plan.probes-healthy',
    MachinePlanProbesHealthyData,
    'Every probe of the applied plan is healthy; carries the probe names.',
    'Machine',
  ),
  'machine.updated': define(
    'handoff',
    'machine.updated',
    MachineUpdatedData,
    "The Machine's in-place update is done (its plan applied, probes healthy); carries the target and plan checksum.",
    'Machine',
  ),
} as const;

export type EventCatalogue = typeof EVENT_CATALOGUE;
export type EventName = keyof EventCatalogue;
export type HandoffEventName = {
  [N in EventName]: EventCatalogue[N]['source'] extends 'handoff' ? N : never;
}[EventName];
export type LifecycleEventName = Exclude<EventName, HandoffEventName>;
/** The `data` of one event, e.g. `EventDataOf<'bootstrap.data-secret-created'>`. */
export type EventDataOf<N extends EventName> = InstanceType<EventCatalogue[N]['dataClass']>;
export type EventTypeOf<N extends EventName> = EventCatalogue[N]['type'];
export type EventType = EventTypeOf<EventName>;

export const EVENT_NAMES = Object.keys(EVENT_CATALOGUE) as EventName[];

const byType = new Map<string, EventCatalogue[EventName]>(
  Object.values(EVENT_CATALOGUE).map((definition) => [definition.type, definition]),
);

export const EVENT_TYPES = [...byType.keys()] as EventType[];

export function eventDefinition<N extends EventName>(name: N): EventCatalogue[N] {
  return EVENT_CATALOGUE[name];
}

export function eventDefinitionByType(type: string): EventCatalogue[EventName] | undefined {
  return byType.get(type);
}

export function isEventName(name: string): name is EventName {
  return Object.hasOwn(EVENT_CATALOGUE, name);
}
