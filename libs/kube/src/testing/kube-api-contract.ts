import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from '../client.js';
import { CONFIG_MAPS } from '../core-kinds.js';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, KubeApiError } from '../errors.js';
import { HttpMethod } from '../http-method.js';
import { Informer } from '../informer.js';
import { resourcePath } from '../resource.js';
import { eventually, testLogger } from './eventually.js';
import { widget, WIDGET, type Widget } from './widget-crd.js';

/** An API to hold to the contract: a client whose field manager is `runtime-test`, and a namespace of its own. */
export interface KubeApiUnderTest {
  client: KubeClient;
  namespace: string;
}

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

/**
 * What Capstan relies on of the Kubernetes API, as `it` cases: run against the real API server (resource-client.int
 * spec) and against the in-memory API server (in-memory-api-server.spec), so the one stand-in for the API cannot
 * drift from it. A case belongs here when a reconciler depends on the behaviour; a difference found later is a new
 * case, run on both.
 */
export function kubeApiContract(api: () => KubeApiUnderTest): void {
  const logger = testLogger();

  it('creates, gets, replaces with optimistic concurrency and deletes; errors are typed', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    const created = await widgets.create(widget(namespace, 'crud', { size: 1 }));
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.metadata?.generation).toBe(1);
    expect(isAlreadyExists(await rejection(widgets.create(widget(namespace, 'crud'))))).toBe(true);

    const fetched = await widgets.get({ namespace, name: 'crud' });
    const replaced = await widgets.replace({ ...fetched, spec: { size: 2 } });
    expect(replaced.spec?.size).toBe(2);
    // The first read's resourceVersion is stale now.
    const conflict = await rejection(widgets.replace({ ...fetched, spec: { size: 3 } }));
    expect(isConflict(conflict)).toBe(true);
    expect(conflict).toBeInstanceOf(KubeApiError);

    await widgets.delete({ namespace, name: 'crud' });
    const missing = await rejection(widgets.get({ namespace, name: 'crud' }));
    expect(isNotFound(missing)).toBe(true);
    expect(String(missing)).toMatch(/widgets\/crud: 404/);
    expect(await widgets.getIfExists({ namespace, name: 'crud' })).toBeUndefined();
  });

  it('names an object from generateName and refuses a name that is not a DNS subdomain', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    const generated = await widgets.create({ metadata: { namespace, generateName: 'gen-' } } as Widget);
    expect(generated.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(isInvalid(await rejection(widgets.create(widget(namespace, 'Not_Valid'))))).toBe(true);
  });

  it('patches with merge patch, JSON patch (a failed test op is refused with 422) and server-side apply', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    await widgets.create(widget(namespace, 'patch', { size: 1, note: 'a' }));
    const ref = { namespace, name: 'patch' };

    const merged = await widgets.mergePatch(ref, { spec: { size: 5 } });
    expect(merged.spec).toEqual({ size: 5, note: 'a' });

    const patched = await widgets.jsonPatch(ref, [
      { op: 'test', path: '/spec/size', value: 5 },
      { op: 'replace', path: '/spec/note', value: 'b' },
    ]);
    expect(patched.spec?.note).toBe('b');
    const refusal = await rejection(
      widgets.jsonPatch(ref, [
        { op: 'test', path: '/spec/size', value: 4 },
        { op: 'replace', path: '/spec/note', value: 'c' },
      ]),
    );
    expect(isInvalid(refusal)).toBe(true);
    expect((await widgets.get(ref)).spec?.note).toBe('b');

    // A merge patch naming a resourceVersion is conditional on it.
    const stale = await rejection(widgets.mergePatch(ref, { metadata: { resourceVersion: '1' }, spec: { size: 6 } }));
    expect(isConflict(stale)).toBe(true);

    const applied = await widgets.apply({ metadata: ref, spec: { providerID: 'sim://patch' } } as Widget);
    expect(applied.spec).toEqual({ size: 5, note: 'b', providerID: 'sim://patch' });
    const managers = applied.metadata?.managedFields?.map((f) => `${f.manager}:${f.operation}`);
    expect(managers).toContain('runtime-test:Apply');
  });

  it('server-side apply removes the fields a manager stops applying, and keeps those another manager set', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    const ref = { namespace, name: 'apply' };
    const first = await widgets.apply({ metadata: ref, spec: { size: 1, note: 'mine' } } as Widget);
    expect(first.metadata?.uid).toBeTruthy();
    await widgets.mergePatch(ref, { spec: { providerID: 'sim://other' } }, { fieldManager: 'someone-else' });
    const second = await widgets.apply({ metadata: ref, spec: { size: 2 } } as Widget);
    expect(second.spec).toEqual({ size: 2, providerID: 'sim://other' });
    const managers = second.metadata?.managedFields?.map((f) => f.manager).sort();
    expect(managers).toEqual(['runtime-test', 'someone-else']);
  });

  it('writes status only through the status subresource; generation counts spec changes only', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    await widgets.create({ ...widget(namespace, 'status', { size: 1 }), status: { phase: 'Ignored' } });
    const ref = { namespace, name: 'status' };
    expect((await widgets.get(ref)).status).toBeUndefined();
    // The main resource ignores status when the CRD has a status subresource.
    const ignored = await widgets.mergePatch(ref, { status: { phase: 'Nope' } });
    expect(ignored.status?.phase).toBeUndefined();
    const patched = await widgets.patchStatus(ref, { phase: 'Merged' });
    expect(patched.status?.phase).toBe('Merged');
    const applied = await widgets.applyStatus({ metadata: ref, status: { seen: 1 } } as Widget);
    expect(applied.status).toEqual({ phase: 'Merged', seen: 1 });
    // The status subresource ignores everything else.
    const relabelled = await widgets.replaceStatus({ ...applied, metadata: { ...applied.metadata, labels: { x: 'y' } }, spec: { size: 9 } });
    expect(relabelled.metadata?.labels).toBeUndefined();
    expect(relabelled.spec?.size).toBe(1);

    const labelled = await widgets.mergePatch(ref, { metadata: { labels: { a: 'b' } } });
    expect(labelled.metadata?.generation).toBe(1);
    const resized = await widgets.mergePatch(ref, { spec: { size: 2 } });
    expect(resized.metadata?.generation).toBe(2);
    // A write that changes nothing is no new version.
    const same = await widgets.mergePatch(ref, { spec: { size: 2 } });
    expect(same.metadata?.resourceVersion).toBe(resized.metadata?.resourceVersion);
  });

  it('keeps an object with finalizers until the last one goes, refuses new ones meanwhile, and honours preconditions', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    const ref = { namespace, name: 'final' };
    const created = await widgets.create({ ...widget(namespace, 'final'), metadata: { ...ref, finalizers: ['test.capstan.dev/hold'] } });
    const wrongUid = await rejection(widgets.delete(ref, { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }));
    expect(isConflict(wrongUid)).toBe(true);
    const staleVersion = await rejection(widgets.delete(ref, { preconditions: { resourceVersion: '1' } }));
    expect(isConflict(staleVersion)).toBe(true);

    await widgets.delete(ref, { preconditions: { uid: created.metadata!.uid! } });
    const deleting = await widgets.get(ref);
    expect(deleting.metadata?.deletionTimestamp).toBeTruthy();
    const added = await rejection(
      widgets.mergePatch(ref, { metadata: { finalizers: ['test.capstan.dev/hold', 'test.capstan.dev/late'] } }),
    );
    expect(isInvalid(added)).toBe(true);
    await widgets.mergePatch(ref, { metadata: { finalizers: null } });
    expect(await widgets.getIfExists(ref)).toBeUndefined();
  });

  it('lists in pages, by label and by name, and reaches core kinds the same way', async () => {
    const { client, namespace } = api();
    const maps = client.resource<KubernetesObject & { data?: Record<string, string> }>(CONFIG_MAPS);
    for (let i = 0; i < 7; i++)
      await maps.create({
        metadata: { namespace, name: `cm-${i}`, labels: { page: 'yes', parity: i % 2 === 0 ? 'even' : 'odd' } },
        data: { i: String(i) },
      });
    const first = await maps.list({ namespace, labelSelector: 'page=yes', limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.continue).toBeTruthy();
    expect(first.items[0]?.kind).toBe('ConfigMap');
    const all = await maps.listAll({ namespace, labelSelector: 'page=yes', pageSize: 3 });
    expect(all.items.map((m) => m.metadata?.name).sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `cm-${i}`));
    expect(all.resourceVersion).toMatch(/^\d+$/);
    const odd = await maps.list({ namespace, labelSelector: 'page,parity in (odd),!gone' });
    expect(odd.items.map((m) => m.metadata?.name)).toEqual(['cm-1', 'cm-3', 'cm-5']);
    const notEven = await maps.list({ namespace, labelSelector: 'page=yes,parity!=even' });
    expect(notEven.items).toHaveLength(3);
    const named = await maps.list({ namespace, fieldSelector: 'metadata.name=cm-4' });
    expect(named.items.map((m) => m.metadata?.name)).toEqual(['cm-4']);
  });

  it('watches from a resourceVersion: every change after it, in order', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    const from = (await widgets.list({ namespace })).resourceVersion;
    await widgets.create(widget(namespace, 'watched', { size: 1 }));
    await widgets.mergePatch({ namespace, name: 'watched' }, { spec: { size: 2 } });
    await widgets.delete({ namespace, name: 'watched' });
    const body = await client.stream({
      method: HttpMethod.GET,
      path: resourcePath(WIDGET, { namespace }),
      query: { watch: 'true', resourceVersion: from, timeoutSeconds: 1 },
    });
    let text = '';
    for await (const chunk of body) text += String(chunk);
    const events = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { type: string; object: Widget });
    expect(events.map((e) => `${e.type} ${e.object.spec?.size}`)).toEqual(['ADDED 1', 'MODIFIED 2', 'DELETED 2']);
  });

  it('an informer caches only objects matching its selectors; relabelling in and out adds and deletes', async () => {
    const { client, namespace } = api();
    const widgets = client.resource<Widget>(WIDGET);
    await widgets.create(widget(namespace, 'in-1', {}, { tier: 'a' }));
    await widgets.create(widget(namespace, 'out-1', {}, { tier: 'b' }));
    const informer = new Informer<Widget>(client, WIDGET, { namespace, labelSelector: 'tier=a', logger, pageSize: 1 });
    const events: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => events.push(`add ${o.metadata?.name}`),
      onUpdate: (_, o) => events.push(`update ${o.metadata?.name}`),
      onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
    });
    informer.start();
    try {
      await informer.waitForSync(10_000);
      expect(informer.keys()).toEqual([`${namespace}/in-1`]);
      await widgets.mergePatch({ namespace, name: 'out-1' }, { metadata: { labels: { tier: 'a' } } });
      await widgets.mergePatch({ namespace, name: 'in-1' }, { metadata: { labels: { tier: 'b' } } });
      await eventually('relabelled objects seen', () => events.length === 3);
      expect(events).toEqual(['add in-1', 'add out-1', 'delete in-1']);
      expect(informer.keys()).toEqual([`${namespace}/out-1`]);
    } finally {
      await informer.stop();
    }
    const byName = new Informer<Widget>(client, WIDGET, { namespace, fieldSelector: 'metadata.name=in-1', logger });
    byName.start();
    try {
      await byName.waitForSync(10_000);
      expect(byName.keys()).toEqual([`${namespace}/in-1`]);
    } finally {
      await byName.stop();
    }
  });

  it('refuses a PATCH without an explicit content type', async () => {
    const { client } = api();
    await expect(
      client.request({ method: 'PATCH', path: '/api/v1/namespaces/x/configmaps/y', body: {} }),
    ).rejects.toThrow(/content type must be given/);
  });
}
