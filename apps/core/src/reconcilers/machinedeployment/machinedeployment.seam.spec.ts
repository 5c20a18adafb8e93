import {
  ANNOTATIONS,
  FINALIZERS,
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { getControllerOf, Informer, isNotFound, type ResourceClient } from '@capstan/kube';
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import { eventually as pollUntil } from '@capstan/testing';
import {
  createReadyCluster,
  createTemplates,
  machineTemplate,
  MachinePlayer,
  type PlayerOptions,
} from '../../testing/workload-env.js';
import { MACHINE_DEPLOYMENT_CONTROLLER } from './machinedeployment.controller.js';
import { REVISION_HISTORY_LIMIT } from './machinedeployment.reconciler.js';

// The MachineDeployment's orchestration on the in-memory API server, with the MachineSet controller it drives. The
// tests play the Machine controller (MachinePlayer) and the users, and assert what a user sees through the API: the
// sets, their replicas and annotations, the Machines, the deployment's status. Every test's deployment is `md`.

const CLUSTER = 'demo';
/** A finalizer of the test's own: keeps a deleted Machine (and so its set) around while the test looks. */
const HOLD = 'test.capstan.dev/hold';
type Rollout = MachineDeployment['spec']['rollout'];

/** Polls `probe` until it returns a value (not false or undefined); fails with what it waited for. */
const eventually = <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 5_000,
) => pollUntil(probe, { message: what, timeoutMs, intervalMs: 25 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isAvailable = (m: Machine) =>
  !m.metadata.deletionTimestamp &&
  m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;
const revisionOf = (o: KubernetesObject) => o.metadata?.annotations?.[ANNOTATIONS.revision];
const templateOf = (ms: MachineSet) => ms.spec.template.spec.infrastructureRef.name;
const nameOf = (o: KubernetesObject) => o.metadata!.name!;
const createdAt = (o: KubernetesObject) => new Date(o.metadata!.creationTimestamp!).getTime();
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const condition = (md: MachineDeployment, type: string) =>
  md.status?.conditions?.find((c) => c.type === type);
const conditionsOf = (md: MachineDeployment) =>
  Object.fromEntries((md.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
const uids = (list: readonly KubernetesObject[]) => list.map((o) => o.metadata!.uid!).sort();
const common = (a: readonly KubernetesObject[], b: readonly KubernetesObject[]) =>
  uids(a).filter((u) => uids(b).includes(u));
const rolling = (maxSurge: number | string, maxUnavailable: number | string): Rollout => ({
  strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } },
});

describe('MachineDeployment controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  let deployments: ResourceClient<MachineDeployment>;
  let sets: ResourceClient<MachineSet>;
  let machines: ResourceClient<Machine>;
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    bed = await startInMemoryWorkload();
    deployments = bed.client.resource<MachineDeployment>(RESOURCES.MachineDeployment);
    sets = bed.client.resource<MachineSet>(RESOURCES.MachineSet);
    machines = bed.client.resource<Machine>(RESOURCES.Machine);
    await createReadyCluster(bed, CLUSTER);
    for (const template of ['v1', 'v2', 'v3']) await createTemplates(bed, template);
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await bed.stop();
  });

  const ns = () => bed.ns.name;
  /** Plays the Machine controller: Machines become Available after 20 ms (never, with availableAfterMs undefined). */
  const play = async (options: Partial<PlayerOptions> = {}) => {
    const player = await new MachinePlayer(bed, {
      availableAfterMs: 20,
      releaseAfterMs: 20,
      ...options,
    }).start();
    stops.push(() => player.stop());
    return player;
  };
  const create = (replicas: number, spec: Partial<MachineDeployment['spec']> = {}, annotations = {}) =>
    deployments.create({
      apiVersion: RESOURCES.MachineDeployment.apiVersion,
      kind: RESOURCES.MachineDeployment.kind,
      metadata: { name: 'md', namespace: ns(), annotations },
      spec: {
        clusterName: CLUSTER,
        replicas,
        selector: { matchLabels: { pool: 'md' } },
        template: machineTemplate(CLUSTER, 'v1', { pool: 'md' }),
        ...spec,
      },
    } as MachineDeployment);
  const get = () => deployments.get({ namespace: ns(), name: 'md' });
  const patch = (body: Record<string, unknown>) =>
    deployments.mergePatch({ namespace: ns(), name: 'md' }, body);
  const useTemplate = (name: string) =>
    patch({
      spec: { template: { spec: { infrastructureRef: { name }, bootstrap: { configRef: { name } } } } },
    });
  /** The sets the deployment controls, oldest revision first. */
  const setsOf = async () => {
    const md = await get();
    return (await sets.list({ namespace: ns() })).items
      .filter((ms) => getControllerOf(ms)?.uid === md.metadata.uid)
      .sort((a, b) => Number(revisionOf(a) ?? 0) - Number(revisionOf(b) ?? 0));
  };
  const machinesOfSet = async (ms: MachineSet) =>
    (await machines.list({ namespace: ns() })).items.filter(
      (m) => getControllerOf(m)?.uid === ms.metadata.uid,
    );
  /** The deployment's Machines: those its selector (the `pool` label) matches. */
  const machinesOf = async () =>
    (await machines.list({ namespace: ns() })).items.filter((m) => m.metadata.labels?.['pool'] === 'md');
  const generationSeen = () =>
    eventually('the new generation seen', async () => {
      const md = await get();
      return md.status?.observedGeneration === md.metadata.generation;
    });
  /** `replicas` Available Machines, all in the latest set running `template`, and the deployment's status says so. */
  const rolledOut = (replicas: number, template: string) =>
    eventually(
      `rolled out to ${replicas} x ${template}`,
      async () => {
        const md = await get();
        const owned = await setsOf();
        const current = owned.filter((ms) => templateOf(ms) === template).at(-1);
        const all = await machinesOf();
        const ok =
          current !== undefined &&
          all.length === replicas &&
          all.every((m) => getControllerOf(m)?.uid === current.metadata.uid && isAvailable(m)) &&
          md.status?.replicas === replicas &&
          md.status.availableReplicas === replicas &&
          md.status.upToDateReplicas === replicas &&
          md.status.observedGeneration === md.metadata.generation;
        return ok ? { md, sets: owned, current, machines: all } : false;
      },
      8_000,
    );
  /** Reconciles the deployment now, twice over, so that one reconcile surely started after this call. */
  const reconcileNow = async () => {
    const key = `${ns()}/md`;
    for (let round = 0; round < 2; round++) {
      const finished = new Promise<boolean>((resolve) => {
        const off = bed.host.controllers.onReconciled((f) => {
          if (f.controller !== MACHINE_DEPLOYMENT_CONTROLLER || f.key !== key) return;
          off();
          resolve(f.failed);
        });
      });
      expect(bed.host.controllers.enqueue(MACHINE_DEPLOYMENT_CONTROLLER, key)).toBe(true);
      if (await finished) {
        const status = bed.host.controllers.status().find((c) => c.name === MACHINE_DEPLOYMENT_CONTROLLER);
        throw new Error(`the reconcile failed: ${status?.lastError?.message}`);
      }
    }
  };
  /** Starts a watch of the namespace's objects of a kind; `handler` hears every change, from a full cache on. */
  const watch = async <T extends KubernetesObject>(
    informer: Informer<T>,
    handler: (obj: T, gone: boolean) => void,
  ) => {
    informer.start();
    stops.push(() => informer.stop());
    await informer.waitForSync(2_000);
    const changed = (obj: T) => handler(obj, false);
    informer.addEventHandler({
      onAdd: changed,
      onUpdate: (_old, obj) => changed(obj),
      onDelete: (obj) => handler(obj, true),
    });
  };
  /** Every state of the deployment the watches delivered from now on: Machines, Available ones, sets' replicas. */
  const sample = async () => {
    const moments: { total: number; available: number; setReplicas: number }[] = [];
    const machineCache = new Informer<Machine>(bed.client, RESOURCES.Machine, { namespace: ns() });
    const setCache = new Informer<MachineSet>(bed.client, RESOURCES.MachineSet, { namespace: ns() });
    const record = () => {
      const mine = machineCache.list().filter((m) => m.metadata.labels?.['pool'] === 'md');
      moments.push({
        total: mine.length,
        available: mine.filter(isAvailable).length,
        setReplicas: setCache.list().reduce((sum, ms) => sum + (ms.spec.replicas ?? 1), 0),
      });
    };
    await watch(machineCache, record);
    await watch(setCache, record);
    return moments;
  };
  /** Puts or takes the test's hold finalizer on a Machine (read fresh, written at that resourceVersion). */
  const hold = (machine: Machine, on: boolean) =>
    eventually(`${on ? 'hold' : 'release'} ${nameOf(machine)}`, async () => {
      const current = await machines.get({ namespace: ns(), name: nameOf(machine) });
      const others = (current.metadata.finalizers ?? []).filter((f) => f !== HOLD);
      const finalizers = on ? [...others, HOLD] : others;
      const metadata = { finalizers, resourceVersion: current.metadata.resourceVersion };
      await machines.mergePatch({ namespace: ns(), name: nameOf(machine) }, { metadata });
      return true;
    });

  const firstSets: [string, number, Rollout, string][] = [
    // strategy, replicas, rollout, max-replicas annotation (replicas + maxSurge)
    ['the default strategy', 3, undefined, '4'],
    ['maxSurge 50%', 2, rolling('50%', 0), '3'],
    ['OnDelete', 2, { strategy: { type: 'OnDelete' } }, '2'],
    ['no replicas', 0, undefined, '1'],
  ];
  it.each(firstSets)(
    'creates its first MachineSet, owned, hashed and sized (%s)',
    async (_, replicas, rollout, max) => {
      await play();
      const created = await create(replicas, rollout ? { rollout } : {}, { 'example.com/note': 'copied' });
      const { md, sets: owned, current, machines: all } = await rolledOut(replicas, 'v1');

      expect(owned).toHaveLength(1);
      const hash = current.metadata.labels?.[LABELS.machineTemplateHash];
      expect(hash).toMatch(/^[0-9a-f]{10}$/);
      expect(nameOf(current)).toBe(`md-${hash}`);
      expect(current.metadata.labels).toEqual({
        pool: 'md',
        [LABELS.machineTemplateHash]: hash,
        [LABELS.deploymentName]: 'md',
        [LABELS.clusterName]: CLUSTER,
      });
      expect(current.spec.selector.matchLabels).toEqual({ pool: 'md', [LABELS.machineTemplateHash]: hash });
      expect(current.spec.template.metadata?.labels).toEqual({
        pool: 'md',
        [LABELS.machineTemplateHash]: hash,
      });
      expect(current.metadata.ownerReferences).toEqual([
        {
          apiVersion: RESOURCES.MachineDeployment.apiVersion,
          kind: 'MachineDeployment',
          name: 'md',
          uid: created.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(current.spec.replicas).toBe(replicas);
      expect(current.metadata.annotations).toEqual({
        'example.com/note': 'copied',
        [ANNOTATIONS.revision]: '1',
        [ANNOTATIONS.desiredReplicas]: String(replicas),
        [ANNOTATIONS.maxReplicas]: max,
      });
      expect(all.map((m) => m.metadata.labels?.[LABELS.machineTemplateHash])).toEqual(all.map(() => hash));
      // The deployment: its finalizer, its Cluster's label and ownership, the revision it runs.
      expect(md.metadata.finalizers).toContain(FINALIZERS.machineDeployment);
      expect(md.metadata.labels?.[LABELS.clusterName]).toBe(CLUSTER);
      expect(md.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([`Cluster/${CLUSTER}`]);
      expect(revisionOf(md)).toBe('1');
    },
  );

  it('writes nothing once converged, however often it reconciles', async () => {
    await play();
    await create(2);
    await rolledOut(2, 'v1');
    await reconcileNow();
    const versions = async () =>
      Object.fromEntries(
        [await get(), ...(await setsOf()), ...(await machinesOf())].map((o) => [
          `${o.kind}/${nameOf(o)}`,
          o.metadata.resourceVersion,
        ]),
      );
    const before = await versions();
    expect(Object.keys(before)).toHaveLength(4);
    expect(bed.host.controllers.resyncAll()).toBeGreaterThan(0);
    await reconcileNow();
    await sleep(100);
    expect(await versions()).toEqual(before);
  });

  const rollingUpdates: [number, number | string, number | string, number, number][] = [
    // replicas, maxSurge, maxUnavailable, at most this many Machines (and set replicas), at least this many Available
    [3, 1, 0, 4, 3],
    [4, 0, '50%', 4, 2],
    [3, 2, 1, 5, 2],
    [4, '25%', '25%', 5, 3],
  ];
  it.each(rollingUpdates)(
    'rolls a new template out to %i replicas within maxSurge %s and maxUnavailable %s at every step',
    async (replicas, maxSurge, maxUnavailable, most, fewest) => {
      await play();
      await create(replicas, { rollout: rolling(maxSurge, maxUnavailable) });
      const first = await rolledOut(replicas, 'v1');
      const moments = await sample();
      await useTemplate('v2');
      const done = await rolledOut(replicas, 'v2');

      // Every Machine was replaced, and the watch saw each step.
      expect(common(done.machines, first.machines)).toEqual([]);
      expect(moments.length).toBeGreaterThan(3 * replicas);
      expect(Math.max(...moments.map((m) => m.total))).toBeLessThanOrEqual(most);
      expect(Math.min(...moments.map((m) => m.available))).toBeGreaterThanOrEqual(fewest);
      // The surge was used, never more: the sets' replicas summed to replicas + maxSurge at the most.
      expect(Math.max(...moments.map((m) => m.setReplicas))).toBe(most);
      // The old set is kept, at zero, as history; the new one is revision 2, sized for this deployment.
      expect(done.sets.map((ms) => [nameOf(ms), ms.spec.replicas])).toEqual([
        [nameOf(first.current), 0],
        [nameOf(done.current), replicas],
      ]);
      expect(done.current.metadata.annotations).toMatchObject({
        [ANNOTATIONS.revision]: '2',
        [ANNOTATIONS.desiredReplicas]: String(replicas),
        [ANNOTATIONS.maxReplicas]: String(most),
      });
      expect(revisionOf(done.md)).toBe('2');
      expect(conditionsOf(done.md)).toMatchObject({
        RollingOut: 'False/NotRollingOut',
        MachinesUpToDate: 'True/UpToDate',
      });
    },
  );

  it('with OnDelete makes the new set but replaces an old Machine only once a user deletes it', async () => {
    await play();
    await create(2, { rollout: { strategy: { type: 'OnDelete' } } });
    const first = await rolledOut(2, 'v1');
    const moments = await sample();
    await useTemplate('v2');
    const [old, fresh] = await eventually('the new set', async () => {
      const owned = await setsOf();
      return owned.length === 2 && owned;
    });
    expect([templateOf(old!), templateOf(fresh!), fresh!.spec.replicas, revisionOf(fresh!)]).toEqual([
      'v1',
      'v2',
      0,
      '2',
    ]);
    await eventually('RollingOut reported', async () => {
      const md = await get();
      expect(condition(md, 'RollingOut')).toMatchObject({
        status: 'True',
        message: 'Rolling out 2 not up-to-date replicas',
      });
      return md.status?.upToDateReplicas === 0;
    });
    await sleep(200);
    expect(await machinesOfSet(fresh!)).toHaveLength(0);
    const oldMachines = await machinesOfSet(old!);
    expect(uids(oldMachines)).toEqual(uids(first.machines));

    await machines.delete({ namespace: ns(), name: nameOf(oldMachines[0]!) });
    await eventually('one Machine replaced', async () => {
      const replicas = await Promise.all(
        [old, fresh].map((ms) => sets.get({ namespace: ns(), name: nameOf(ms!) })),
      );
      expect(replicas.map((ms) => ms.spec.replicas)).toEqual([1, 1]);
      expect((await machinesOfSet(fresh!)).filter(isAvailable)).toHaveLength(1);
      expect(uids(await machinesOfSet(old!))).toEqual(uids([oldMachines[1]!]));
      return true;
    });
    await machines.delete({ namespace: ns(), name: nameOf(oldMachines[1]!) });
    await rolledOut(2, 'v2');
    // OnDelete never surges: not one Machine above spec.replicas, deleting ones included.
    expect(Math.max(...moments.map((m) => m.total))).toBe(2);
  });

  it.each([
    [2, 4],
    [3, 1],
    [2, 0],
  ])('scales its one set from %i to %i replicas without a rollout', async (from, to) => {
    await play();
    await create(from);
    const before = await rolledOut(from, 'v1');
    await patch({ spec: { replicas: to } });
    const after = await rolledOut(to, 'v1');
    expect(after.sets.map(nameOf)).toEqual([nameOf(before.current)]);
    expect(after.current.metadata.annotations).toMatchObject({
      [ANNOTATIONS.revision]: '1',
      [ANNOTATIONS.desiredReplicas]: String(to),
      [ANNOTATIONS.maxReplicas]: String(to + 1),
    });
    // The Machines that stay are the ones it had: a scale replaces none.
    expect(common(after.machines, before.machines)).toHaveLength(Math.min(from, to));
  });

  it('mid-rollout, scales each set in proportion, and reports the stalled rollout', async () => {
    let comesUp = true;
    const player = await play({ comesUp: () => comesUp });
    await create(4);
    const first = await rolledOut(4, 'v1');
    // The new template's Machines do not come up by themselves: the rollout stalls at its surge.
    comesUp = false;
    await useTemplate('v2');
    const stalled = await eventually('the rollout stalled at its surge', async () => {
      const md = await get();
      const owned = await setsOf();
      expect(owned.map((ms) => ms.spec.replicas)).toEqual([4, 1]);
      expect(md.status).toMatchObject({
        replicas: 5,
        readyReplicas: 4,
        availableReplicas: 4,
        upToDateReplicas: 1,
      });
      expect(conditionsOf(md)).toMatchObject({
        Available: 'True/Available',
        RollingOut: 'True/RollingOut',
        ScalingUp: 'False/NotScalingUp',
        ScalingDown: 'True/ScalingDown',
        MachinesUpToDate: 'False/NotUpToDate',
      });
      expect(condition(md, 'RollingOut')?.message).toBe('Rolling out 4 not up-to-date replicas');
      expect(condition(md, 'ScalingDown')?.message).toBe('Scaling down from 5 to 4 replicas');
      return owned;
    });
    expect(nameOf(stalled[0]!)).toBe(nameOf(first.current));

    // 4 + 1, each sized for max-replicas 5, down to 2 (+1 surge): 4 * 3/5 rounds to 2, 1 * 3/5 to 1.
    await patch({ spec: { replicas: 2 } });
    await eventually('both sets scaled for 2 replicas', async () => {
      const owned = await setsOf();
      expect(owned.map((ms) => ms.spec.replicas)).toEqual([2, 1]);
      for (const ms of owned) {
        expect(ms.metadata.annotations).toMatchObject({
          [ANNOTATIONS.desiredReplicas]: '2',
          [ANNOTATIONS.maxReplicas]: '3',
        });
      }
      return (await machinesOfSet(owned[0]!)).length === 2;
    });
    // No room to surge, no Available Machine to spare: nothing moves until the new Machine is up.
    await sleep(200);
    expect((await setsOf()).map((ms) => ms.spec.replicas)).toEqual([2, 1]);
    comesUp = true;
    for (const m of await machinesOfSet(stalled[1]!)) await player.makeAvailable(m);
    await rolledOut(2, 'v2');
  });

  it('rolls nothing out while spec.paused, yet reports, and rolls out once resumed', async () => {
    await play();
    await create(2);
    const first = await rolledOut(2, 'v1');
    await patch({ spec: { paused: true } });
    await useTemplate('v2');
    await generationSeen();
    // No Machine runs the template now, and the status says so.
    const md = await get();
    expect(md.status?.upToDateReplicas).toBe(0);
    expect(condition(md, 'RollingOut')).toMatchObject({
      status: 'True',
      message: 'Rolling out 2 not up-to-date replicas',
    });
    await sleep(200);
    expect((await setsOf()).map(nameOf)).toEqual([nameOf(first.current)]);
    expect(uids(await machinesOf())).toEqual(uids(first.machines));
    await patch({ spec: { paused: false } });
    const done = await rolledOut(2, 'v2');
    expect(nameOf(done.current)).not.toBe(nameOf(first.current));
  });

  it.each([
    ['its Cluster is paused', 'cluster', 'Cluster spec.paused is set to true'],
    [
      'it has the paused annotation',
      'annotation',
      `MachineDeployment has the ${ANNOTATIONS.paused} annotation`,
    ],
  ])('does nothing but say Paused while %s', async (_, how, message) => {
    await play();
    await create(2);
    const first = await rolledOut(2, 'v1');
    const clusters = bed.client.resource<Cluster>(RESOURCES.Cluster);
    const pause = (on: boolean) =>
      how === 'cluster'
        ? clusters.mergePatch({ namespace: ns(), name: CLUSTER }, { spec: { paused: on } })
        : patch({ metadata: { annotations: { [ANNOTATIONS.paused]: on ? '' : null } } });
    await pause(true);
    const paused = await eventually('Paused', async () => {
      const md = await get();
      return condition(md, 'Paused')?.status === 'True' && md;
    });
    expect(condition(paused, 'Paused')).toMatchObject({ reason: 'Paused', message });
    await useTemplate('v2');
    await patch({ spec: { replicas: 3 } });
    await sleep(200);
    // Not a set, a Machine nor its status moved: it did not look at its new generations.
    expect((await setsOf()).map((ms) => [nameOf(ms), ms.spec.replicas])).toEqual([
      [nameOf(first.current), 2],
    ]);
    expect(uids(await machinesOf())).toEqual(uids(first.machines));
    const md = await get();
    expect(md.status?.observedGeneration).toBeLessThan(md.metadata.generation!);
    await pause(false);
    await rolledOut(3, 'v2');
    expect(conditionsOf(await get())).toMatchObject({ Paused: 'False/NotPaused' });
  });

  const afters: [string, (created: number) => number, 'never' | 'now' | 'when due'][] = [
    // Creation timestamps have whole seconds: a time after the set's creation is a whole second later.
    ['before its set was created: no rollout', (created) => created - 60_000, 'never'],
    ['past, after its set was created: one rollout', (created) => created + 1000, 'now'],
    [
      'still ahead: one rollout when it comes, unasked',
      () => Math.ceil((Date.now() + 800) / 1000) * 1000,
      'when due',
    ],
  ];
  it.each(afters)('with rollout.after %s', async (_, at, rollsOut) => {
    await play();
    await create(1);
    const first = await rolledOut(1, 'v1');
    const after = at(createdAt(first.current));
    if (rollsOut === 'now') await eventually('the clock past rollout.after', () => Date.now() > after, 2_000);
    await patch({ spec: { rollout: { after: rfc3339(after) } } });
    await generationSeen();
    if (rollsOut !== 'now') {
      if (rollsOut === 'when due') expect(Date.now()).toBeLessThan(after);
      else await sleep(200);
      expect((await setsOf()).map(nameOf)).toEqual([nameOf(first.current)]);
    }
    if (rollsOut === 'never') return;
    // Its own requeue brings the deployment back when a rollout.after ahead comes.
    const done = await eventually(
      'a new set for rollout.after',
      async () => {
        const state = await rolledOut(1, 'v1');
        return nameOf(state.current) !== nameOf(first.current) && state;
      },
      8_000,
    );
    expect(createdAt(done.current)).toBeGreaterThanOrEqual(after);
    expect(done.current.metadata.labels?.[LABELS.machineTemplateHash]).not.toBe(
      first.current.metadata.labels?.[LABELS.machineTemplateHash],
    );
    expect(common(done.machines, first.machines)).toEqual([]);
    // Once: the set it made stays the current one.
    await reconcileNow();
    expect((await setsOf()).map(nameOf)).toEqual([nameOf(first.current), nameOf(done.current)]);
  });

  it('keeps one old set as history, deletes older ones, and rolls back to the kept one', async () => {
    await play();
    await create(1);
    const v1 = await rolledOut(1, 'v1');
    await useTemplate('v2');
    const v2 = await rolledOut(1, 'v2');
    await useTemplate('v3');
    const v3 = await rolledOut(1, 'v3');
    const history = await eventually('the oldest set deleted', async () => {
      const owned = await setsOf();
      return owned.length === 1 + REVISION_HISTORY_LIMIT && owned;
    });
    expect(history.map((ms) => [nameOf(ms), ms.spec.replicas, revisionOf(ms)])).toEqual([
      [nameOf(v2.current), 0, '2'],
      [nameOf(v3.current), 1, '3'],
    ]);
    expect((await sets.list({ namespace: ns() })).items.map(nameOf)).not.toContain(nameOf(v1.current));

    // Back to v2: its set is taken up again as the latest revision; no set is made.
    await useTemplate('v2');
    const back = await rolledOut(1, 'v2');
    expect(nameOf(back.current)).toBe(nameOf(v2.current));
    expect([revisionOf(back.current), revisionOf(back.md)]).toEqual(['4', '4']);
    expect(back.sets.map((ms) => [nameOf(ms), ms.spec.replicas])).toEqual([
      [nameOf(v3.current), 0],
      [nameOf(v2.current), 1],
    ]);
  });

  const controlled: V1OwnerReference = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'x',
    uid: 'x',
    controller: true,
  };
  const named = { pool: 'md', [LABELS.deploymentName]: 'md' };
  const orphans: [string, Record<string, string>, string, V1OwnerReference[], boolean][] = [
    // the set..., its labels, clusterName, ownerReferences, adopted
    ['carries its name label: adopted', named, CLUSTER, [], true],
    ['is selected, without the label: adopted', { pool: 'md' }, CLUSTER, [], true],
    ['belongs to another cluster: left', named, 'elsewhere', [], false],
    ['is not selected: left', { ...named, pool: 'other' }, CLUSTER, [], false],
    ['has a controller already: left', named, CLUSTER, [controlled], false],
  ];
  it.each(orphans)(
    'an orphan MachineSet that %s',
    async (_, labels, clusterName, ownerReferences, adopted) => {
      await play();
      const created = await create(1);
      const first = await rolledOut(1, 'v1');
      // A set of an older revision, as a backup would restore it: with its template hash.
      const hashed = { pool: labels['pool']!, [LABELS.machineTemplateHash]: 'restored' };
      await sets.create({
        apiVersion: RESOURCES.MachineSet.apiVersion,
        kind: RESOURCES.MachineSet.kind,
        metadata: { name: 'restored', namespace: ns(), labels: { ...labels, ...hashed }, ownerReferences },
        spec: {
          clusterName,
          replicas: 1,
          selector: { matchLabels: hashed },
          template: machineTemplate(clusterName, 'v2', hashed),
        },
      } as MachineSet);
      // The controllers' cache has the set once the MachineSet controller has put its finalizer on it.
      const restored = () => sets.get({ namespace: ns(), name: 'restored' });
      await eventually('the set seen', async () =>
        (await restored()).metadata.finalizers?.includes(FINALIZERS.machineSet),
      );
      await reconcileNow();
      if (!adopted) {
        const left = await restored();
        expect([getControllerOf(left)?.uid, left.spec.replicas]).toEqual([ownerReferences[0]?.uid, 1]);
        const owned = await setsOf();
        expect(owned.map((ms) => [nameOf(ms), ms.spec.replicas])).toEqual([[nameOf(first.current), 1]]);
        expect(uids(await machinesOfSet(owned[0]!))).toEqual(uids(first.machines));
        return;
      }
      // Adopted as an old revision: scaled down to nothing, its Machines gone, the deployment's own set untouched.
      const taken = await eventually('the set adopted', async () => {
        const ms = await restored();
        return getControllerOf(ms)?.uid === created.metadata.uid && ms.spec.replicas === 0 && ms;
      });
      expect(getControllerOf(taken)).toMatchObject({
        kind: 'MachineDeployment',
        name: 'md',
        blockOwnerDeletion: true,
      });
      await eventually('its Machines gone', async () => (await machinesOfSet(taken)).length === 0);
      const done = await rolledOut(1, 'v1');
      expect([nameOf(done.current), uids(done.machines)]).toEqual([
        nameOf(first.current),
        uids(first.machines),
      ]);
    },
  );

  it('adopts a restored set running its template instead of making a second one beside it', async () => {
    await play();
    // A set as a backup restores it: the deployment's template and name label, no owner, Machines up and running.
    const labels = { pool: 'md', [LABELS.deploymentName]: 'md' };
    await sets.create({
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: RESOURCES.MachineSet.kind,
      metadata: { name: 'restored', namespace: ns(), labels },
      spec: {
        clusterName: CLUSTER,
        replicas: 2,
        selector: { matchLabels: { pool: 'md' } },
        template: machineTemplate(CLUSTER, 'v1', { pool: 'md' }),
      },
    } as MachineSet);
    const restoredMachines = await eventually('the restored set running', async () => {
      const ms = await sets.get({ namespace: ns(), name: 'restored' });
      return ms.status?.availableReplicas === 2 && (await machinesOfSet(ms));
    });
    const created = await create(2);
    const done = await rolledOut(2, 'v1');
    expect(nameOf(done.current)).toBe('restored');
    expect(uids(done.machines)).toEqual(uids(restoredMachines));
    const all = (await sets.list({ namespace: ns() })).items;
    expect(all.map((ms) => [nameOf(ms), getControllerOf(ms)?.uid])).toEqual([
      ['restored', created.metadata.uid],
    ]);
  });

  it('deletes its sets, and their Machines, before its finalizer goes', async () => {
    await play();
    await create(2);
    const { current, machines: all } = await rolledOut(2, 'v1');
    for (const m of all) await hold(m, true);
    const gone: string[] = [];
    const record = (kind: string) => (o: KubernetesObject, deleted: boolean) =>
      deleted && gone.push(`${kind}/${nameOf(o)}`);
    await watch(
      new Informer<MachineDeployment>(bed.client, RESOURCES.MachineDeployment, { namespace: ns() }),
      record('md'),
    );
    await watch(
      new Informer<MachineSet>(bed.client, RESOURCES.MachineSet, { namespace: ns() }),
      record('set'),
    );

    await deployments.delete({ namespace: ns(), name: 'md' });
    const deleting = await eventually('Deleting reported', async () => {
      const md = await get();
      return condition(md, 'Deleting')?.status === 'True' && md;
    });
    expect(condition(deleting, 'Deleting')).toMatchObject({
      reason: 'Deleting',
      message: 'Deleting 1 MachineSets and 2 Machines',
    });
    expect(condition(deleting, 'Available')).toMatchObject({
      status: 'False',
      message: 'MachineDeployment is being deleted',
    });
    expect(deleting.metadata.finalizers).toContain(FINALIZERS.machineDeployment);
    await eventually('its set and Machines deleting', async () => {
      const ms = await sets.get({ namespace: ns(), name: nameOf(current) });
      return (
        ms.metadata.deletionTimestamp && (await machinesOfSet(ms)).every((m) => m.metadata.deletionTimestamp)
      );
    });
    await sleep(200);
    expect((await get()).metadata.finalizers).toContain(FINALIZERS.machineDeployment);
    expect(gone).toEqual([]);

    for (const m of all) await hold(m, false);
    await eventually('the deployment gone', () => get().then(() => false, isNotFound));
    expect(await machinesOf()).toEqual([]);
    // The set went first; only then did the deployment lose its finalizer.
    expect(gone).toEqual([`set/${nameOf(current)}`, 'md/md']);
  });

  it('reports its counters and conditions as its Machines come up and go', async () => {
    const player = await play({ availableAfterMs: undefined });
    await create(3);
    const statusBecomes = (
      what: string,
      counters: Record<string, unknown>,
      conditions: Record<string, string>,
    ) =>
      eventually(what, async () => {
        const md = await get();
        expect(md.status).toMatchObject(counters);
        expect(conditionsOf(md)).toMatchObject(conditions);
        return md;
      });
    const none = await statusBecomes(
      'three Machines, none up',
      { replicas: 3, readyReplicas: 0, availableReplicas: 0, upToDateReplicas: 3, phase: 'ScalingUp' },
      {
        Available: 'False/NotAvailable',
        RollingOut: 'False/NotRollingOut',
        ScalingUp: 'False/NotScalingUp',
        ScalingDown: 'False/NotScalingDown',
        MachinesReady: 'Unknown/ReadyUnknown',
        MachinesUpToDate: 'True/UpToDate',
        Deleting: 'False/NotDeleting',
      },
    );
    expect(condition(none, 'Available')?.message).toBe(
      '0 available replicas, at least 3 required (spec.rollout.strategy.rollingUpdate.maxUnavailable is 0, spec.replicas is 3)',
    );
    const all = await machinesOf();
    await player.makeAvailable(all[0]!);
    await player.makeAvailable(all[1]!);
    await statusBecomes(
      'two up',
      { readyReplicas: 2, availableReplicas: 2 },
      { Available: 'False/NotAvailable' },
    );
    await player.makeAvailable(all[2]!);
    await statusBecomes(
      'all up',
      { replicas: 3, readyReplicas: 3, availableReplicas: 3, upToDateReplicas: 3, phase: 'Running' },
      { Available: 'True/Available', MachinesReady: 'True/Ready' },
    );

    // Down to 1 while the Machines' deletion is held: ScalingDown until they are gone.
    for (const m of all) await hold(m, true);
    await patch({ spec: { replicas: 1 } });
    const down = await statusBecomes(
      'scaling down',
      { replicas: 3, availableReplicas: 1 },
      { ScalingDown: 'True/ScalingDown', Available: 'True/Available' },
    );
    expect(condition(down, 'ScalingDown')?.message).toBe('Scaling down from 3 to 1 replicas');
    for (const m of all) await hold(m, false);
    await statusBecomes(
      'scaled down',
      { replicas: 1, availableReplicas: 1 },
      { ScalingDown: 'False/NotScalingDown' },
    );
  });

  it('says ScalingUp is blocked, naming its set, while a template is missing', async () => {
    await play();
    await create(2, { template: machineTemplate(CLUSTER, 'missing', { pool: 'md' }) });
    const md = await eventually('ScalingUp blocked', async () => {
      const found = await get();
      return condition(found, 'ScalingUp')?.message?.includes('blocked') && found;
    });
    const [only] = await setsOf();
    expect(condition(md, 'ScalingUp')).toMatchObject({ status: 'True', reason: 'ScalingUp' });
    expect(condition(md, 'ScalingUp')?.message).toMatch(
      new RegExp(
        `^Scaling up from 0 to 2 replicas is blocked because MachineSet ${nameOf(only!)}: a template does not exist`,
      ),
    );
    expect(md.status).toMatchObject({ replicas: 0, availableReplicas: 0 });
  });
});
