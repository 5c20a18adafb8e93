import { FINALIZERS, RESOURCES, type Machine, type MachineSet } from '@capstan/api';
import { EVENTS_V1, getControllerOf, type KubeEvent, type ResourceClient } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';
import { MHC_FIELD_MANAGER } from '../machinehealthcheck/machine-health-conditions.js';
import {
  MachinePlayer,
  PLAYER_FIELD_MANAGER,
  createReadyCluster,
  createTemplates,
  eventually,
  machineTemplate,
  resourceOf,
  type WorkloadEnv,
  startWorkloadEnv,
} from '../../testing/workload-env.js';

describe('MachineSet controller', () => {
  let env: WorkloadEnv;
  let player: MachinePlayer;
  let machineSets: ResourceClient<MachineSet>;
  let machines: ResourceClient<Machine>;
  const cluster = 'demo';

  beforeAll(async () => {
    env = await startWorkloadEnv('ms');
    machineSets = env.client.resource<MachineSet>(RESOURCES.MachineSet);
    machines = env.client.resource<Machine>(RESOURCES.Machine);
    await createReadyCluster(env, cluster);
    await createTemplates(env, 'workers');
    player = await new MachinePlayer(env, { availableAfterMs: 100, releaseAfterMs: 100 }).start();
  });
  afterAll(async () => {
    await player?.stop();
    await env?.stop();
  });

  const ns = () => env.ns.name;
  const machinesOf = async (set: string) =>
    (await machines.list({ namespace: ns() })).items.filter((m) => getControllerOf(m)?.name === set);
  const live = async (set: string) => (await machinesOf(set)).filter((m) => !m.metadata.deletionTimestamp);
  const createSet = (name: string, replicas: number, extra: Partial<MachineSet['spec']> = {}) =>
    machineSets.create({
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: RESOURCES.MachineSet.kind,
      metadata: { name, namespace: ns() },
      spec: {
        clusterName: cluster,
        replicas,
        selector: { matchLabels: { pool: name } },
        template: machineTemplate(cluster, 'workers', { pool: name, tier: 'worker' }),
        ...extra,
      },
    });
  /** Plays a MachineHealthCheck: its conditions on a Machine, under its field manager. */
  const playHealthCheck = (name: string, types: Record<string, string>) =>
    machines.applyStatus(
      {
        metadata: { name, namespace: ns() },
        status: {
          conditions: Object.entries(types).map(([type, reason]) => ({
            type,
            status: 'False',
            reason,
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          })),
        },
      } as unknown as Machine,
      { fieldManager: MHC_FIELD_MANAGER },
    );
  const settled = (name: string, replicas: number) =>
    eventually(`${name} at ${replicas} available machines`, async () => {
      const set = await machineSets.get({ namespace: ns(), name });
      const ms = await machinesOf(name);
      return (
        ms.length === replicas &&
        set.status?.availableReplicas === replicas &&
        set.status?.replicas === replicas &&
        set.status.observedGeneration === set.metadata.generation
      );
    });

  it('creates Machines from the template, cloning the infrastructure and bootstrap templates', async () => {
    await createSet('clones', 2);
    await settled('clones', 2);
    const set = await machineSets.get({ namespace: ns(), name: 'clones' });
    expect(set.metadata.finalizers).toContain(FINALIZERS.machineSet);
    expect(set.status?.selector).toBe('pool=clones');
    const conditions = Object.fromEntries(
      (set.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]),
    );
    expect(conditions).toMatchObject({
      ScalingUp: 'False/NotScalingUp',
      ScalingDown: 'False/NotScalingDown',
      MachinesReady: 'True/Ready',
      MachinesUpToDate: 'True/UpToDate',
      Remediating: 'False/NotRemediating',
      Deleting: 'False/NotDeleting',
      Paused: 'False/NotPaused',
    });
    for (const machine of await machinesOf('clones')) {
      expect(machine.metadata.labels).toMatchObject({
        pool: 'clones',
        tier: 'worker',
        'cluster.x-k8s.io/set-name': 'clones',
        'cluster.x-k8s.io/cluster-name': cluster,
      });
      expect(machine.metadata.finalizers).toContain(FINALIZERS.machine);
      expect(getControllerOf(machine)).toMatchObject({
        kind: 'MachineSet',
        name: 'clones',
        uid: set.metadata.uid,
      });
      const infraRef = machine.spec.infrastructureRef;
      const configRef = machine.spec.bootstrap.configRef!;
      expect(infraRef).toEqual({
        apiGroup: 'infrastructure.generic.capstan.dev',
        kind: 'GenericInfrastructureMachine',
        name: machine.metadata.name,
      });
      expect(configRef).toEqual({
        apiGroup: 'bootstrap.generic.capstan.dev',
        kind: 'GenericBootstrapConfig',
        name: machine.metadata.name,
      });
      const infra = await env.client
        .resource(resourceOf('GenericInfrastructureMachine'))
        .get({ namespace: ns(), name: infraRef.name });
      const bootstrap = await env.client
        .resource(resourceOf('GenericBootstrapConfig'))
        .get({ namespace: ns(), name: configRef.name });
      for (const [clone, templateKind] of [
        [infra, 'GenericInfrastructureMachineTemplate.infrastructure.generic.capstan.dev'],
        [bootstrap, 'GenericBootstrapConfigTemplate.bootstrap.generic.capstan.dev'],
      ] as const) {
        expect(clone.metadata?.annotations).toMatchObject({
          'cluster.x-k8s.io/cloned-from-name': 'workers',
          'cluster.x-k8s.io/cloned-from-groupkind': templateKind,
        });
        expect(clone.metadata?.labels).toMatchObject({
          'template-label': 'workers',
          'cluster.x-k8s.io/cluster-name': cluster,
        });
        expect((clone as KubernetesObject & { spec: unknown }).spec).toEqual({ flavor: 'workers' });
        expect(clone.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'MachineSet', name: 'clones' });
      }
    }
  });

  it('replaces a Machine a health check asked its owner to remediate', async () => {
    await createSet('remedy', 2);
    await settled('remedy', 2);
    const victim = (await machinesOf('remedy'))[0]!.metadata.name!;
    await playHealthCheck(victim, {
      HealthCheckSucceeded: 'UnhealthyNode',
      OwnerRemediated: 'WaitingForRemediation',
    });
    await eventually('the unhealthy Machine replaced', async () => {
      const names = (await live('remedy')).map((m) => m.metadata.name);
      return (
        names.length === 2 &&
        !names.includes(victim) &&
        !(await machinesOf('remedy')).some((m) => m.metadata.name === victim)
      );
    });
    await settled('remedy', 2);
  });

  it('replaces a Machine whose infrastructure machine is gone before it was provisioned, and says so', async () => {
    await createSet('stranded', 1);
    await settled('stranded', 1);
    const victim = (await machinesOf('stranded'))[0]!;
    const name = victim.metadata.name!;
    // Stranded: its clone deleted (as a clean-up racing a late create would), and the core reports it missing.
    await env.client.resource(resourceOf('GenericInfrastructureMachine')).delete({ namespace: ns(), name });
    await machines.applyStatus(
      {
        metadata: { name, namespace: ns() },
        status: {
          conditions: [
            {
              type: 'InfrastructureReady',
              status: 'False',
              reason: 'ObjectDoesNotExist',
              message: 'GenericInfrastructureMachine does not exist',
              lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
            },
          ],
        },
      } as unknown as Machine,
      { fieldManager: PLAYER_FIELD_MANAGER },
    );
    // Judged once the Machine is older than the grace (30 s).
    await eventually(
      'the stranded Machine replaced',
      async () => {
        const names = (await machinesOf('stranded')).map((m) => m.metadata.name);
        return names.length === 1 && !names.includes(name);
      },
      60_000,
    );
    const events = await env.client.resource<KubeEvent>(EVENTS_V1).list({ namespace: ns() });
    expect(
      events.items
        .filter((e) => e.reason === 'StrandedMachineReplaced' && e.regarding?.name === 'stranded')
        .map((e) => e.note),
    ).toEqual([
      `Replacing Machine ${name}: GenericInfrastructureMachine ${name} does not exist and it was never provisioned`,
    ]);
    await settled('stranded', 1);
  });

});
