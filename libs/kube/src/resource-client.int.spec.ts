import type { KubernetesObject } from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isInvalid, isNotFound, KubeApiError } from './errors.js';
import { CONFIG_MAPS } from './core-kinds.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('ResourceClient on the real API server', () => {
  const env = useWidgetNamespace('kube-rc');

  it('creates, gets, replaces with optimistic concurrency and deletes; errors are typed', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const created = await widgets.create(widget(env.ns.name, 'crud', { size: 1 }));
    expect(created.metadata?.uid).toBeTruthy();
    expect(isAlreadyExists(await rejection(widgets.create(widget(env.ns.name, 'crud'))))).toBe(true);

    const fetched = await widgets.get({ namespace: env.ns.name, name: 'crud' });
    const replaced = await widgets.replace({ ...fetched, spec: { size: 2 } });
    expect(replaced.spec?.size).toBe(2);
    // The first read's resourceVersion is stale now.
    const stale = widgets.replace({ ...fetched, spec: { size: 3 } });
    const conflict = await rejection(stale);
    expect(isConflict(conflict)).toBe(true);
    expect(conflict).toBeInstanceOf(KubeApiError);

    await widgets.delete({ namespace: env.ns.name, name: 'crud' });
    const missing = await rejection(widgets.get({ namespace: env.ns.name, name: 'crud' }));
    expect(isNotFound(missing)).toBe(true);
    expect(String(missing)).toMatch(/widgets\/crud: 404/);
  });

  it('patches with merge patch, JSON patch (a failed test op is refused with 422) and server-side apply', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'patch', { size: 1, note: 'a' }));
    const ref = { namespace: env.ns.name, name: 'patch' };

    const merged = await widgets.mergePatch(ref, { spec: { size: 5 } });
    expect(merged.spec).toEqual({ size: 5, note: 'a' });

    const patched = await widgets.jsonPatch(ref, [
      { op: 'test', path: '/spec/size', value: 5 },
      { op: 'replace', path: '/spec/note', value: 'b' },
    ]);
    expect(patched.spec?.note).toBe('b');
    const refused = widgets.jsonPatch(ref, [
      { op: 'test', path: '/spec/size', value: 4 },
      { op: 'replace', path: '/spec/note', value: 'c' },
    ]);
    const refusal = await rejection(refused);
    expect(isInvalid(refusal)).toBe(true);

    const applied = await widgets.apply({ metadata: ref, spec: { providerID: 'sim://patch' } } as Widget);
    expect(applied.spec).toEqual({ size: 5, note: 'b', providerID: 'sim://patch' });
    const managers = applied.metadata?.managedFields?.map((f) => `${f.manager}:${f.operation}`);
    expect(managers).toContain('runtime-test:Apply');
  });

  it('writes status only through the status subresource', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    await widgets.create(widget(env.ns.name, 'status', { size: 1 }));
    const ref = { namespace: env.ns.name, name: 'status' };
    // The main resource ignores status when the CRD has a status subresource.
    const ignored = await widgets.mergePatch(ref, { status: { phase: 'Nope' } });
    expect(ignored.status?.phase).toBeUndefined();
    const patched = await widgets.patchStatus(ref, { phase: 'Merged' });
    expect(patched.status?.phase).toBe('Merged');
    const applied = await widgets.applyStatus({ metadata: ref, status: { seen: 1 } } as Widget);
    expect(applied.status).toEqual({ phase: 'Merged', seen: 1 });
    expect(applied.metadata?.generation).toBe(1);
  });

  it('lists in pages and reaches core kinds the same way', async () => {
    const maps = env.client.resource<KubernetesObject & { data?: Record<string, string> }>(CONFIG_MAPS);
    for (let i = 0; i < 7; i++)
      await maps.create({
        metadata: { namespace: env.ns.name, name: `cm-${i}`, labels: { page: 'yes' } },
        data: { i: String(i) },
      });
    const first = await maps.list({ namespace: env.ns.name, labelSelector: 'page=yes', limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.continue).toBeTruthy();
    expect(first.items[0]?.kind).toBe('ConfigMap');
    const all = await maps.listAll({ namespace: env.ns.name, labelSelector: 'page=yes', pageSize: 3 });
    expect(all.items.map((m) => m.metadata?.name).sort()).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((i) => `cm-${i}`),
    );
    expect(all.resourceVersion).toMatch(/^\d+$/);
  });

  it('refuses a PATCH without an explicit content type', async () => {
    await expect(
      env.client.request({ method: 'PATCH', path: '/api/v1/namespaces/x/configmaps/y', body: {} }),
    ).rejects.toThrow(/content type must be given/);
  });
});
