import {
  ANNOTATIONS,
  IN_PLACE_ANNOTATIONS,
  LABELS,
  RESOURCES,
  updateInProgress,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineSet,
} from '@capstan/api';
import {
  EventBusConnection,
  serveCanUpdateMachine,
  silentLogger,
  type CanUpdateMachineRequest,
  type CanUpdateMachineResponse,
} from '@capstan/events';
import { getControllerOf, Informer, isNotFound, type ResourceClient } from '@capstan/kube';
import { testNatsUrl } from '@capstan/testing';
import type { Subscription } from '@nats-io/transport-node';
import {
  MachinePlayer,
  createReadyCluster,
  createTemplates,
  eventually,
  machineTemplate,
  resourceOf,
  startWorkloadEnv,
  type WorkloadEnv,
} from '../../testing/workload-env.js';

const isAvailableNow = (m: Machine) =>
  !m.metadata.deletionTimestamp &&
  m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;
/** Counts towards availability as a rollout must count it: Available, and neither moving nor updating in place. */
const servesNow = (m: Machine) =>
  isAvailableNow(m) &&
  !m.metadata.annotations?.[IN_PLACE_ANNOTATIONS.movingTo] &&
  !updateInProgress(m.metadata.annotations);

/**
 * Every state of a deployment's Machines the watch delivered: how many exist, how many are Available and how many
 * serve (Available and not moving or updating in place). Listeners hear of every Machine change.
 */
class MachineWatcher {
  readonly moments = new Map<string, { total: number; available: number; serving: number }[]>();
  private readonly informer: Informer<Machine>;
  private recording = new Set<string>();
  private readonly listeners: ((machine: Machine) => void)[] = [];

  constructor(env: WorkloadEnv) {
    this.informer = new Informer<Machine>(env.client, RESOURCES.Machine, { namespace: env.ns.name });
    const observe = (m: Machine) => {
      this.observe(m.metadata.labels?.[LABELS.deploymentName]);
      for (const listener of this.listeners) listener(m);
    };
    this.informer.addEventHandler({ onAdd: observe, onUpdate: (_o, m) => observe(m), onDelete: observe });
  }

  onChange(listener: (machine: Machine) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<this> {
    this.informer.start();
    await this.informer.waitForSync();
    return this;
  }

  record(deployment: string): void {
    this.recording.add(deployment);
    this.observe(deployment);
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  private observe(deployment: string | undefined): void {
    if (!deployment || !this.recording.has(deployment)) return;
    const machines = this.informer
      .list()
      .filter((m) => m.metadata.labels?.[LABELS.deploymentName] === deployment);
    const list = this.moments.get(deployment) ?? [];
    list.push({
      total: machines.length,
      available: machines.filter(isAvailableNow).length,
      serving: machines.filter(servesNow).length,
    });
    this.moments.set(deployment, list);
  }
}

/**
 * Plays the Machine controller's part of an in-place update: `doneAfterMs` after a Machine is given
 * `update-in-progress`, its update is over (until then it does not serve, whatever its conditions say).
 */
function playInPlaceUpdates(
  env: WorkloadEnv,
  watcher: MachineWatcher,
  timers: Set<NodeJS.Timeout>,
  doneAfterMs = 800,
): void {
  const started = new Set<string>();
  watcher.onChange((machine) => {
    const target = updateInProgress(machine.metadata.annotations);
    const key = `${machine.metadata.uid}/${target}`;
    if (!target || started.has(key) || machine.metadata.deletionTimestamp) return;
    started.add(key);
    const timer = setTimeout(() => {
      timers.delete(timer);
      const done = {
        [IN_PLACE_ANNOTATIONS.updateInProgress]: null,
        [IN_PLACE_ANNOTATIONS.readyToUpdate]: null,
        [IN_PLACE_ANNOTATIONS.restart]: null,
      };
      void env.client
        .resource<Machine>(RESOURCES.Machine)
        .mergePatch(
          { namespace: machine.metadata.namespace, name: machine.metadata.name! },
          { metadata: { annotations: done } },
        )
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }, doneAfterMs);
    timers.add(timer);
  });
}

describe('MachineDeployment controller', () => {
  let env: WorkloadEnv;
  let player: MachinePlayer;
  let watcher: MachineWatcher;
  let deployments: ResourceClient<MachineDeployment>;
  let machineSets: ResourceClient<MachineSet>;
  let machines: ResourceClient<Machine>;
  let bus: EventBusConnection;
  let responder: Subscription;
  const updateTimers = new Set<NodeJS.Timeout>();
  /** How the test's bootstrap provider answers can-update; each question is logged as `<machine>@<running version>`. */
  let answer: (request: CanUpdateMachineRequest) => CanUpdateMachineResponse = () => ({ inPlace: true });
  const asked: string[] = [];
  const cluster = 'demo';

  beforeAll(async () => {
    env = await startWorkloadEnv('md');
    deployments = env.client.resource<MachineDeployment>(RESOURCES.MachineDeployment);
    machineSets = env.client.resource<MachineSet>(RESOURCES.MachineSet);
    machines = env.client.resource<Machine>(RESOURCES.Machine);
    await createReadyCluster(env, cluster);
    await createTemplates(env, 'v1');
    await createTemplates(env, 'v2');
    await createTemplates(env, 'v3');
    // Machines take a while to become Available and to go away: rollouts have to wait for both.
    player = await new MachinePlayer(env, { availableAfterMs: 250, releaseAfterMs: 250 }).start();
    watcher = await new MachineWatcher(env).start();
    playInPlaceUpdates(env, watcher, updateTimers);
    // The bootstrap provider of the generic bootstrap configs, for in-place rollouts.
    bus = await EventBusConnection.connect({ servers: testNatsUrl(), name: 'md-test' });
    responder = serveCanUpdateMachine(
      bus.nc,
      env.topology.root,
      'GenericBootstrapConfig',
      (request) => {
        asked.push(`${request.machine.name}@${request.currentVersion}`);
        return Promise.resolve(answer(request));
      },
      silentLogger(),
    );
  });
  afterAll(async () => {
    for (const timer of updateTimers) clearTimeout(timer);
    responder?.unsubscribe();
    await bus?.close();
    await watcher?.stop();
    await player?.stop();
    await env?.stop();
  });

  const ns = () => env.ns.name;
  const createDeployment = (name: string, replicas: number, spec: Partial<MachineDeployment['spec']> = {}) =>
    deployments.create({
      apiVersion: RESOURCES.MachineDeployment.apiVersion,
      kind: RESOURCES.MachineDeployment.kind,
      metadata: { name, namespace: ns() },
      spec: {
        clusterName: cluster,
        replicas,
        selector: { matchLabels: { pool: name } },
        template: machineTemplate(cluster, 'v1', { pool: name }),
        ...spec,
      },
    });
  const patch = (name: string, body: Record<string, unknown>) =>
    deployments.mergePatch({ namespace: ns(), name }, body);
  const useTemplate = (name: string, template: string) =>
    patch(name, {
      spec: {
        template: {
          spec: {
            infrastructureRef: { name: template },
            bootstrap: { configRef: { name: template } },
          },
        },
      },
    });
  const setsOf = async (name: string) => {
    const md = await deployments.get({ namespace: ns(), name });
    return (await machineSets.list({ namespace: ns() })).items.filter(
      (ms) => getControllerOf(ms)?.uid === md.metadata.uid,
    );
  };
  const machinesOfSet = async (set: MachineSet) =>
    (await machines.list({ namespace: ns() })).items.filter(
      (m) => getControllerOf(m)?.uid === set.metadata.uid,
    );
  const templateOf = (set: MachineSet) => set.spec.template.spec.infrastructureRef.name;
  /** All Machines run `template`, are Available, and the deployment's status says so. */
  const rolledOut = (name: string, replicas: number, template: string) =>
    eventually(
      `${name} rolled out to ${replicas} x ${template}`,
      async () => {
        const md = await deployments.get({ namespace: ns(), name });
        const all = (await machines.list({ namespace: ns() })).items.filter(
          (m) => m.metadata.labels?.[LABELS.deploymentName] === name,
        );
        const sets = await setsOf(name);
        const current = sets
          .filter((s) => templateOf(s) === template)
          .sort(
            (a, b) =>
              Number(b.metadata.annotations?.[ANNOTATIONS.revision]) -
              Number(a.metadata.annotations?.[ANNOTATIONS.revision]),
          )[0];
        if (!current) return false;
        const ok =
          all.length === replicas &&
          all.every((m) => getControllerOf(m)?.uid === current.metadata.uid) &&
          (await machinesOfSet(current)).filter((m) =>
            m.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'),
          ).length === replicas &&
          md.status?.replicas === replicas &&
          md.status?.availableReplicas === replicas &&
          md.status?.upToDateReplicas === replicas &&
          md.status?.observedGeneration === md.metadata.generation;
        return ok ? { md, sets, current } : false;
      },
      60_000,
    );

  it('rolls out a new template without ever exceeding maxSurge or maxUnavailable', async () => {
    await createDeployment('surge', 3, {
      rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
    });
    await createDeployment('unavailable', 4, {
      rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '50%' } } },
    });
    await rolledOut('surge', 3, 'v1');
    await rolledOut('unavailable', 4, 'v1');
    watcher.record('surge');
    watcher.record('unavailable');
    await useTemplate('surge', 'v2');
    await useTemplate('unavailable', 'v2');
    const surge = await rolledOut('surge', 3, 'v2');
    const unavailable = await rolledOut('unavailable', 4, 'v2');

    const surgeMoments = watcher.moments.get('surge')!;
    const unavailableMoments = watcher.moments.get('unavailable')!;
    // Every Machine was replaced: the watch saw each creation and deletion.
    expect(surgeMoments.length).toBeGreaterThan(12);
    expect(Math.max(...surgeMoments.map((m) => m.total))).toBe(4);
    expect(Math.min(...surgeMoments.map((m) => m.available))).toBe(3);
    expect(Math.max(...unavailableMoments.map((m) => m.total))).toBe(4);
    expect(Math.min(...unavailableMoments.map((m) => m.available))).toBe(2);

    expect(surge.md.metadata.annotations?.[ANNOTATIONS.revision]).toBe('2');
    expect(surge.current.metadata.annotations).toMatchObject({
      [ANNOTATIONS.revision]: '2',
      [ANNOTATIONS.desiredReplicas]: '3',
      [ANNOTATIONS.maxReplicas]: '4',
    });
    expect(surge.current.metadata.labels?.[LABELS.machineTemplateHash]).toMatch(/^[0-9a-f]{10}$/);
    expect(surge.current.spec.selector.matchLabels?.[LABELS.machineTemplateHash]).toBe(
      surge.current.metadata.labels?.[LABELS.machineTemplateHash],
    );
    const conditions = Object.fromEntries(
      (surge.md.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]),
    );
    expect(conditions).toMatchObject({
      Available: 'True/Available',
      RollingOut: 'False/NotRollingOut',
      ScalingUp: 'False/NotScalingUp',
      ScalingDown: 'False/NotScalingDown',
      MachinesReady: 'True/Ready',
      MachinesUpToDate: 'True/UpToDate',
    });
    expect(surge.md.status?.phase).toBe('Running');
    for (const machine of await machinesOfSet(surge.current)) {
      expect(machine.status?.conditions?.find((c) => c.type === 'UpToDate')).toMatchObject({
        status: 'True',
        reason: 'UpToDate',
      });
    }
    expect(unavailable.sets.length).toBeLessThanOrEqual(2);
  });

  it('makes its Cluster an owner of the templates it uses, as upstream does, once', async () => {
    await createTemplates(env, 'owned');
    await createDeployment('owner', 1, { template: machineTemplate(cluster, 'owned', { pool: 'owner' }) });
    const theCluster = await env.client
      .resource<Cluster>(RESOURCES.Cluster)
      .get({ namespace: ns(), name: cluster });
    for (const kind of ['GenericInfrastructureMachineTemplate', 'GenericBootstrapConfigTemplate']) {
      const owners = await eventually(`${kind} owned by the Cluster`, async () => {
        const template = await env.client.resource(resourceOf(kind)).get({ namespace: ns(), name: 'owned' });
        const refs = template.metadata?.ownerReferences ?? [];
        return refs.some((r) => r.uid === theCluster.metadata.uid) ? refs : undefined;
      });
      expect(owners).toEqual([
        {
          apiVersion: RESOURCES.Cluster.apiVersion,
          kind: 'Cluster',
          name: cluster,
          uid: theCluster.metadata.uid,
        },
      ]);
    }
  });

  it('neither scales nor rolls out while paused', async () => {
    await createDeployment('paused', 2);
    const before = await rolledOut('paused', 2, 'v1');
    await patch('paused', { spec: { paused: true, replicas: 3 } });
    await useTemplate('paused', 'v2');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const sets = await setsOf('paused');
    expect(sets.map((s) => [s.metadata.name, s.spec.replicas])).toEqual([[before.current.metadata.name, 2]]);
    await patch('paused', { spec: { paused: false } });
    await rolledOut('paused', 3, 'v2');
  });

  const versioned = (name: string, version: string, rollout: MachineDeployment['spec']['rollout']) => {
    const template = machineTemplate(cluster, 'v1', { pool: name });
    template.spec.version = version;
    return createDeployment(name, 2, { template, rollout });
  };
  const machinesOf = async (name: string) =>
    (await machines.list({ namespace: ns() })).items.filter(
      (m) => m.metadata.labels?.[LABELS.deploymentName] === name,
    );
  /** `replicas` Machines, all in the set of `version`, serving and on that version. */
  const settledOn = (name: string, replicas: number, version: string) =>
    eventually(
      `${name}: ${replicas} Machines on ${version}`,
      async () => {
        const set = (await setsOf(name)).find((s) => s.spec.template.spec.version === version);
        const all = await machinesOf(name);
        const ok =
          set !== undefined &&
          all.length === replicas &&
          all.every(
            (m) => getControllerOf(m)?.uid === set.metadata.uid && servesNow(m) && m.spec.version === version,
          );
        return ok ? all : false;
      },
      60_000,
    );
  const uidsByName = (list: readonly Machine[]) =>
    Object.fromEntries(list.map((m) => [m.metadata.name!, m.metadata.uid!]));

  it('in place with maxUnavailable 0: drops the surge Machine at the end, never the serving ones below replicas', async () => {
    answer = () => ({ inPlace: true, restart: true });
    await versioned('surge-ip', 'v1.34.4', {
      inPlace: 'Preferred',
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    });
    const before = uidsByName(await settledOn('surge-ip', 2, 'v1.34.4'));
    watcher.record('surge-ip');

    await patch('surge-ip', { spec: { template: { spec: { version: 'v1.35.4' } } } });
    const after = await settledOn('surge-ip', 2, 'v1.35.4');

    // Both Machines were updated where they stand; the one surged for the rollout is the one that went.
    expect(uidsByName(after)).toEqual(before);
    const moments = watcher.moments.get('surge-ip')!;
    expect(Math.max(...moments.map((m) => m.total))).toBe(3);
    expect(Math.min(...moments.map((m) => m.serving))).toBe(2);
  });

  it('in place, asks about each Machine on its own: one the provider refuses is replaced, the other updated', async () => {
    // After a partial failure the Machines run different versions: v1.35 may go to v1.36, v1.34 may not (a skip).
    answer = (request) => {
      const minor = (v: string | undefined) => Number(/^v\d+\.(\d+)\./.exec(v ?? '')?.[1]);
      return minor(request.desiredVersion) - minor(request.currentVersion) <= 1
        ? { inPlace: true, restart: true }
        : {
            inPlace: false,
            reason: `skips a minor (${request.currentVersion} -> ${request.desiredVersion})`,
            fields: ['spec.version'],
          };
    };
    await versioned('mixed-ip', 'v1.34.4', {
      inPlace: 'Preferred',
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
    });
    const [first, second] = (await settledOn('mixed-ip', 2, 'v1.34.4')).sort((a, b) =>
      a.metadata.name! < b.metadata.name! ? -1 : 1,
    );
    // The kubelet versions the Machines report, written as another field manager than the player's conditions.
    const kubelet = (m: Machine, version: string) =>
      machines.applyStatus(
        {
          metadata: { name: m.metadata.name, namespace: ns() },
          status: { nodeInfo: { kubeletVersion: `${version}+k3s1` } },
        } as unknown as Machine,
        { fieldManager: 'capstan-test-node-info' },
      );
    await kubelet(first!, 'v1.35.4');
    await kubelet(second!, 'v1.34.4');
    asked.length = 0;

    await patch('mixed-ip', { spec: { template: { spec: { version: 'v1.36.0' } } } });
    const after = await settledOn('mixed-ip', 2, 'v1.36.0');

    expect(asked).toEqual(
      expect.arrayContaining([`${first!.metadata.name}@v1.35.4`, `${second!.metadata.name}@v1.34.4`]),
    );
    expect(after.find((m) => m.metadata.name === first!.metadata.name)?.metadata.uid).toBe(
      first!.metadata.uid,
    );
    expect(after.map((m) => m.metadata.name)).not.toContain(second!.metadata.name);
  });

  it('clears a moving-to an aborted reconcile left, and puts the Machine’s bootstrap config back', async () => {
    await versioned('stale-ip', 'v1.34.4', undefined);
    const [machine] = await settledOn('stale-ip', 2, 'v1.34.4');
    const configRef = machine!.spec.bootstrap.configRef!;
    const configs = env.client.resource(resourceOf(configRef.kind));
    // An aborted move: its bootstrap config already given another spec, the Machine marked for a set that never got it.
    await configs.jsonPatch({ namespace: ns(), name: configRef.name }, [
      { op: 'add', path: '/spec', value: { flavor: 'v2' } },
    ]);
    await machines.mergePatch(
      { namespace: ns(), name: machine!.metadata.name! },
      { metadata: { annotations: { [IN_PLACE_ANNOTATIONS.movingTo]: 'stale-ip-abandoned' } } },
    );

    // A set frozen by the mark would never grow.
    await patch('stale-ip', { spec: { replicas: 3 } });
    await settledOn('stale-ip', 3, 'v1.34.4');

    const cleared = await machines.get({ namespace: ns(), name: machine!.metadata.name! });
    expect(cleared.metadata.annotations?.[IN_PLACE_ANNOTATIONS.movingTo]).toBeUndefined();
    expect(
      ((await configs.get({ namespace: ns(), name: configRef.name })) as { spec?: unknown }).spec,
    ).toEqual({ flavor: 'v1' });
  });
});
