import { RESOURCES } from '@capstan/api';
import { DeferEventException, EVENT_CATALOGUE, EVENT_NAMES, type CapstanEvent, type EventName } from '@capstan/events';
import { type ResourceType } from '@capstan/kube';
import { type EventRoute, type ServiceContext } from '@capstan/provider-kit';
import { BY_REFERENCE, referenceIndexValue } from '../external/reference-index.js';
import { CLUSTER_CONTROLLER, MACHINE_CONTROLLER } from './controller-names.js';
import { ProviderHints } from '../external/provider-hints.js';
import { handoffRoutes } from './handoff.listener.js';

const HANDOFF_ROUTES = handoffRoutes(new ProviderHints());

const NS = 'ns';
const GROUP = 'infrastructure.generic.capstan.dev';

/**
 * Informers whose reference index holds `referencing` (index value -> names of the referencing objects) and whose
 * cache holds `cached` (names; every referencing object and every named owner unless given).
 */
function contextWith(
  referencing: {
    clusters?: Record<string, string[]>;
    machines?: Record<string, string[]>;
  },
  cached?: { clusters?: string[]; machines?: string[] },
) {
  const informer = (byValue: Record<string, string[]> = {}, names?: string[]) => ({
    byIndex: (index: string, value: string) =>
      index === BY_REFERENCE
        ? (byValue[value] ?? []).map((name) => ({ metadata: { namespace: NS, name } }))
        : [],
    get: (key: string) => {
      const name = key.slice(NS.length + 1);
      return names === undefined || names.includes(name) ? { metadata: { namespace: NS, name } } : undefined;
    },
  });
  const clusters = informer(referencing.clusters, cached?.clusters);
  const machines = informer(referencing.machines, cached?.machines);
  // Only the manager's informers are read by the routes.
  return {
    manager: {
      informer: (type: ResourceType) => (type.kind === RESOURCES.Cluster.kind ? clusters : machines),
    },
  } as unknown as ServiceContext;
}

function event(
  name: EventName,
  kind: string,
  objectName: string,
  fields: Record<string, unknown>,
): CapstanEvent {
  const object = { apiGroup: GROUP, kind, namespace: NS, name: objectName, uid: 'u' };
  // The routes read the type, the object and the owner names; the rest of the envelope does not matter here.
  return { type: EVENT_CATALOGUE[name].type, data: { object, resourceVersion: '7', ...fields } } as unknown as CapstanEvent;
}

function route(name: EventName, e: CapstanEvent, context: ServiceContext) {
  const handler = HANDOFF_ROUTES[name] as EventRoute<EventName> | undefined;
  return [...(handler?.(e as CapstanEvent<EventName>, context) ?? [])];
}

describe('hand-off routes', () => {
  it('handle every hand-off event of the catalogue, and no other event', () => {
    const handoff = EVENT_NAMES.filter((name) => EVENT_CATALOGUE[name].source === 'handoff');
    expect(Object.keys(HANDOFF_ROUTES).sort()).toEqual([...handoff].sort());
    expect(handoff.length).toBeGreaterThan(0);
  });

  it('enqueue the Cluster an infrastructure cluster event names and every Cluster referencing the object', () => {
    const ref = referenceIndexValue(NS, {
      apiGroup: GROUP,
      kind: 'GenericInfrastructureCluster',
      name: 'infra',
    });
    const context = contextWith({ clusters: { [ref]: ['other'] } });
    const e = event('infrastructure-cluster.provisioned', 'GenericInfrastructureCluster', 'infra', {
      clusterName: 'c1',
    });
    expect(route('infrastructure-cluster.provisioned', e, context)).toEqual([
      { controller: CLUSTER_CONTROLLER, key: `${NS}/c1` },
      { controller: CLUSTER_CONTROLLER, key: `${NS}/other` },
    ]);
  });

  it('enqueue the Machine a bootstrap event names and every Machine referencing the object', () => {
    const ref = referenceIndexValue(NS, { apiGroup: GROUP, kind: 'GenericBootstrapConfig', name: 'boot' });
    const context = contextWith({ machines: { [ref]: ['m1', 'm2'] } });
    const e = event('bootstrap.data-secret-created', 'GenericBootstrapConfig', 'boot', {
      clusterName: 'c1',
      machineName: 'm1',
    });
    expect(route('bootstrap.data-secret-created', e, context)).toEqual([
      { controller: MACHINE_CONTROLLER, key: `${NS}/m1` },
      { controller: MACHINE_CONTROLLER, key: `${NS}/m2` },
    ]);
  });

  it('hand an event back while the Machine it names is not in the cache yet (the reconcile would find nothing)', () => {
    const context = contextWith({}, { machines: [] });
    const e = event('infrastructure-machine.provisioned', 'GenericInfrastructureMachine', 'm1-infra', {
      clusterName: 'c1',
      machineName: 'm1',
    });
    expect(() => route('infrastructure-machine.provisioned', e, context)).toThrow(DeferEventException);
    const known = contextWith({}, { machines: ['m1'] });
    expect(route('infrastructure-machine.provisioned', e, known)).toEqual([{ controller: MACHINE_CONTROLLER, key: `${NS}/m1` }]);
  });

  it('hand an event back that maps to no object yet, but not a deletion whose owner is gone', () => {
    const context = contextWith({}, { machines: [] });
    const provisioned = event('machine-plan.applied', 'Machine', 'gone', { clusterName: 'c1' });
    expect(() => route('machine-plan.applied', provisioned, context)).toThrow(DeferEventException);
    const deleted = event('infrastructure-machine.deleted', 'GenericInfrastructureMachine', 'x', { clusterName: 'c1' });
    expect(route('infrastructure-machine.deleted', deleted, context)).toEqual([]);
  });

  it('note the version of the provider object an event names, so the reconciles it wakes read at least that one', () => {
    const hints = new ProviderHints();
    const routes = handoffRoutes(hints);
    const context = contextWith({}, { machines: ['m1'], clusters: ['c1'] });
    const provisioned = event('infrastructure-machine.provisioned', 'GenericInfrastructureMachine', 'm1-infra', {
      clusterName: 'c1',
      machineName: 'm1',
      resourceVersion: '42',
    });
    const handler = routes['infrastructure-machine.provisioned'] as EventRoute<EventName>;
    expect([...handler(provisioned as CapstanEvent<EventName>, context)]).toEqual([{ controller: MACHINE_CONTROLLER, key: `${NS}/m1` }]);
    const object = { apiGroup: GROUP, kind: 'GenericInfrastructureMachine', namespace: NS, name: 'm1-infra' };
    expect(hints.outstanding(object)).toBe('42');
    // An event about the Machine itself names no provider object.
    const applied = event('machine-plan.applied', 'Machine', 'm1', { clusterName: 'c1' });
    (routes['machine-plan.applied'] as EventRoute<EventName>)(applied as CapstanEvent<EventName>, context);
    expect(hints.size).toBe(1);
    // A deferred event notes nothing: it comes back.
    const unknown = event('bootstrap.data-secret-created', 'GenericBootstrapConfig', 'b', { clusterName: 'c1', machineName: 'gone' });
    expect(() => (routes['bootstrap.data-secret-created'] as EventRoute<EventName>)(unknown as CapstanEvent<EventName>, context)).toThrow(DeferEventException);
    expect(hints.size).toBe(1);
  });
});
