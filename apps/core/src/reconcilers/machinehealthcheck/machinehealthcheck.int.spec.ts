import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  RESOURCES,
  type Condition,
  type Machine,
  type MachineHealthCheck,
  type MachineSet,
} from '@capstan/api';
import { getControllerOf, isNotFound, NODES, type ResourceClient } from '@capstan/kube';
import { testNatsUrl } from '@capstan/testing';
import type { KubernetesObject, V1Node } from '@kubernetes/client-node';
import {
  MachinePlayer,
  createKubeconfigSecret,
  createReadyCluster,
  createTemplates,
  eventually,
  machineTemplate,
  resourceOf,
  startWorkloadEnv,
  type WorkloadEnv,
} from '../../testing/workload-env.js';
import { MHC_FIELD_MANAGER } from './machine-health-conditions.js';

const rfc3339 = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * The test API server doubles as every cluster's workload cluster (their `<cluster>-kubeconfig` Secrets hold the
 * test kubeconfig): Nodes are created there with the Machine's providerID, and their conditions are set through
 * the status subresource with lastTransitionTime in the past instead of waiting out the timeouts.
 */
describe('MachineHealthCheck controller', () => {
  let env: WorkloadEnv;
  let player: MachinePlayer;
  let nats: NatsConnection;
  let machineSets: ResourceClient<MachineSet>;
  let machines: ResourceClient<Machine>;
  let checks: ResourceClient<MachineHealthCheck>;
  let nodes: ResourceClient<V1Node & { metadata: { name: string } }>;
  const createdNodes = new Set<string>();
  const lifecycle: { event: string; machine: string; reason?: string }[] = [];

  const ns = () => env.ns.name;
  const nodeNameOf = (machine: Machine) => `${ns()}-${machine.metadata.name}`;

  beforeAll(async () => {
    env = await startWorkloadEnv('mhc');
    machineSets = env.client.resource<MachineSet>(RESOURCES.MachineSet);
    machines = env.client.resource<Machine>(RESOURCES.Machine);
    checks = env.client.resource<MachineHealthCheck>(RESOURCES.MachineHealthCheck);
    nodes = env.client.resource(NODES);
    nats = await connect({ servers: testNatsUrl() });
    const subscription = nats.subscribe(`${env.topology.root}.lifecycle.machine.>`);
    void (async () => {
      for await (const message of subscription) {
        const event = message.json<{ type: string; data: { object: { name: string }; reason?: string } }>();
        lifecycle.push({
          event: event.type.split('.').slice(-2).join('.'),
          machine: event.data.object.name,
          reason: event.data.reason,
        });
      }
    })();
    await createTemplates(env, 'workers');
    player = await new MachinePlayer(env, {
      availableAfterMs: 100,
      releaseAfterMs: 100,
      nodeName: nodeNameOf,
      // Machines of cluster "startup" never get a Node.
      comesUp: (m) => m.spec.clusterName !== 'startup',
      beforeAvailable: (m) => createNode(m),
    }).start();
    // Started first: its Machine must go without a Node for the whole startup timeout (30 s, the minimum).
    await scenario('startup', 1, { checks: { nodeStartupTimeoutSeconds: 30 } });
  });
  afterAll(async () => {
    await player?.stop();
    await nats?.close();
    for (const name of createdNodes) await nodes.delete({ name }).catch(() => undefined);
    await env?.stop();
  });

  async function createNode(machine: Machine): Promise<void> {
    const name = nodeNameOf(machine);
    const providerID = `test://${ns()}/${machine.metadata.name}`;
    await machines.mergePatch({ namespace: ns(), name: machine.metadata.name! }, { spec: { providerID } });
    await nodes.create({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } });
    createdNodes.add(name);
    await setNodeReady(name, 'True', 60_000);
  }

  async function setNodeReady(
    name: string,
    status: 'True' | 'False' | 'Unknown',
    sinceMsAgo: number,
  ): Promise<void> {
    await nodes.mergePatch(
      { name },
      {
        status: {
          conditions: [
            {
              type: 'Ready',
              status,
              reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
              message: '',
              lastHeartbeatTime: rfc3339(0),
              lastTransitionTime: rfc3339(sinceMsAgo),
            },
          ],
        },
      },
      { subresource: 'status' },
    );
  }

  /** A cluster whose workload cluster is the test API server, a MachineSet of `replicas` and a health check. */
  async function scenario(
    cluster: string,
    replicas: number,
    spec: Partial<MachineHealthCheck['spec']> = {},
    options: { bootstrapDataSecret?: boolean } = {},
  ): Promise<void> {
    const template = machineTemplate(cluster, 'workers', { pool: cluster });
    // Without a bootstrap config clone, a GenericBootstrapConfig named after the Machine is free for a remediation request.
    if (options.bootstrapDataSecret) template.spec.bootstrap = { dataSecretName: `${cluster}-bootstrap` };
    await createReadyCluster(env, cluster);
    await createKubeconfigSecret(env, cluster);
    await machineSets.create({
      apiVersion: RESOURCES.MachineSet.apiVersion,
      kind: RESOURCES.MachineSet.kind,
      metadata: { name: cluster, namespace: ns() },
      spec: {
        clusterName: cluster,
        replicas,
        selector: { matchLabels: { pool: cluster } },
        template,
      },
    });
    await checks.create({
      apiVersion: RESOURCES.MachineHealthCheck.apiVersion,
      kind: RESOURCES.MachineHealthCheck.kind,
      metadata: { name: cluster, namespace: ns() },
      spec: {
        clusterName: cluster,
        selector: { matchLabels: { pool: cluster } },
        checks: {
          unhealthyNodeConditions: [
            { type: 'Ready', status: 'False', timeoutSeconds: 300 },
            { type: 'Ready', status: 'Unknown', timeoutSeconds: 300 },
          ],
        },
        ...spec,
      },
    });
  }

  const machinesOf = async (cluster: string) =>
    (await machines.list({ namespace: ns() })).items.filter(
      (m) => m.spec.clusterName === cluster && !m.metadata.deletionTimestamp,
    );
  const condition = (m: Machine | undefined, type: string): Condition | undefined =>
    m?.status?.conditions?.find((c) => c.type === type);
  const machineNamed = async (name: string) => {
    try {
      return await machines.get({ namespace: ns(), name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  /** Every Machine up and judged healthy, as the health check's status says. */
  const allHealthy = (cluster: string, replicas: number) =>
    eventually(`${cluster}: ${replicas} healthy machines`, async () => {
      const mhc = await checks.get({ namespace: ns(), name: cluster });
      const list = await machinesOf(cluster);
      const ok =
        list.length === replicas &&
        list.every((m) => condition(m, 'HealthCheckSucceeded')?.status === 'True') &&
        mhc.status?.expectedMachines === replicas &&
        mhc.status?.currentHealthy === replicas;
      return ok ? list.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1)) : false;
    });
  const replaced = (cluster: string, name: string, replicas: number) =>
    eventually(
      `${name} replaced`,
      async () => (await machineNamed(name)) === undefined && (await allHealthy(cluster, replicas)),
    );

  it('remediates a Machine whose Node is NotReady past the timeout, and one whose Node was deleted', async () => {
    await scenario('remedy', 3);
    const [first, second] = await allHealthy('remedy', 3);
    const mhc = await checks.get({ namespace: ns(), name: 'remedy' });
    expect(mhc.status?.targets).toHaveLength(3);
    expect(mhc.status?.conditions?.find((c) => c.type === 'RemediationAllowed')).toMatchObject({
      status: 'True',
    });
    expect(mhc.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('remedy');

    const victim = first!.metadata.name!;
    await setNodeReady(nodeNameOf(first!), 'False', 10 * 60_000);
    const marked = await eventually('HealthCheckSucceeded=False', async () => {
      const m = await machineNamed(victim);
      return condition(m, 'HealthCheckSucceeded')?.status === 'False'
        ? m
        : m === undefined
          ? ({} as Machine)
          : false;
    });
    // The mark may be seen before the MachineSet deletes the Machine, or the Machine already gone.
    if (marked.metadata) {
      expect(condition(marked, 'HealthCheckSucceeded')).toMatchObject({
        reason: 'UnhealthyNode',
        message: 'Health check failed: Condition Ready on Node is reporting status False for more than 5m0s',
      });
      expect(condition(marked, 'OwnerRemediated')?.status).toBe('False');
    }
    await replaced('remedy', victim, 3);
    await eventually(
      'lifecycle events published',
      () =>
        lifecycle.some(
          (e) => e.machine === victim && e.event === 'machine.unhealthy' && e.reason === 'UnhealthyNode',
        ) && lifecycle.some((e) => e.machine === victim && e.event === 'machine.remediated'),
    );

    const gone = second!.metadata.name!;
    await nodes.delete({ name: nodeNameOf(second!) });
    await replaced('remedy', gone, 3);

    // It wrote only its own conditions, under its own field manager: the Machine controller's stay as they were.
    for (const machine of await allHealthy('remedy', 3)) {
      const types = (machine.status?.conditions ?? []).map((c) => c.type).sort();
      expect(types).toEqual([
        'Available',
        'HealthCheckSucceeded',
        'InfrastructureReady',
        'NodeHealthy',
        'Ready',
      ]);
      const owned = JSON.stringify(
        machine.metadata.managedFields?.find((f) => f.manager === MHC_FIELD_MANAGER)?.fieldsV1,
      );
      expect(owned).toContain('HealthCheckSucceeded');
      expect(owned).not.toContain('Available');
    }
  });

  it('short-circuits when more Machines are unhealthy than triggerIf allows, and resumes once fewer are', async () => {
    await scenario('limit', 3, { remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 1 } } });
    const [a, b] = await allHealthy('limit', 3);
    // Both just short of the 300 s timeout: still starting to count as not healthy one at a time (which keeps the
    // first from being remediated while it is the only one), then both time out together.
    await setNodeReady(nodeNameOf(a!), 'Unknown', 297_000);
    await setNodeReady(nodeNameOf(b!), 'False', 297_000);
    const mhc = await eventually('remediation short-circuited', async () => {
      const current = await checks.get({ namespace: ns(), name: 'limit' });
      const allowed = current.status?.conditions?.find((c) => c.type === 'RemediationAllowed');
      return allowed?.status === 'False' && current.status?.currentHealthy === 1 ? current : false;
    });
    expect(mhc.status?.conditions?.find((c) => c.type === 'RemediationAllowed')).toMatchObject({
      reason: 'TooManyUnhealthy',
      message:
        'Remediation is not allowed, the number of not started or unhealthy machines exceeds unhealthyLessThanOrEqualTo (total: 3, unhealthy: 2, unhealthyLessThanOrEqualTo: 1)',
    });
    expect(mhc.status?.remediationsAllowed).toBe(0);
    // Both are marked unhealthy, yet neither is handed to its owner.
    await eventually('both marked unhealthy', async () =>
      (await Promise.all([a, b].map((m) => machineNamed(m!.metadata.name!)))).every(
        (m) => condition(m, 'HealthCheckSucceeded')?.status === 'False',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (const m of [a, b]) {
      const current = await machineNamed(m!.metadata.name!);
      expect(current?.metadata.deletionTimestamp).toBeUndefined();
      expect(condition(current, 'OwnerRemediated')).toBeUndefined();
    }

    await setNodeReady(nodeNameOf(a!), 'True', 0);
    await replaced('limit', b!.metadata.name!, 3);
    expect(await machineNamed(a!.metadata.name!)).toBeDefined();
  });

  it('creates an external remediation request from remediation.templateRef, and deletes it once healthy', async () => {
    await env.client.resource(resourceOf('GenericBootstrapConfigTemplate')).create({
      apiVersion: 'bootstrap.generic.capstan.dev/v1beta2',
      kind: 'GenericBootstrapConfigTemplate',
      metadata: { name: 'remediation', namespace: ns() },
      spec: { template: { spec: { strategy: 'reboot' } } },
    } as KubernetesObject);
    await scenario(
      'external',
      2,
      {
        remediation: {
          templateRef: {
            apiVersion: 'bootstrap.generic.capstan.dev/v1beta2',
            kind: 'GenericBootstrapConfigTemplate',
            name: 'remediation',
          },
        },
      },
      { bootstrapDataSecret: true },
    );
    const [target] = await allHealthy('external', 2);
    const name = target!.metadata.name!;
    const requests = env.client.resource(resourceOf('GenericBootstrapConfig'));
    await setNodeReady(nodeNameOf(target!), 'False', 10 * 60_000);
    const request = await eventually('remediation request', async () => {
      try {
        return await requests.get({ namespace: ns(), name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
    expect(request.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'Machine',
      name,
      uid: target!.metadata.uid,
    });
    expect(request.metadata?.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe('remediation');
    expect((request as unknown as { spec: unknown }).spec).toEqual({ strategy: 'reboot' });
    const marked = await eventually('ExternallyRemediated', async () => {
      const m = await machineNamed(name);
      return condition(m, 'ExternallyRemediated') ? m : false;
    });
    expect(condition(marked, 'ExternallyRemediated')).toMatchObject({
      status: 'False',
      reason: 'WaitingForRemediation',
    });
    expect(condition(marked, 'OwnerRemediated')).toBeUndefined();
    expect(marked.metadata.deletionTimestamp).toBeUndefined();

    await setNodeReady(nodeNameOf(target!), 'True', 0);
    await eventually('request deleted and condition dropped', async () => {
      const m = await machineNamed(name);
      const left = await requests
        .get({ namespace: ns(), name })
        .catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
      return (
        !left &&
        !condition(m, 'ExternallyRemediated') &&
        condition(m, 'HealthCheckSucceeded')?.status === 'True'
      );
    });
  });

  it('remediates a Machine that got no Node within nodeStartupTimeoutSeconds', async () => {
    const first = await eventually('the startup machine', async () => (await machinesOf('startup'))[0]);
    const marked = await eventually(
      'NodeStartupTimeout',
      async () => {
        const m = await machineNamed(first.metadata.name!);
        if (!m)
          return lifecycle.find((e) => e.machine === first.metadata.name && e.event === 'machine.unhealthy');
        return condition(m, 'HealthCheckSucceeded')?.reason === 'NodeStartupTimeout' ? m : false;
      },
      60_000,
    );
    expect(marked).toBeDefined();
    await eventually('replaced', async () => {
      const list = await machinesOf('startup');
      return (
        (await machineNamed(first.metadata.name!)) === undefined &&
        list.length === 1 &&
        getControllerOf(list[0]!)?.name === 'startup'
      );
    });
    expect(
      lifecycle.some((e) => e.machine === first.metadata.name && e.reason === 'NodeStartupTimeout'),
    ).toBe(true);
  });
});
