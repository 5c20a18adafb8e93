import { RESOURCES, type Machine } from '@capstan/api';
import {
  EventRecorder,
  isNotFound,
  KubeClient,
  ResourceClient,
  type ObjectRef,
  type ResourceType,
} from '@capstan/kube';
import {
  createTestNamespace,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  type TestNamespace,
} from '@capstan/testing';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import pino from 'pino';
import { ORPHANED_CLONE_AGE_MS, OrphanedClones } from './orphaned-clones.js';

// The sweep against the real API server, its clock moved on instead of waiting out the age threshold. The owner is
// a ConfigMap: the sweep needs only its uid (a MachineSet or a control plane in the services).

const LABEL_SELECTOR = 'cluster.x-k8s.io/cluster-name=demo,pool=workers';
const typeOf = (kind: string): ResourceType => {
  const k = genericProviderKind(kind);
  return { group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: true };
};
const INFRA = typeOf('GenericInfrastructureMachine');
const BOOTSTRAP = typeOf('GenericBootstrapConfig');

describe('orphaned clones', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let owner: V1ConfigMap;
  const log = pino({ level: 'silent' });
  const cached = new Set<string>();
  const later = () => new Date(Date.now() + ORPHANED_CLONE_AGE_MS + 5_000);
  const locate = () => Promise.resolve({ types: [INFRA, BOOTSTRAP], labelSelector: LABEL_SELECTOR });

  beforeAll(async () => {
    ns = await createTestNamespace('kit-orphans');
    await installCapstanDefinitions(ns.kc);
    await installGenericProviderCrds(ns.kc);
    client = new KubeClient(ns.kc, { fieldManager: 'kit-test' });
    owner = await client
      .resource<V1ConfigMap>({
        group: '',
        version: 'v1',
        plural: 'configmaps',
        kind: 'ConfigMap',
        namespaced: true,
      })
      .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'workers', namespace: ns.name } });
  });
  afterAll(async () => {
    await client?.close();
    await ns?.delete();
  });

  const sweeper = () =>
    new OrphanedClones({
      client,
      machines: { getByName: (_namespace, name) => (cached.has(name!) ? ({} as Machine) : undefined) },
      machinesApi: client.resource<Machine>(RESOURCES.Machine),
      recorder: new EventRecorder({
        client,
        reportingController: 'capstan.dev/test',
        reportingInstance: 'test',
        logger: log,
      }),
    });
  /** A clone as its owner makes it: the owner's labels, owned (not controlled) by it. */
  const clone = (
    type: ResourceType,
    name: string,
    options: { controlledBy?: Machine; labels?: Record<string, string> } = {},
  ) =>
    client.resource<KubernetesObject>(type).create({
      apiVersion: `${type.group}/${type.version}`,
      kind: type.kind,
      metadata: {
        name,
        namespace: ns.name,
        labels: options.labels ?? { 'cluster.x-k8s.io/cluster-name': 'demo', pool: 'workers' },
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'workers', uid: owner.metadata!.uid! },
          ...(options.controlledBy
            ? [
                {
                  apiVersion: RESOURCES.Machine.apiVersion,
                  kind: 'Machine',
                  name: options.controlledBy.metadata.name!,
                  uid: options.controlledBy.metadata.uid!,
                  controller: true,
                },
              ]
            : []),
        ],
      },
      spec: {},
    } as KubernetesObject);
  const exists = async (type: ResourceType, name: string) => {
    try {
      await client.resource(type).get({ namespace: ns.name, name });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };

  const machine = (name: string) =>
    client.resource<Machine>(RESOURCES.Machine).create({
      apiVersion: RESOURCES.Machine.apiVersion,
      kind: RESOURCES.Machine.kind,
      metadata: { name, namespace: ns.name },
      spec: {
        clusterName: 'demo',
        bootstrap: { dataSecretName: 'data' },
        infrastructureRef: { apiGroup: INFRA.group, kind: INFRA.kind, name },
      },
    });

  it('deletes old clones no Machine references, and keeps adopted ones, those of existing Machines and others', async () => {
    await clone(INFRA, 'workers-lost');
    await clone(BOOTSTRAP, 'workers-lost');
    // Taken over by a Machine of another name: only its controller reference keeps it.
    await clone(INFRA, 'workers-adopted', { controlledBy: await machine('adopter') });
    await clone(INFRA, 'workers-cached');
    cached.add('workers-cached');
    await clone(INFRA, 'other-pool', { labels: { 'cluster.x-k8s.io/cluster-name': 'demo', pool: 'other' } });
    await clone(INFRA, 'workers-live');
    await machine('workers-live');

    const sweep = sweeper();
    // The owner created nothing here: no sweep is due.
    expect(await sweep.sweepIfDue(owner, locate, later(), log)).toBeUndefined();
    expect(await exists(INFRA, 'workers-lost')).toBe(true);

    sweep.expect(owner, new Date());
    // Due only once a clone made now would be old enough.
    expect(await sweep.sweepIfDue(owner, locate, new Date(), log)).toBeGreaterThan(
      ORPHANED_CLONE_AGE_MS - 5_000,
    );
    expect(await exists(INFRA, 'workers-lost')).toBe(true);

    expect(await sweep.sweepIfDue(owner, locate, later(), log)).toBeUndefined();
    expect(await exists(INFRA, 'workers-lost')).toBe(false);
    expect(await exists(BOOTSTRAP, 'workers-lost')).toBe(false);
    for (const kept of ['workers-adopted', 'workers-cached', 'workers-live', 'other-pool']) {
      expect([kept, await exists(INFRA, kept)]).toEqual([kept, true]);
    }
    // Swept: nothing is due again until the owner creates Machines once more.
    await clone(BOOTSTRAP, 'workers-later');
    expect(await sweep.sweepIfDue(owner, locate, later(), log)).toBeUndefined();
    expect(await exists(BOOTSTRAP, 'workers-later')).toBe(true);
  });

  it('leaves a clone too young to judge for a later sweep, and sweeps it then', async () => {
    await clone(INFRA, 'workers-young');
    const sweep = sweeper();
    sweep.expect(owner, new Date(Date.now() - ORPHANED_CLONE_AGE_MS));
    expect(await sweep.sweepIfDue(owner, locate, new Date(), log)).toBeGreaterThan(
      ORPHANED_CLONE_AGE_MS - 10_000,
    );
    expect(await exists(INFRA, 'workers-young')).toBe(true);
    expect(await sweep.sweepIfDue(owner, locate, later(), log)).toBeUndefined();
    expect(await exists(INFRA, 'workers-young')).toBe(false);
  });

  it('is due again later when a sweep fails', async () => {
    const sweep = sweeper();
    sweep.expect(owner, new Date(Date.now() - ORPHANED_CLONE_AGE_MS));
    const refused = () =>
      Promise.resolve({ types: [{ ...INFRA, plural: 'nosuchkinds' }], labelSelector: LABEL_SELECTOR });
    await expect(sweep.sweepIfDue(owner, refused, new Date(), log)).rejects.toThrow(/404/);
    expect(await sweep.sweepIfDue(owner, locate, new Date(), log)).toBeGreaterThan(
      ORPHANED_CLONE_AGE_MS - 10_000,
    );
  });

  it('keeps a clone whose Machine was created and took it over right after the sweep read that none exists', async () => {
    await clone(INFRA, 'workers-late');
    /** The Machine's late create lands, and the core takes the clone over, between the sweep's read and delete. */
    class LateMachine extends ResourceClient<Machine> {
      override async getIfExists(ref: ObjectRef, signal?: AbortSignal): Promise<Machine | undefined> {
        const answer = await super.getIfExists(ref, signal);
        if (ref.name === 'workers-late') {
          const late = await machine('workers-late');
          await client.resource(INFRA).mergePatch(
            { namespace: ns.name, name: 'workers-late' },
            {
              metadata: {
                ownerReferences: [
                  { apiVersion: 'v1', kind: 'ConfigMap', name: 'workers', uid: owner.metadata!.uid! },
                  {
                    apiVersion: RESOURCES.Machine.apiVersion,
                    kind: 'Machine',
                    name: 'workers-late',
                    uid: late.metadata.uid!,
                    controller: true,
                  },
                ],
              },
            },
          );
        }
        return answer;
      }
    }
    const sweep = new OrphanedClones({
      client,
      machines: { getByName: () => undefined },
      machinesApi: new LateMachine(client, RESOURCES.Machine),
      recorder: new EventRecorder({
        client,
        reportingController: 'capstan.dev/test',
        reportingInstance: 'test',
        logger: log,
      }),
    });
    sweep.expect(owner, new Date(Date.now() - ORPHANED_CLONE_AGE_MS));
    // Judged again shortly: it changed while being judged.
    expect(await sweep.sweepIfDue(owner, locate, later(), log)).toBeLessThan(5_000);
    expect(await exists(INFRA, 'workers-late')).toBe(true);
  });
});
