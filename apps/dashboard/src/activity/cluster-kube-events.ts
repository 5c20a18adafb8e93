import type { KubernetesObject } from '@kubernetes/client-node';
import { EVENTS_V1, isForbidden, type KubeClient, type ResourceType } from '@capstan/kube';
import type { ProviderKinds } from '@capstan/provider-kit';
import { readClusterObjects } from '../fleet/cluster-objects.js';
import { timeText } from '../machines/machine-row.js';
import { scrubSecretShapes } from '../machines/output-scrubber.js';

/** The newest events a Cluster's page shows. */
export const MAX_CLUSTER_EVENTS = 200;
/** Events of the namespace looked at in all, so a namespace of many clusters bounds the read (newest kept). */
export const MAX_SCANNED_EVENTS = 5_000;
const PAGE_SIZE = 500;
const MAX_MESSAGE_CHARS = 1024;

/** core/v1 Events: what RBAC roles most often grant (`view` does), and what the kubelet and older controllers write. */
const CORE_EVENTS: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  namespaced: true,
};

/** One Kubernetes Event about an object of a Cluster, as its page shows it. */
export interface ClusterEventView {
  type: string;
  reason: string;
  message: string;
  object: { kind: string; name: string };
  count?: number;
  firstTime?: string;
  lastTime?: string;
}

/** The fields of an Event of either API (events.k8s.io/v1 or core/v1) that the page reads. */
interface AnyEvent extends KubernetesObject {
  type?: string;
  reason?: string;
  note?: string;
  message?: string;
  regarding?: { kind?: string; name?: string };
  involvedObject?: { kind?: string; name?: string };
  series?: { count?: number; lastObservedTime?: string };
  deprecatedCount?: number;
  count?: number;
  eventTime?: string;
  deprecatedFirstTimestamp?: string;
  deprecatedLastTimestamp?: string;
  firstTimestamp?: string;
  lastTimestamp?: string;
}

/**
 * The Kubernetes Events of a Cluster and its objects (its infrastructure cluster and control plane, MachineDeployments,
 * MachineSets, Machines and each Machine's infrastructure machine and bootstrap config), newest first, read with
 * `client`, which acts as the signed-in user: the Cluster and its lists as the tree reads them (a refusal is the API
 * server's), then one list of the namespace's events filtered here. Events are listed from events.k8s.io/v1, or from
 * core/v1 when the user may list only those; notes are stripped of anything shaped like a credential.
 */
export async function readClusterKubeEvents(
  client: KubeClient,
  kinds: ProviderKinds,
  namespace: string,
  name: string,
): Promise<ClusterEventView[]> {
  const objects = await readClusterObjects(client, kinds, namespace, name);
  const wanted = new Set<string>();
  const add = (kind: string | undefined, objectName: string | undefined) => {
    if (kind && objectName) wanted.add(`${kind}/${objectName}`);
  };
  for (const object of [
    objects.cluster,
    objects.infrastructure,
    objects.controlPlane,
    ...objects.machineDeployments,
    ...objects.machineSets,
    ...objects.machines,
  ])
    add(object?.kind, object?.metadata.name);
  for (const machine of objects.machines) {
    const spec = machine.spec as
      | {
          infrastructureRef?: { kind?: string; name?: string };
          bootstrap?: { configRef?: { kind?: string; name?: string } };
        }
      | undefined;
    add(spec?.infrastructureRef?.kind, spec?.infrastructureRef?.name);
    add(spec?.bootstrap?.configRef?.kind, spec?.bootstrap?.configRef?.name);
  }
  const events = await listNamespaceEvents(client, namespace);
  return events
    .map(eventView)
    .filter((view) => wanted.has(`${view.object.kind}/${view.object.name}`))
    .sort((a, b) => timeOf(b.lastTime) - timeOf(a.lastTime))
    .slice(0, MAX_CLUSTER_EVENTS);
}

/** The namespace's events (at most MAX_SCANNED_EVENTS) from events.k8s.io/v1, else core/v1. */
async function listNamespaceEvents(client: KubeClient, namespace: string): Promise<AnyEvent[]> {
  try {
    return await listBounded(client, EVENTS_V1, namespace);
  } catch (error) {
    if (!isForbidden(error)) throw error;
    return listBounded(client, CORE_EVENTS, namespace);
  }
}

async function listBounded(client: KubeClient, type: ResourceType, namespace: string): Promise<AnyEvent[]> {
  const events: AnyEvent[] = [];
  let token: string | undefined;
  do {
    const page = await client.resource<AnyEvent>(type).list({ namespace, limit: PAGE_SIZE, continue: token });
    events.push(...page.items);
    token = page.continue;
  } while (token && events.length < MAX_SCANNED_EVENTS);
  return events;
}

function eventView(event: AnyEvent): ClusterEventView {
  const object = event.regarding ?? event.involvedObject ?? {};
  const created = timeText(event.metadata?.creationTimestamp);
  const count = event.series?.count ?? event.deprecatedCount ?? event.count;
  const firstTime =
    timeText(event.deprecatedFirstTimestamp) ??
    timeText(event.firstTimestamp) ??
    timeText(event.eventTime) ??
    created;
  const lastTime =
    timeText(event.series?.lastObservedTime) ??
    timeText(event.deprecatedLastTimestamp) ??
    timeText(event.lastTimestamp) ??
    timeText(event.eventTime) ??
    created;
  return {
    type: event.type ?? 'Normal',
    reason: event.reason ?? '',
    message: scrubSecretShapes(event.note ?? event.message ?? '').slice(0, MAX_MESSAGE_CHARS),
    object: { kind: object.kind ?? '', name: object.name ?? '' },
    ...(typeof count === 'number' && count > 0 ? { count } : {}),
    ...(firstTime ? { firstTime } : {}),
    ...(lastTime ? { lastTime } : {}),
  };
}

/** Milliseconds of an RFC 3339 time (with or without fractions: their strings do not sort), 0 without one. */
const timeOf = (time: string | undefined): number => (time ? Date.parse(time) || 0 : 0);
