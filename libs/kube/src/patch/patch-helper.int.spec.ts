import { jest } from '@jest/globals';
import { isConflict } from '../errors.js';
import { useWidgetNamespace } from '../testing/widget-namespace.js';
import { widget, WIDGET, type Widget } from '../testing/widget-crd.js';
import { OwnWrites } from './own-writes.js';
import { PatchHelper } from './patch-helper.js';

interface TestCondition {
  type: string;
  status: string;
  reason: string;
}

const condition = (type: string, status: string, reason = type): TestCondition => ({ type, status, reason });
const conditionsOf = (w: Widget) => (w.status?.conditions ?? []) as TestCondition[];

describe('PatchHelper on the real API server', () => {
  const env = useWidgetNamespace('kube-patch');
  const widgets = () => env.client.resource<Widget>(WIDGET);

  it('sends nothing when nothing changed, and metadata, spec and status when they did', async () => {
    const created = await widgets().create(widget(env.ns.name, 'all', { size: 1 }));
    const resources = widgets();
    const requests = jest.spyOn(resources.client, 'request');
    const unchanged = new PatchHelper(resources, created);
    expect(await unchanged.patch(unchanged.draft())).toEqual(created);
    expect(requests).not.toHaveBeenCalled();

    const helper = new PatchHelper(widgets(), created);
    const draft = helper.draft();
    draft.metadata!.labels = { tier: 'gold' };
    draft.metadata!.finalizers = ['capstan.dev/test'];
    draft.spec = { ...draft.spec, size: 3 };
    draft.status = { phase: 'Running', conditions: [condition('Ready', 'True')] };
    const written = await helper.patch(draft);
    const fresh = await widgets().get({ namespace: env.ns.name, name: 'all' });
    expect(written.metadata?.resourceVersion).toBe(fresh.metadata?.resourceVersion);
    expect(fresh.metadata?.labels).toEqual({ tier: 'gold' });
    expect(fresh.metadata?.finalizers).toEqual(['capstan.dev/test']);
    expect(fresh.spec?.size).toBe(3);
    expect(fresh.status).toEqual({ phase: 'Running', conditions: [condition('Ready', 'True')] });

    // A field the reconcile removed goes away; the next patch diffs against what was written.
    const next = new PatchHelper(widgets(), written);
    const removal = next.draft();
    delete removal.status!.phase;
    delete removal.metadata!.finalizers;
    const removed = await next.patch(removal);
    expect(removed.status?.phase).toBeUndefined();
    expect(removed.metadata?.finalizers).toBeUndefined();
    expect(await next.patch(next.draft())).toEqual(removed);
  });

  it('writes no status after removing the last finalizer of a deleted object (it is gone)', async () => {
    await widgets().create({
      ...widget(env.ns.name, 'finalized', { size: 1 }),
      metadata: { name: 'finalized', namespace: env.ns.name, finalizers: ['capstan.dev/test'] },
    });
    await widgets().delete({ namespace: env.ns.name, name: 'finalized' });
    const deleting = await widgets().get({ namespace: env.ns.name, name: 'finalized' });
    const helper = new PatchHelper(widgets(), deleting);
    const draft = helper.draft();
    draft.metadata!.finalizers = [];
    draft.status = { phase: 'Deleted' };
    const written = await helper.patch(draft);
    expect(written.metadata?.finalizers ?? []).toEqual([]);
    await expect(widgets().get({ namespace: env.ns.name, name: 'finalized' })).rejects.toThrow(/404/);
  });

  it('stamps a status computed for the spec it writes with the generation that spec write made', async () => {
    const created = await widgets().create(widget(env.ns.name, 'gen', { size: 1 }));
    const helper = new PatchHelper(widgets(), created);
    const draft = helper.draft();
    draft.spec = { ...draft.spec, providerID: 'sim://x' };
    draft.status = {
      observedGeneration: created.metadata!.generation,
      conditions: [{ ...condition('Ready', 'True'), observedGeneration: created.metadata!.generation } as TestCondition],
    };
    const written = await helper.patch(draft);
    expect(written.metadata?.generation).toBe(2);
    expect(written.status?.observedGeneration).toBe(2);
    expect((written.status?.conditions as { observedGeneration?: number }[])[0]?.observedGeneration).toBe(2);
  });

  it('refuses a metadata or spec write made from a stale read (the reconcile starts over)', async () => {
    const created = await widgets().create(widget(env.ns.name, 'stale', { size: 1 }));
    await widgets().mergePatch({ namespace: env.ns.name, name: 'stale' }, { metadata: { finalizers: ['x/theirs'] } });
    const helper = new PatchHelper(widgets(), created);
    const draft = helper.draft();
    draft.metadata!.finalizers = ['capstan.dev/ours'];
    const error = await helper.patch(draft).catch((err: unknown) => err);
    expect(isConflict(error)).toBe(true);
    const fresh = await widgets().get({ namespace: env.ns.name, name: 'stale' });
    expect(fresh.metadata?.finalizers).toEqual(['x/theirs']);
  });

  it("merges status written from a stale read: another owner's conditions and fields are kept", async () => {
    const created = await widgets().create(widget(env.ns.name, 'merge'));
    const seeded = await widgets().mergePatch(
      { namespace: env.ns.name, name: 'merge' },
      { status: { phase: 'Provisioning', conditions: [condition('Ready', 'False'), condition('Health', 'True')] } },
      { subresource: 'status' },
    );
    expect(seeded.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
    const ours = new PatchHelper(widgets(), seeded, { ownedConditions: ['Ready'] });
    // Meanwhile a health checker changes its own condition and a field the reconcile does not touch.
    const theirs = new PatchHelper(widgets(), seeded, { ownedConditions: ['Health'] });
    const theirDraft = theirs.draft();
    theirDraft.status!.conditions = [condition('Ready', 'False'), condition('Health', 'False', 'Unhealthy')];
    theirDraft.status!.seen = 7;
    await theirs.patch(theirDraft);

    const draft = ours.draft();
    draft.status = {
      ...draft.status,
      phase: 'Running',
      conditions: [condition('Ready', 'True'), condition('Health', 'True')],
    };
    const ownWrites = new OwnWrites();
    const written = await new PatchHelper(widgets(), seeded, { ownedConditions: ['Ready'], ownWrites }).patch(draft);
    expect(written.status?.phase).toBe('Running');
    expect(written.status?.seen).toBe(7);
    expect(conditionsOf(written)).toEqual([condition('Ready', 'True'), condition('Health', 'False', 'Unhealthy')]);
    expect(ownWrites.isOwn(written)).toBe(true);
  });

  it('leaves every version its writes replaced stale, the one between its spec and its status write included', async () => {
    const created = await widgets().create(widget(env.ns.name, 'chain', { size: 1 }));
    const resources = widgets();
    const patches = jest.spyOn(resources, 'mergePatch');
    const ownWrites = new OwnWrites();
    const helper = new PatchHelper(resources, created, { ownWrites });
    const draft = helper.draft();
    draft.spec = { ...draft.spec, size: 2 };
    draft.status = { phase: 'Running' };
    const written = await helper.patch(draft);
    expect(patches).toHaveBeenCalledTimes(2);
    const between = ((await patches.mock.results[0]!.value) as Widget).metadata!.resourceVersion;
    const key = `${env.ns.name}/chain`;
    // A cache that shows the spec write but not yet the status write is as outdated as one that shows neither.
    expect(ownWrites.isStale(key, between)).toBe(true);
    expect(ownWrites.isStale(key, created.metadata!.resourceVersion)).toBe(true);
    expect(ownWrites.isStale(key, written.metadata!.resourceVersion)).toBe(false);
  });

  it("never deletes another owner's condition that its computed status lacks", async () => {
    await widgets().create(widget(env.ns.name, 'keep'));
    const seeded = await widgets().mergePatch(
      { namespace: env.ns.name, name: 'keep' },
      { status: { conditions: [condition('Ready', 'False'), condition('Health', 'True')] } },
      { subresource: 'status' },
    );
    const ours = new PatchHelper(widgets(), seeded, { ownedConditions: ['Ready'] });
    const draft = ours.draft();
    draft.status = { conditions: [condition('Ready', 'True')] };
    const written = await ours.patch(draft);
    expect(conditionsOf(written)).toEqual([condition('Ready', 'True'), condition('Health', 'True')]);
    // Its owner can remove it.
    const owner = new PatchHelper(widgets(), written, { ownedConditions: ['Health'] });
    const removal = owner.draft();
    removal.status = { conditions: [condition('Ready', 'True')] };
    expect(conditionsOf(await owner.patch(removal))).toEqual([condition('Ready', 'True')]);
  });

  it('is a conflict when both changed the same field or a condition it does not own', async () => {
    const created = await widgets().create(widget(env.ns.name, 'collide'));
    const seeded = await widgets().mergePatch(
      { namespace: env.ns.name, name: 'collide' },
      { status: { phase: 'A', conditions: [condition('Health', 'True')] } },
      { subresource: 'status' },
    );
    expect(created.metadata?.name).toBe('collide');
    await widgets().mergePatch(
      { namespace: env.ns.name, name: 'collide' },
      { status: { phase: 'B', conditions: [condition('Health', 'False')] } },
      { subresource: 'status' },
    );
    const field = new PatchHelper(widgets(), seeded);
    const fieldDraft = field.draft();
    fieldDraft.status!.phase = 'C';
    expect(isConflict(await field.patch(fieldDraft).catch((err: unknown) => err))).toBe(true);

    const foreign = new PatchHelper(widgets(), seeded, { ownedConditions: ['Ready'] });
    const foreignDraft = foreign.draft();
    foreignDraft.status!.conditions = [condition('Health', 'Unknown')];
    expect(isConflict(await foreign.patch(foreignDraft).catch((err: unknown) => err))).toBe(true);

    // Owning the condition, the reconcile's value wins.
    const owner = new PatchHelper(widgets(), seeded, { ownedConditions: ['Health'] });
    const ownerDraft = owner.draft();
    ownerDraft.status!.conditions = [condition('Health', 'Unknown')];
    const written = await owner.patch(ownerDraft);
    expect(conditionsOf(written)).toEqual([condition('Health', 'Unknown')]);
    expect(written.status?.phase).toBe('B');
  });
});
