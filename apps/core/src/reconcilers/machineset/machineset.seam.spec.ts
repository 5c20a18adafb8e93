import {
  ANNOTATIONS,
  FINALIZERS,
  LABELS,
  RESOURCES,
  getCondition,
  type Condition,
  type DeletionOrder,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import { EVENTS_V1, getControllerOf, type KubeEvent } from '@capstan/kube';
import { eventually } from '@capstan/testing';
import type { KubernetesObject } from '@kubernetes/client-node';
import { startInMemoryWorkload, type InMemoryWorkload } from '../../testing/in-memory-workload.js';
import {
  createReadyCluster,
  createTemplates,
  machineTemplate,
  MachinePlayer,
  resourceOf,
  type PlayerOptions,
} from '../../testing/workload-env.js';

describe('MachineSet controller on the in-memory API server', () => {
  let bed: InMemoryWorkload;
  let player: MachinePlayer;
  /** Cluster `demo`, templates `workers`, and Machines made Available and released after 20 ms. */
  const start = async (options: Partial<PlayerOptions> = {}) => {
    bed = await startInMemoryWorkload();
    await createReadyCluster(bed, 'demo');
    await createTemplates(bed, 'workers');
    player = await new MachinePlayer(bed, { availableAfterMs: 20, releaseAfterMs: 20, ...options }).start();
  };
  const stop = async () => {
    await player.stop();
    await bed.stop();
  };
  /** Deleted Machines keep their finalizer until the test releases them. */
  const HOLD = { releaseAfterMs: 600_000 };

  const until = <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false) =>
    eventually(probe, { message: what, timeoutMs: 4_000, intervalMs: 25 });
  const short = () => new Promise((resolve) => setTimeout(resolve, 200));
  const ns = () => bed.ns.name;
  const sets = () => bed.client.resource<MachineSet>(RESOURCES.MachineSet);
  const machines = () => bed.client.resource<Machine>(RESOURCES.Machine);
  const getSet = (name: string) => sets().get({ namespace: ns(), name });
  const createSet = (
    name: string,
    replicas: number,
    spec: Partial<MachineSet['spec']> = {},
    metadata: Partial<MachineSet['metadata']> = {},
  ) =>
    sets().create({
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: RESOURCES.MachineSet.kind,
      metadata: { name, namespace: ns(), ...metadata },
      spec: {
        clusterName: 'demo',
        replicas,
        selector: { matchLabels: { pool: name } },
        template: machineTemplate('demo', 'workers', { pool: name }),
        ...spec,
      },
    } as MachineSet);
  const scale = (name: string, replicas: number) =>
    sets().mergePatch({ namespace: ns(), name }, { spec: { replicas } });
  /** The Machines the set controls, by name. */
  const own = async (set: string) =>
    (await machines().list({ namespace: ns() })).items
      .filter((m) => getControllerOf(m)?.name === set)
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  const names = (list: readonly Machine[]) => list.map((m) => m.metadata.name!);
  const deleting = (list: readonly Machine[]) => list.filter((m) => m.metadata.deletionTimestamp);
  const condition = (obj: { status?: { conditions?: Condition[] } }, type: string) =>
    getCondition(obj.status?.conditions, type);
  const conditionsOf = (obj: { status?: { conditions?: Condition[] } }) =>
    Object.fromEntries((obj.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
  const setWhen = (name: string, what: string, ok: (set: MachineSet) => boolean) =>
    until(`${name}: ${what}`, async () => {
      const set = await getSet(name);
      return ok(set) ? set : undefined;
    });
  /** The set at `replicas` live Machines of its own, all Available, as its status says for its generation. */
  const settled = (name: string, replicas: number) =>
    until(`${name} settled at ${replicas}`, async () => {
      const [set, mine] = [await getSet(name), await own(name)];
      const ok =
        mine.length === replicas &&
        deleting(mine).length === 0 &&
        set.status?.replicas === replicas &&
        set.status.availableReplicas === replicas &&
        set.status.observedGeneration === set.metadata.generation;
      return ok ? set : undefined;
    });
  const eventNotes = async (set: string, reason: string) =>
    (await bed.client.resource<KubeEvent>(EVENTS_V1).list({ namespace: ns() })).items
      .filter((e) => e.reason === reason && e.regarding?.name === set)
      .map((e) => e.note)
      .sort();
  /** Waits for the controllers' Machine cache to show a write, so a change that follows is seen after it. */
  const cached = (name: string, ok: (m: Machine) => boolean) =>
    until(`${name} in the controllers' cache`, () => {
      const m = bed.host.manager.informer<Machine>(RESOURCES.Machine).getByName(ns(), name);
      return m && ok(m) ? m : undefined;
    });
  /** Sets Machine conditions as the Machine controller or a health check would, keeping the others. */
  const mark = async (name: string, marks: Record<string, 'True' | 'False'>, sync = true) => {
    await until(`conditions written on ${name}`, async () => {
      const m = await machines().get({ namespace: ns(), name });
      const kept = (m.status?.conditions ?? []).filter((c) => !(c.type in marks));
      const added = Object.entries(marks).map(([type, status]) => {
        const reason = status === 'True' ? type : `Not${type}`;
        return { type, status, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
      });
      const status = { ...m.status, conditions: [...kept, ...added] };
      const patch = { metadata: { resourceVersion: m.metadata.resourceVersion }, status };
      return machines().mergePatch({ namespace: ns(), name }, patch, { subresource: 'status' });
    });
    if (sync)
      await cached(name, (m) => Object.entries(marks).every(([t, s]) => condition(m, t)?.status === s));
  };
  const UNHEALTHY = { HealthCheckSucceeded: 'False', OwnerRemediated: 'False' } as const;
  /** Plays the Machine controller finishing a deletion: the Machine finalizer goes. */
  const release = (name: string) =>
    until(`${name} released`, async () => {
      const m = await machines().get({ namespace: ns(), name });
      const finalizers = (m.metadata.finalizers ?? []).filter((f) => f !== FINALIZERS.machine);
      const patch = { metadata: { finalizers, resourceVersion: m.metadata.resourceVersion } };
      return machines().mergePatch({ namespace: ns(), name }, patch);
    });
  /** Waits until the set has not been reconciled for 150 ms: what follows alone can make it reconcile again. */
  const quiet = async (name: string) => {
    let last = Date.now();
    const off = bed.host.controllers.onReconciled(({ key }) => {
      if (key === `${ns()}/${name}`) last = Date.now();
    });
    await until(`${name} quiet`, () => Date.now() - last > 150).finally(off);
  };
  const gone = async (name: string) => (await sets().getIfExists({ namespace: ns(), name })) === undefined;
  const ownerOf = (type: { apiVersion: string; kind: string }, obj: KubernetesObject) => ({
    apiVersion: type.apiVersion,
    kind: type.kind,
    name: obj.metadata!.name!,
    uid: obj.metadata!.uid!,
  });
  const pauseCluster = (paused: boolean) =>
    bed.client
      .resource(RESOURCES.Cluster)
      .mergePatch({ namespace: ns(), name: 'demo' }, { spec: { paused } });

  describe('scaling', () => {
    beforeEach(() => start());
    afterEach(() => stop());

    it('creates its replicas and reports them available', async () => {
      await createSet('pool', 2);
      await settled('pool', 2);
      expect((await own('pool')).map((m) => getControllerOf(m)?.name)).toEqual(['pool', 'pool']);
    });

    it.each([
      [0, 3],
      [3, 1],
      [2, 0],
      [1, 4],
    ])('scales from %i to %i Machines, keeping those it does not need to touch', async (from, to) => {
      await createSet('pool', from);
      await settled('pool', from);
      const before = names(await own('pool'));
      await scale('pool', to);
      const set = await settled('pool', to);
      const after = names(await own('pool'));
      expect(after.filter((n) => before.includes(n))).toHaveLength(Math.min(from, to));
      const counters = { replicas: to, readyReplicas: to, availableReplicas: to, upToDateReplicas: to };
      expect(set.status).toMatchObject(counters);
      expect(conditionsOf(set)).toMatchObject({
        ScalingUp: 'False/NotScalingUp',
        ScalingDown: 'False/NotScalingDown',
      });
      const removed = before.filter((n) => !after.includes(n)).map((n) => `Deleted Machine ${n}`);
      await until('the create and delete events', async () => {
        const created = await eventNotes('pool', 'SuccessfulCreate');
        return created.length === Math.max(from, to) && (await eventNotes('pool', 'SuccessfulDelete'));
      });
      expect(await eventNotes('pool', 'SuccessfulDelete')).toEqual(removed.sort());
    });

    it('reports ScalingDown, counting the Machines it deletes until they are gone', async () => {
      await player.stop();
      player = await new MachinePlayer(bed, { availableAfterMs: 20, ...HOLD }).start();
      await createSet('pool', 3);
      await settled('pool', 3);
      await scale('pool', 1);
      const set = await setWhen('pool', 'scaling down', (s) => s.status?.availableReplicas === 1);
      expect(set.status).toMatchObject({ replicas: 3, readyReplicas: 1, availableReplicas: 1 });
      const scalingDown = { status: 'True', message: 'Scaling down from 3 to 1 replicas' };
      expect(condition(set, 'ScalingDown')).toMatchObject(scalingDown);
      const doomed = deleting(await own('pool'));
      expect(doomed).toHaveLength(2);
      // Deleting Machines still count: no further one is deleted in their stead, none is created.
      await short();
      expect(deleting(await own('pool'))).toEqual(doomed);
      expect(await own('pool')).toHaveLength(3);
      for (const m of doomed) await release(m.metadata.name!);
      expect(conditionsOf(await settled('pool', 1))).toMatchObject({ ScalingDown: 'False/NotScalingDown' });
    });
  });

  describe('deletion order when scaling down from 3 to 2', () => {
    type Pick = 'oldest' | 'middle' | 'newest' | 'first by name' | 'last by name';
    const cases: [string, DeletionOrder, Partial<Record<Pick, string>>, Pick][] = [
      ['oldest', 'Oldest', {}, 'oldest'],
      ['newest', 'Newest', {}, 'newest'],
      ['random', 'Random', {}, 'first by name'],
      ['annotated-young', 'Oldest', { newest: 'delete-machine' }, 'newest'],
      ['annotated-old', 'Newest', { oldest: 'delete-machine' }, 'oldest'],
      ['annotated', 'Random', { 'last by name': 'delete-machine' }, 'last by name'],
      ['unavailable', 'Oldest', { newest: 'Available' }, 'newest'],
      ['unhealthy', 'Newest', { oldest: 'HealthCheckSucceeded' }, 'oldest'],
      ['node-unhealthy', 'Random', { 'last by name': 'NodeHealthy' }, 'last by name'],
      [
        'annotated-over-unhealthy',
        'Oldest',
        { oldest: 'HealthCheckSucceeded', middle: 'delete-machine' },
        'middle',
      ],
    ];
    // Creation timestamps have second resolution: each set gets one Machine per second, so age tells them apart.
    beforeAll(async () => {
      await start();
      await Promise.all(cases.map(([set, order]) => createSet(set, 1, { deletion: { order } })));
      let latest = '';
      for (const replicas of [1, 2, 3]) {
        if (replicas > 1) {
          await until('the clock in a later second', () => new Date().toISOString().slice(0, 19) > latest);
          await Promise.all(cases.map(([set]) => scale(set, replicas)));
        }
        await Promise.all(cases.map(([set]) => settled(set, replicas)));
        const created = (await machines().list({ namespace: ns() })).items.map((m) =>
          String(m.metadata.creationTimestamp),
        );
        latest = created.sort().at(-1)!.slice(0, 19);
      }
    }, 20_000);
    afterAll(() => stop());

    it.each(cases)('%s: %s order, marking %o, deletes the %s', async (set, _order, marks, deleted) => {
      const mine = await own(set);
      const age = (m: Machine) => String(m.metadata.creationTimestamp);
      const byAge = [...mine].sort((a, b) => (age(a) < age(b) ? -1 : 1));
      expect(new Set(byAge.map(age)).size).toBe(3);
      const at = {
        oldest: byAge[0],
        middle: byAge[1],
        newest: byAge[2],
        'first by name': mine[0],
        'last by name': mine[2],
      };
      const pick = (p: string) => at[p as Pick]!.metadata.name!;
      for (const [on, what] of Object.entries(marks)) {
        if (what !== 'delete-machine') await mark(pick(on), { [what]: 'False' });
        else {
          const annotations = { [ANNOTATIONS.deleteMachine]: 'yes' };
          await machines().mergePatch({ namespace: ns(), name: pick(on) }, { metadata: { annotations } });
          await cached(pick(on), (m) =>
            Object.hasOwn(m.metadata.annotations ?? {}, ANNOTATIONS.deleteMachine),
          );
        }
      }
      await scale(set, 2);
      const left = await until(
        'scaled down',
        async () => (await own(set)).length === 2 && names(await own(set)),
      );
      expect(left).toEqual(names(mine).filter((n) => n !== pick(deleted)));
      expect(await eventNotes(set, 'SuccessfulDelete')).toEqual([`Deleted Machine ${pick(deleted)}`]);
    });
  });

  describe('adoption', () => {
    beforeEach(() => start());
    afterEach(() => stop());

    const createOrphan = (name: string, clusterName: string, pool: string, metadata = {}) =>
      machines().create({
        apiVersion: RESOURCES.Machine.apiVersion,
        kind: RESOURCES.Machine.kind,
        metadata: { name, namespace: ns(), labels: { pool }, ...metadata },
        spec: {
          clusterName,
          bootstrap: { dataSecretName: `${name}-data` },
          infrastructureRef: {
            apiGroup: 'infrastructure.generic.capstan.dev',
            kind: 'GenericInfrastructureMachine',
            name,
          },
        },
      } as Machine);
    const twists = {
      none: {},
      'controlled by another': {
        ownerReferences: [{ apiVersion: 'v1', kind: 'Other', name: 'boss', uid: 'u-1', controller: true }],
      },
      deleting: { finalizers: ['test.capstan.dev/hold'] },
    };

    it.each([
      ['its selector matches it in its cluster', 'demo', 'pool', 'none', true],
      ['its selector does not match it', 'demo', 'other', 'none', false],
      ['it belongs to another cluster', 'elsewhere', 'pool', 'none', false],
      ['another controller owns it', 'demo', 'pool', 'controlled by another', false],
      ['it is being deleted', 'demo', 'pool', 'deleting', false],
    ] as const)('adopts an existing Machine only if %s', async (_why, cluster, pool, twist, adopted) => {
      await createOrphan('orphan', cluster, pool, twists[twist]);
      if (twist === 'deleting') await machines().delete({ namespace: ns(), name: 'orphan' });
      await cached('orphan', (m) => twist !== 'deleting' || Boolean(m.metadata.deletionTimestamp));
      const set = await createSet('pool', 2);
      await settled('pool', 2);
      expect(names(await own('pool')).includes('orphan')).toBe(adopted);
      const orphan = await machines().get({ namespace: ns(), name: 'orphan' });
      const controller = getControllerOf(orphan);
      expect(controller?.uid === set.metadata.uid).toBe(adopted);
      // Adopted, it gets the set's labels in place; a new Machine is created only for the rest.
      expect(orphan.metadata.labels?.[LABELS.setName]).toBe(adopted ? 'pool' : undefined);
      await until(
        'the create events',
        async () => (await eventNotes('pool', 'SuccessfulCreate')).length === (adopted ? 1 : 2),
      );
      expect(await eventNotes('pool', 'SuccessfulAdopt')).toEqual(adopted ? ['Adopted Machine orphan'] : []);
    });

    it('adopts a matching orphan that appears later, then scales back to its replicas', async () => {
      await createSet('pool', 2);
      await settled('pool', 2);
      await quiet('pool');
      await createOrphan('late', 'demo', 'pool');
      await until('adopted', async () => (await eventNotes('pool', 'SuccessfulAdopt')).length === 1);
      expect(await eventNotes('pool', 'SuccessfulAdopt')).toEqual(['Adopted Machine late']);
      await until('one deleted', async () => (await eventNotes('pool', 'SuccessfulDelete')).length === 1);
      await settled('pool', 2);
    });
  });

  describe('deletion', () => {
    beforeEach(() => start(HOLD));
    afterEach(() => stop());

    it('deletes its Machines first and drops its finalizer only once they are gone', async () => {
      await createSet('doomed', 2);
      expect((await settled('doomed', 2)).metadata.finalizers).toEqual([FINALIZERS.machineSet]);
      await sets().delete({ namespace: ns(), name: 'doomed' });
      const doomed = await until('Machines deleting', async () => {
        const mine = await own('doomed');
        return deleting(mine).length === 2 && mine;
      });
      const reports = (message: string) =>
        setWhen('doomed', message, (s) => {
          const c = condition(s, 'Deleting');
          return c?.status === 'True' && c.reason === 'Deleting' && c.message === message;
        });
      expect((await reports('Deleting 2 Machines')).metadata.finalizers).toEqual([FINALIZERS.machineSet]);
      await release(doomed[0]!.metadata.name!);
      expect((await reports('Deleting 1 Machine')).metadata.finalizers).toEqual([FINALIZERS.machineSet]);
      await short();
      expect(await gone('doomed')).toBe(false);
      await release(doomed[1]!.metadata.name!);
      await until('the set gone', () => gone('doomed'));
      expect(await own('doomed')).toEqual([]);
    });
  });

  describe('pausing', () => {
    beforeEach(() => start());
    afterEach(() => stop());

    const pausedAnnotation = { [ANNOTATIONS.paused]: '' };
    const unpause = {
      cluster: () => pauseCluster(false),
      annotation: () =>
        sets().mergePatch(
          { namespace: ns(), name: 'pool' },
          { metadata: { annotations: { [ANNOTATIONS.paused]: null } } },
        ),
    };

    it.each([
      ['cluster', 'Cluster spec.paused is set to true'],
      ['annotation', `MachineSet has the ${ANNOTATIONS.paused} annotation`],
    ] as const)('creates nothing while paused by its %s, and says so', async (by, message) => {
      if (by === 'cluster') await pauseCluster(true);
      await createSet('pool', 2, {}, by === 'annotation' ? { annotations: pausedAnnotation } : {});
      const set = await setWhen('pool', 'Paused', (s) => condition(s, 'Paused')?.status === 'True');
      expect(condition(set, 'Paused')).toMatchObject({ reason: 'Paused', message });
      await short();
      expect((await machines().list({ namespace: ns() })).items).toEqual([]);
      expect((await getSet('pool')).metadata.finalizers ?? []).toEqual([]);
      await unpause[by]();
      const running = await settled('pool', 2);
      expect(conditionsOf(running)).toMatchObject({ Paused: 'False/NotPaused' });
      expect(running.metadata.finalizers).toEqual([FINALIZERS.machineSet]);
    });

    it('deletes nothing while its Cluster is paused', async () => {
      await createSet('pool', 2);
      await settled('pool', 2);
      const before = await own('pool');
      await pauseCluster(true);
      const { metadata } = await scale('pool', 0);
      await setWhen('pool', 'the paused reconcile of the new generation', (s) => {
        const paused = condition(s, 'Paused');
        return paused?.status === 'True' && paused.observedGeneration === metadata.generation;
      });
      await short();
      expect(await own('pool')).toEqual(before);
      await pauseCluster(false);
      await until('scaled to 0', async () => (await own('pool')).length === 0);
    });
  });

  describe('scale-up blockers', () => {
    beforeEach(() => start());
    afterEach(() => stop());

    const BLOCKED = 'Scaling up from 0 to 2 replicas is blocked because ';
    /** Waits for ScalingUp to say what blocks it; checks that nothing was created meanwhile. */
    const blocker = async () => {
      const set = await setWhen('pool', 'blocked', (s) =>
        Boolean(condition(s, 'ScalingUp')?.message?.includes(BLOCKED)),
      );
      await short();
      expect(await own('pool')).toEqual([]);
      expect(set.status).toMatchObject({ replicas: 0, availableReplicas: 0 });
      expect(condition(set, 'ScalingUp')).toMatchObject({ status: 'True', reason: 'ScalingUp' });
      return { set, why: condition(set, 'ScalingUp')!.message!.slice(BLOCKED.length) };
    };

    const DISABLE = ANNOTATIONS.disableMachineCreate;
    it.each([
      ['its Cluster does not exist', 'ghost', {}, 'Cluster ghost does not exist'],
      [
        'the disable-machine-create annotation is set',
        'demo',
        { [DISABLE]: '' },
        `the ${DISABLE} annotation is set`,
      ],
      ['its Cluster is being deleted', 'demo', {}, 'Cluster demo is being deleted'],
    ])('creates no Machine while %s', async (_when, clusterName, annotations, expected) => {
      if (expected.includes('being deleted')) {
        const clusters = bed.client.resource(RESOURCES.Cluster);
        const finalizers = ['test.capstan.dev/hold'];
        await clusters.mergePatch({ namespace: ns(), name: 'demo' }, { metadata: { finalizers } });
        await clusters.delete({ namespace: ns(), name: 'demo' });
      }
      await createSet('pool', 2, { clusterName }, { annotations });
      expect((await blocker()).why).toBe(expected);
    });

    it.each([
      ['infrastructure', 'InfrastructureTemplateCloningFailed'],
      ['bootstrap', 'BootstrapTemplateCloningFailed'],
    ])(
      'reports a missing %s template, leaves no clone behind, and creates once it exists',
      async (missing, reason) => {
        const template = machineTemplate('demo', 'workers', { pool: 'pool' });
        if (missing === 'infrastructure') template.spec.infrastructureRef.name = 'absent';
        else template.spec.bootstrap.configRef!.name = 'absent';
        await createSet('pool', 2, { template });
        const { set, why } = await blocker();
        expect(why).toMatch(/^a template does not exist: .*"absent"/);
        const created = (s: MachineSet) =>
          s.status?.deprecated?.v1beta1?.conditions?.find((c) => c.type === 'MachinesCreated');
        expect(created(set)).toMatchObject({ status: 'False', reason });
        for (const kind of ['GenericInfrastructureMachine', 'GenericBootstrapConfig']) {
          expect((await bed.client.resource(resourceOf(kind)).list({ namespace: ns() })).items).toEqual([]);
        }
        await until(
          'a FailedCreate event',
          async () => (await eventNotes('pool', 'FailedCreate')).length > 0,
        );
        await createTemplates(bed, 'absent');
        // Templates are not watched (the set looks again after 10 s): a change to the set makes it look now.
        await sets().mergePatch(
          { namespace: ns(), name: 'pool' },
          { metadata: { labels: { nudge: 'now' } } },
        );
        expect(created(await settled('pool', 2))).toMatchObject({ status: 'True' });
      },
    );
  });

  describe('remediation', () => {
    beforeEach(() => start(HOLD));
    afterEach(() => stop());

    const REVISION_1 = { [ANNOTATIONS.revision]: '1' };
    /** A set of 3 controlled by MachineDeployment `md` (revision 1), which is paused: only the set acts. */
    const createDeploymentSet = async (maxInFlight?: number | string) => {
      const md = await bed.client.resource<MachineDeployment>(RESOURCES.MachineDeployment).create({
        apiVersion: RESOURCES.MachineDeployment.apiVersion,
        kind: RESOURCES.MachineDeployment.kind,
        metadata: { name: 'md', namespace: ns(), annotations: { ...REVISION_1, [ANNOTATIONS.paused]: '' } },
        spec: {
          clusterName: 'demo',
          replicas: 3,
          selector: { matchLabels: { pool: 'md' } },
          template: machineTemplate('demo', 'workers', { pool: 'md' }),
          ...(maxInFlight === undefined ? {} : { remediation: { maxInFlight } }),
        },
      } as MachineDeployment);
      const owner = { ...ownerOf(RESOURCES.MachineDeployment, md), controller: true };
      const labels = { [LABELS.deploymentName]: 'md' };
      await createSet('md', 3, {}, { ownerReferences: [owner], labels, annotations: REVISION_1 });
      await settled('md', 3);
      return own('md');
    };
    const remediation = (m: Machine) => condition(m, 'OwnerRemediated')?.reason;

    it('deletes a Machine a health check asked it to remediate, and replaces it once it is gone', async () => {
      await createSet('pool', 2);
      await settled('pool', 2);
      const [victim, healthy] = names(await own('pool')) as [string, string];
      await mark(victim, UNHEALTHY);
      const m = await until('the victim deleting', async () => {
        const got = await machines().get({ namespace: ns(), name: victim });
        return got.metadata.deletionTimestamp && got;
      });
      expect(condition(m, 'OwnerRemediated')).toMatchObject({ status: 'False', reason: 'MachineDeleting' });
      const set = await setWhen('pool', 'Remediating', (s) => condition(s, 'Remediating')?.status === 'True');
      expect(set.status).toMatchObject({ replicas: 2, availableReplicas: 1 });
      expect(condition(set, 'Remediating')?.message).toContain(victim);
      // Not replaced while it is still going.
      await short();
      expect(names(await own('pool'))).toEqual([victim, healthy]);
      expect(await eventNotes('pool', 'MachineRemediated')).toEqual([`Deleted unhealthy Machine ${victim}`]);
      await release(victim);
      const done = await settled('pool', 2);
      expect(names(await own('pool'))).toContain(healthy);
      expect(names(await own('pool'))).not.toContain(victim);
      expect(conditionsOf(done)).toMatchObject({ Remediating: 'False/NotRemediating' });
    });

    it.each([
      [undefined, 3],
      [1, 1],
      ['50%', 2],
      [0, 0],
    ])('with its deployment at maxInFlight %p, remediates %i of 3 at once', async (maxInFlight, first) => {
      const victims = names(await createDeploymentSet(maxInFlight));
      for (const v of victims) await mark(v, UNHEALTHY);
      const inFlight = await until('remediation planned', async () => {
        const mine = await own('md');
        const deferred = mine.filter((m) => remediation(m) === 'RemediationDeferred');
        return deleting(mine).length === first && deferred.length === 3 - first && deleting(mine);
      });
      expect(inFlight.map(remediation)).toEqual(inFlight.map(() => 'MachineDeleting'));
      await short();
      expect(deleting(await own('md'))).toHaveLength(first);
      // Once those are gone, the deferred ones go (as many at once as allowed) and the gone ones are replaced.
      for (const m of inFlight) await release(m.metadata.name!);
      await until('the next remediations', async () => {
        const mine = await own('md');
        const replacements = mine.filter((m) => !victims.includes(m.metadata.name!));
        return deleting(mine).length === Math.min(first, 3 - first) && replacements.length === first;
      });
    });

    it('marks the Machines of an old revision not up to date and does not remediate them', async () => {
      const mine = await createDeploymentSet();
      expect(mine.map((m) => condition(m, 'UpToDate')?.status)).toEqual(['True', 'True', 'True']);
      expect((await getSet('md')).status?.upToDateReplicas).toBe(3);
      // A new revision of the deployment alone (its watch) makes the set mark its Machines out of date.
      await quiet('md');
      const annotations = { [ANNOTATIONS.revision]: '2' };
      await bed.client
        .resource(RESOURCES.MachineDeployment)
        .mergePatch({ namespace: ns(), name: 'md' }, { metadata: { annotations } });
      const set = await setWhen('md', 'not up to date', (s) => s.status?.upToDateReplicas === 0);
      expect(conditionsOf(set)).toMatchObject({ MachinesUpToDate: 'False/NotUpToDate' });
      const stale = { status: 'False', reason: 'NotUpToDate' };
      for (const m of await own('md')) expect(condition(m, 'UpToDate')).toMatchObject(stale);
      const victim = mine[0]!.metadata.name!;
      await mark(victim, UNHEALTHY);
      await until(
        'CannotBeRemediated',
        async () =>
          remediation(await machines().get({ namespace: ns(), name: victim })) === 'CannotBeRemediated',
      );
      await scale('md', 4);
      const blocked = await setWhen('md', 'blocked', (s) => condition(s, 'ScalingUp')?.status === 'True');
      expect(condition(blocked, 'ScalingUp')?.message).toBe(
        'Scaling up from 3 to 4 replicas is blocked because MachineSet is not the current revision of MachineDeployment md',
      );
      await short();
      expect(deleting(await own('md'))).toEqual([]);
      expect(await own('md')).toHaveLength(3);
    });

    it('drops a stale OwnerRemediated once the health check passes again', async () => {
      await createSet('pool', 1);
      await settled('pool', 1);
      const [name] = names(await own('pool')) as [string];
      await mark(name, { HealthCheckSucceeded: 'True', OwnerRemediated: 'False' }, false);
      await until(
        'OwnerRemediated dropped',
        async () => remediation(await machines().get({ namespace: ns(), name })) === undefined,
      );
      expect(condition(await machines().get({ namespace: ns(), name }), 'HealthCheckSucceeded')?.status).toBe(
        'True',
      );
      expect(deleting(await own('pool'))).toEqual([]);
    });
  });

  describe('status', () => {
    beforeEach(() => start({ availableAfterMs: undefined }));
    afterEach(() => stop());

    const UP = { Ready: 'True', Available: 'True' } as const;
    const DOWN = { Ready: 'False', Available: 'False' } as const;
    const [READY, NOT_READY, UNKNOWN] = ['True/Ready', 'False/NotReady', 'Unknown/ReadyUnknown'];
    const [UP_TO_DATE, NOT_UP_TO_DATE] = ['True/UpToDate', 'False/NotUpToDate'];
    it.each([
      ['no Machine reports yet', [{}, {}, {}], [0, 0, 3], UNKNOWN, UP_TO_DATE],
      ['all are Ready and Available', [UP, UP, UP], [3, 3, 3], READY, UP_TO_DATE],
      ['one is not Ready', [DOWN, UP, UP], [2, 2, 3], NOT_READY, UP_TO_DATE],
      ['one is Ready, not Available', [{ Ready: 'True' }, UP, UP], [3, 2, 3], READY, UP_TO_DATE],
      ['one is not up to date', [{ ...UP, UpToDate: 'False' }, UP, UP], [3, 3, 2], READY, NOT_UP_TO_DATE],
    ] as const)(
      'counts and summarizes its Machines when %s',
      async (_when, marks, counters, ready, upToDate) => {
        await createSet('pool', 3);
        const mine = await until('3 Machines', async () => (await own('pool')).length === 3 && own('pool'));
        for (const [i, m] of mine.entries())
          if (Object.keys(marks[i]!).length) await mark(m.metadata.name!, marks[i]!);
        const [readyReplicas, availableReplicas, upToDateReplicas] = counters;
        const expected = { replicas: 3, readyReplicas, availableReplicas, upToDateReplicas };
        const set = await setWhen(
          'pool',
          JSON.stringify(expected),
          (s) =>
            Object.entries(expected).every(([k, v]) => s.status?.[k as keyof typeof expected] === v) &&
            conditionsOf(s)['MachinesReady'] === ready,
        );
        expect(conditionsOf(set)).toMatchObject({
          MachinesUpToDate: upToDate,
          ScalingUp: 'False/NotScalingUp',
        });
        const readiness = condition(set, 'MachinesReady');
        const named = expect.stringContaining(mine[0]!.metadata.name!);
        expect(readiness?.message ?? '').toEqual(ready === READY ? '' : named);
        expect(set.status?.observedGeneration).toBe(set.metadata.generation);
      },
    );
  });

  describe('labels and owners', () => {
    beforeEach(() => start());
    afterEach(() => stop());

    it('names, labels, annotates and owns its Machines and their clones', async () => {
      const template = machineTemplate('demo', 'workers', { pool: 'pool', tier: 'worker' });
      template.metadata = { ...template.metadata, annotations: { note: 'from-template' } };
      const machineNaming = { template: '{{ .cluster.name }}-{{ .machineSet.name }}-{{ .random }}' };
      const set = await createSet('pool', 2, { template, machineNaming });
      await settled('pool', 2);
      const labels = { pool: 'pool', tier: 'worker', [LABELS.setName]: 'pool', [LABELS.clusterName]: 'demo' };
      const owner = ownerOf(RESOURCES.MachineSet, set);
      const mine = await own('pool');
      for (const m of mine) {
        expect(m.metadata.name).toMatch(/^demo-pool-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
        expect(m.metadata.labels).toEqual(labels);
        expect(m.metadata.annotations).toEqual({ note: 'from-template' });
        expect(m.metadata.finalizers).toEqual([FINALIZERS.machine]);
        expect(m.metadata.ownerReferences).toEqual([
          { ...owner, controller: true, blockOwnerDeletion: true },
        ]);
      }
      for (const [kind, group] of [
        ['GenericInfrastructureMachine', 'infrastructure.generic.capstan.dev'],
        ['GenericBootstrapConfig', 'bootstrap.generic.capstan.dev'],
      ] as const) {
        const refs = mine.map((m) =>
          kind === 'GenericBootstrapConfig' ? m.spec.bootstrap.configRef : m.spec.infrastructureRef,
        );
        expect(refs).toEqual(names(mine).map((name) => ({ apiGroup: group, kind, name })));
        const clones = (await bed.client.resource(resourceOf(kind)).list({ namespace: ns() })).items;
        expect(clones.map((c) => c.metadata?.name).sort()).toEqual(names(mine));
        for (const clone of clones) {
          expect(clone.metadata?.labels).toEqual({ ...labels, 'template-label': 'workers' });
          expect(clone.metadata?.annotations).toEqual({
            note: 'from-template',
            [ANNOTATIONS.clonedFromName]: 'workers',
            [ANNOTATIONS.clonedFromGroupKind]: `${kind}Template.${group}`,
          });
          // Owned, not controlled: the Machine controller takes them over.
          expect(clone.metadata?.ownerReferences).toEqual([owner]);
          expect((clone as KubernetesObject & { spec: unknown }).spec).toEqual({ flavor: 'workers' });
        }
        const source = await bed.client
          .resource(resourceOf(`${kind}Template`))
          .get({ namespace: ns(), name: 'workers' });
        expect(source.metadata?.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual(['Cluster/demo']);
      }
    });

    it.each([
      ['a stand-alone set', {}, ['Cluster/demo']],
      ["a MachineDeployment's set", { [LABELS.deploymentName]: 'md' }, []],
    ])(
      'labels %s with its cluster and owns it as such',
      async (_who, labels: Record<string, string>, owners) => {
        await createSet('pool', 1, {}, { labels });
        const set = await settled('pool', 1);
        expect(set.metadata.labels).toEqual({ ...labels, [LABELS.clusterName]: 'demo' });
        expect(set.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`) ?? []).toEqual(owners);
        expect(set.status?.selector).toBe('pool=pool');
        const [machine] = await own('pool');
        expect(machine!.metadata.labels?.[LABELS.deploymentName]).toBe(labels[LABELS.deploymentName]);
      },
    );

    it('carries template label changes to its Machines in place', async () => {
      await createSet('pool', 2);
      await settled('pool', 2);
      const before = names(await own('pool'));
      const labels = { pool: 'pool', tier: 'gold' };
      await sets().mergePatch(
        { namespace: ns(), name: 'pool' },
        { spec: { template: { metadata: { labels } } } },
      );
      await until('labels carried', async () =>
        (await own('pool')).every((m) => m.metadata.labels?.['tier'] === 'gold'),
      );
      expect(names(await own('pool'))).toEqual(before);
      expect(deleting(await own('pool'))).toEqual([]);
    });
  });
});
