import pino from 'pino';
import { RESOURCES, type Cluster } from '@capstan/api';
import { CONFIG_MAPS, KubeClient, Manager, type ResourceType } from '@capstan/kube';
import { TemplateClusterOwnership } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  type TestNamespace,
} from '@capstan/testing';
import { ProviderKinds } from '@capstan/provider-kit';
import { TemplateCloner, type TemplateObject } from './template-cloner.js';
import { CountingClient } from '../../testing/counting-client.js';

const KIND = genericProviderKind('GenericInfrastructureMachineTemplate');
const RESOURCE: ResourceType = { group: KIND.group, version: KIND.version, plural: KIND.plural, kind: KIND.kind, namespaced: true };

// A MachineSet clones two templates per Machine: they are read from the informer of their kind, not with a GET each.
describe('templates read through the cache', () => {
  let ns: TestNamespace;
  let client: CountingClient;
  let writer: KubeClient;
  let manager: Manager;
  const cacheOf = (type: ResourceType) => manager.informer<TemplateObject>(type);

  beforeAll(async () => {
    ns = await createTestNamespace('core-templates');
    await installCapstanDefinitions(ns.kc);
    await installGenericProviderCrds(ns.kc);
    client = new CountingClient(ns.kc);
    writer = new KubeClient(ns.kc);
    manager = new Manager({ client, namespace: ns.name, logger: pino({ level: 'silent' }) });
    await manager.start();
  });
  afterAll(async () => {
    await manager?.stop();
    await client?.close();
    await writer?.close();
    await ns?.delete();
  });

  const createTemplate = (name: string) =>
    writer.resource<TemplateObject>(RESOURCE).create({
      metadata: { name, namespace: ns.name },
      spec: { template: { spec: { size: 'small' } } },
    } as TemplateObject);
  const templateRef = (name: string) => ({ apiGroup: KIND.group, kind: KIND.kind, name });
  const getsOf = (name: string) => client.getsOf(`/${KIND.plural}/${name}`);

  it('clones from the cached template once the informer holds it, and from a GET before', async () => {
    const cloner = new TemplateCloner(client, new ProviderKinds(client), cacheOf);
    await createTemplate('workers');
    const clone = (name: string) =>
      cloner.createFromTemplate({ name, namespace: ns.name, clusterName: 'c1', templateRef: templateRef('workers') });
    await clone('m-0');
    const informer = cacheOf(RESOURCE);
    await eventually(() => informer.hasSynced() && informer.getByName(ns.name, 'workers'));
    const before = getsOf('workers');
    for (let i = 1; i <= 5; i++) await clone(`m-${i}`);
    expect(getsOf('workers')).toBe(before);
    const machines = await writer.resource<TemplateObject>({ ...RESOURCE, kind: 'GenericInfrastructureMachine', plural: genericProviderKind('GenericInfrastructureMachine').plural }).list({ namespace: ns.name });
    expect(machines.items.map((m) => m.metadata?.name).sort()).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4', 'm-5']);
    expect(machines.items.every((m) => (m['spec'] as { size?: string }).size === 'small')).toBe(true);
  });

  it('gives a template its Cluster as an owner from the cached copy, again from a fresh read when that copy is outdated', async () => {
    const template = await createTemplate('owned');
    const informer = cacheOf(RESOURCE);
    await eventually(() => informer.getByName(ns.name, 'owned'));
    // Someone else adds an owner after the cache showed the template: the cached copy's version is outdated.
    const cluster = await writer.resource<Cluster>(RESOURCES.Cluster).create({
      apiVersion: RESOURCES.Cluster.apiVersion,
      kind: RESOURCES.Cluster.kind,
      metadata: { name: 'c1', namespace: ns.name },
      spec: {},
    } as Cluster);
    // A real owner: the garbage collector would take a template whose owners do not exist.
    const configMap = await writer.resource(CONFIG_MAPS).create({ metadata: { name: 'o', namespace: ns.name } });
    const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: configMap.metadata!.uid! };
    const stale = informer.getByName(ns.name, 'owned')!;
    await writer.resource<TemplateObject>(RESOURCE).mergePatch(
      { namespace: ns.name, name: 'owned' },
      { metadata: { resourceVersion: template.metadata?.resourceVersion, ownerReferences: [other] } },
    );
    const ownership = new TemplateClusterOwnership(client, () => Promise.resolve(RESOURCE), () => ({
      getOrFetch: () => Promise.resolve(stale),
    }));
    await ownership.ensure(cluster, ns.name, [templateRef('owned')]);
    const written = await writer.resource<TemplateObject>(RESOURCE).get({ namespace: ns.name, name: 'owned' });
    expect(written.metadata?.ownerReferences?.map((o) => o.name)).toEqual(['o', 'c1']);
  });
});
