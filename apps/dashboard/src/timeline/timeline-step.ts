import { eventDefinitionByType, type CapstanEvent, type EventName } from '@capstan/events';

/**
 * The hand-off step each catalogued event marks (docs/events.md). The six steps of a machine's way to a working node
 * have fixed names the page draws as a timeline; every other event is a step named after itself. A Record over every
 * EventName: an event added to the catalogue does not compile here until it has its step.
 */
export const TIMELINE_STEPS: Readonly<Record<EventName, string>> = {
  'infrastructure-cluster.provisioned': 'infrastructure-ready',
  'infrastructure-machine.provisioned': 'infrastructure-ready',
  'bootstrap.data-secret-created': 'bootstrap-data',
  'machine.provisioned': 'machine-provisioned',
  // The core publishes it when the Machine has its Node (nodeRef set, phase Running).
  'machine.running': 'node-ready',
  'control-plane.initialized': 'control-plane-initialized',
  'machine-plan.applied': 'plan-applied',
  'infrastructure-cluster.deleted': 'infrastructure-deleted',
  'infrastructure-machine.failed': 'infrastructure-failed',
  'infrastructure-machine.deleted': 'infrastructure-deleted',
  'control-plane.available': 'control-plane-available',
  'control-plane.scaled': 'control-plane-scaled',
  'cluster.created': 'cluster-created',
  'cluster.provisioned': 'cluster-provisioned',
  'cluster.available': 'cluster-available',
  'cluster.deleting': 'cluster-deleting',
  'cluster.deleted': 'cluster-deleted',
  'machine.provisioning': 'machine-provisioning',
  'machine.unhealthy': 'machine-unhealthy',
  'machine.remediated': 'machine-remediated',
  'machine.deleting': 'machine-deleting',
  'machine.deleted': 'machine-deleted',
  'machine-plan.failed': 'plan-failed',
  'machine-plan.probes-healthy': 'probes-healthy',
  'machine.updated': 'machine-updated',
};

/** One step of a Cluster's hand-off timeline: which machine (when it is about one), what, when, from which event. */
export interface TimelineStep {
  /** The CloudEvent id (`<uid>:<resourceVersion>:<event>`): a step seen twice (replay, then live) is one step. */
  id: string;
  /** The Machine the event is about: the Machine itself, or the one a provider object serves (`data.machineName`). */
  machine?: string;
  /** The object the event names (a Machine, a provider's object, the Cluster, its control plane). */
  object: { kind: string; name: string };
  step: string;
  /** When the publisher sent it (RFC 3339). */
  time: string;
  /** The CloudEvent type, e.g. `dev.capstan.handoff.bootstrap.data-secret-created`. */
  type: string;
}

/** The step `event` marks. */
export function timelineStep(event: CapstanEvent): TimelineStep {
  const definition = eventDefinitionByType(event.type);
  const { object } = event.data;
  const machineName = (event.data as { machineName?: unknown }).machineName;
  const machine =
    object.kind === 'Machine' ? object.name : typeof machineName === 'string' ? machineName : undefined;
  return {
    id: event.id,
    ...(machine ? { machine } : {}),
    object: { kind: object.kind, name: object.name },
    // Decoded events have catalogued types; the fallback only keeps a newer catalogue from breaking the page.
    step: definition ? TIMELINE_STEPS[definition.name] : event.type,
    time: event.time,
    type: event.type,
  };
}
