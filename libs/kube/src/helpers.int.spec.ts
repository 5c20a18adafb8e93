import type { KubernetesObject } from '@kubernetes/client-node';
import { isConflict, StaleObjectError } from './errors.js';
import { EVENTS_V1, EventRecorder, type KubeEvent } from './event-recorder.js';
import { addFinalizer, hasFinalizer, isBeingDeleted, removeFinalizer } from './finalizers.js';
import { getControllerOf, setControllerReference, setOwnerReference } from './owner-references.js';
import { applyStatus, isStatusCurrent, patchStatus } from './status.js';
import { testLogger } from './testing/eventually.js';
import { CONFIG_MAPS } from './core-kinds.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';
import { widget, WIDGET, type Widget } from './testing/widget-crd.js';

describe('helpers on the real API server', () => {
  const env = useWidgetNamespace('kube-help', { fieldManager: 'capstan-test-service' });

  it('adds and removes finalizers without clobbering a concurrent writer', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const created = await widgets.create(widget(env.ns.name, 'fin'));
    const withOurs = await addFinalizer(widgets, created, 'capstan.dev/ours');
    expect(hasFinalizer(withOurs, 'capstan.dev/ours')).toBe(true);
    expect(await addFinalizer(widgets, withOurs, 'capstan.dev/ours')).toBe(withOurs);

    // Someone else adds theirs; our next write from the stale read must be refused, not overwrite it.
    await addFinalizer(widgets, withOurs, 'example.com/theirs');
    const stale = await addFinalizer(widgets, withOurs, 'capstan.dev/third').catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(StaleObjectError);
    expect(isConflict(stale)).toBe(true);
    // Same for a finalizer list created concurrently on an object that had none.
    const bare = await widgets.create(widget(env.ns.name, 'fin-bare'));
    await addFinalizer(widgets, bare, 'example.com/theirs');
    expect(
      isConflict(await addFinalizer(widgets, bare, 'capstan.dev/ours').catch((err: unknown) => err)),
    ).toBe(true);

    const fresh = await widgets.get({ namespace: env.ns.name, name: 'fin' });
    expect(fresh.metadata?.finalizers).toEqual(['capstan.dev/ours', 'example.com/theirs']);
    await widgets.delete({ namespace: env.ns.name, name: 'fin' });
    const deleting = await widgets.get({ namespace: env.ns.name, name: 'fin' });
    expect(isBeingDeleted(deleting)).toBe(true);
    const without = await removeFinalizer(widgets, deleting, 'capstan.dev/ours');
    expect(without.metadata?.finalizers).toEqual(['example.com/theirs']);
    // `theirs` moved from index 1 to 0: removing it by the stale read is refused, by a fresh read it works.
    expect(
      isConflict(await removeFinalizer(widgets, deleting, 'example.com/theirs').catch((err: unknown) => err)),
    ).toBe(true);
    await removeFinalizer(widgets, without, 'example.com/theirs');
    await expect(widgets.get({ namespace: env.ns.name, name: 'fin' })).rejects.toThrow(/404/);
  });

  it('writes status through the subresource with observedGeneration, under the service field manager', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const created = await widgets.create(widget(env.ns.name, 'st', { size: 1 }));
    expect(isStatusCurrent(created)).toBe(false);
    const applied = await applyStatus(widgets, created, { phase: 'Provisioning' });
    expect(applied.status).toEqual({ phase: 'Provisioning', observedGeneration: 1 });
    expect(isStatusCurrent(applied)).toBe(true);
    const statusManager = applied.metadata?.managedFields?.find((f) => f.subresource === 'status');
    expect(statusManager).toMatchObject({ manager: 'capstan-test-service', operation: 'Apply' });

    const bumped = await widgets.mergePatch({ namespace: env.ns.name, name: 'st' }, { spec: { size: 2 } });
    expect(bumped.metadata?.generation).toBe(2);
    expect(isStatusCurrent(bumped)).toBe(false);
    const patched = await patchStatus(widgets, bumped, { phase: 'Ready' }, { requireResourceVersion: true });
    expect(patched.status).toEqual({ phase: 'Ready', observedGeneration: 2 });
    // A conditional status patch from a stale read is refused.
    const stale = await patchStatus(
      widgets,
      bumped,
      { phase: 'Old' },
      { requireResourceVersion: true },
    ).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
  });

  it('sets controller and plain owner references the API server accepts', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const maps = env.client.resource(CONFIG_MAPS);
    const owner = await widgets.create(widget(env.ns.name, 'owner'));
    const other = await widgets.create(widget(env.ns.name, 'other'));
    const child: KubernetesObject = { metadata: { namespace: env.ns.name, name: 'owned' } };
    setControllerReference(owner, child);
    setOwnerReference(other, child);
    const created = await maps.create(child);
    expect(created.metadata?.ownerReferences).toHaveLength(2);
    expect(getControllerOf(created)).toMatchObject({
      kind: 'Widget',
      name: 'owner',
      uid: owner.metadata?.uid,
      blockOwnerDeletion: true,
    });
  });

  it('records events.k8s.io/v1 Events and counts repeats in a series', async () => {
    const widgets = env.client.resource<Widget>(WIDGET);
    const target = await widgets.create(widget(env.ns.name, 'evented'));
    const recorder = new EventRecorder({
      client: env.client,
      reportingController: 'capstan.dev/runtime-test',
      reportingInstance: 'test-1',
      logger: testLogger(),
    });
    const first = await recorder.event(target, {
      type: 'Normal',
      reason: 'Provisioned',
      action: 'Provision',
      note: 'widget provisioned with Bearer abcdefghijklmnop',
    });
    expect(first?.metadata?.name).toMatch(/^evented\./);
    await recorder.event(target, {
      type: 'Normal',
      reason: 'Provisioned',
      action: 'Provision',
      note: 'widget provisioned with Bearer abcdefghijklmnop',
    });
    const third = await recorder.event(target, {
      type: 'Normal',
      reason: 'Provisioned',
      action: 'Provision',
      note: 'widget provisioned with Bearer abcdefghijklmnop',
    });
    await recorder.event(target, {
      type: 'Warning',
      reason: 'Failed',
      action: 'Provision',
      note: 'no capacity',
    });
    expect(third?.series?.count).toBe(3);

    const events = (
      await env.client.resource<KubeEvent>(EVENTS_V1).list({ namespace: env.ns.name })
    ).items.filter((e) => e.regarding.uid === target.metadata?.uid);
    expect(events).toHaveLength(2);
    const provisioned = events.find((e) => e.reason === 'Provisioned')!;
    expect(provisioned).toMatchObject({
      type: 'Normal',
      action: 'Provision',
      reportingController: 'capstan.dev/runtime-test',
      reportingInstance: 'test-1',
      regarding: { kind: 'Widget', name: 'evented', namespace: env.ns.name },
      series: { count: 3 },
    });
    expect(provisioned.note).not.toContain('abcdefghijklmnop');
    expect(events.find((e) => e.reason === 'Failed')?.type).toBe('Warning');
  });
});
