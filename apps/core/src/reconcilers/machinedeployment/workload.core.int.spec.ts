import {
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineDeployment,
  type MachineHealthCheck,
  type MachineSet,
} from '@capstan/api';
import { getControllerOf, type ResourceClient } from '@capstan/kube';
import type { V1Node } from '@kubernetes/client-node';
import { NODES } from '../../remote/resources.js';
import {
  condition,
  eventually,
  startCoreHarness,
  v1beta1Condition,
  type CoreHarness,
  type Unstructured,
} from '../../testing/core-test-harness.js';

// The workload controllers inside the whole core service: the Machine controller (not the tests) brings the
// Machines up, from provider objects the tests play by hand, and the MachineSet, MachineDeployment and
// MachineHealthCheck controllers share those Machines with it.

const INFRA_TEMPLATE = 'GenericInfrastructureMachineTemplate';
const BOOTSTRAP_TEMPLATE = 'GenericBootstrapConfigTemplate';
const INFRA = 'GenericInfrastructureMachine';
const BOOTSTRAP = 'GenericBootstrapConfig';
const CLUSTER = 'wl';

describe('MachineDeployment and MachineHealthCheck in the core service', () => {
  let h: CoreHarness;
  let deployments: ResourceClient<MachineDeployment>;
  let timer: NodeJS.Timeout | undefined;
  const provisioned = new Set<string>();

  const providerID = (name: string) => `test://${h.namespace}/${name}`;
  const nodeName = (name: string) => `${h.namespace}-${name}`;

  /** Plays the bootstrap and infrastructure providers for every clone the MachineSets create. */
  async function playProviders(): Promise<void> {
    for (const config of (await h.kind(BOOTSTRAP).list({ namespace: h.namespace })).items) {
      const name = config.metadata!.name!;
      if (provisioned.has(`b/${name}`) || config.metadata?.deletionTimestamp) continue;
      provisioned.add(`b/${name}`);
      await h.setStatus(BOOTSTRAP, name, {
        initialization: { dataSecretCreated: true },
        dataSecretName: `${name}-data`,
      });
      await h.handoff('bootstrap.data-secret-created', BOOTSTRAP, name, {
        clusterName: CLUSTER,
        machineName: name,
        dataSecretName: `${name}-data`,
      });
    }
    for (const infra of (await h.kind(INFRA).list({ namespace: h.namespace })).items) {
      const name = infra.metadata!.name!;
      if (provisioned.has(`i/${name}`) || infra.metadata?.deletionTimestamp) continue;
      provisioned.add(`i/${name}`);
      await h
        .kind(INFRA)
        .mergePatch({ namespace: h.namespace, name }, { spec: { providerID: providerID(name) } });
      await h.setStatus(INFRA, name, { initialization: { provisioned: true } });
      await h.createNode(nodeName(name), providerID(name));
      await h.handoff('infrastructure-machine.provisioned', INFRA, name, {
        clusterName: CLUSTER,
        machineName: name,
        providerID: providerID(name),
      });
    }
  }

  beforeAll(async () => {
    h = await startCoreHarness({ prefix: 'core-wl' });
    deployments = h.client.resource<MachineDeployment>(RESOURCES.MachineDeployment);
    await h.create('GenericInfrastructureCluster', 'wl-infra', {
      controlPlaneEndpoint: { host: '10.2.0.1', port: 6443 },
    });
    await h.setStatus('GenericInfrastructureCluster', 'wl-infra', { initialization: { provisioned: true } });
    await h.create('GenericControlPlane', 'wl-cp');
    await h.setStatus('GenericControlPlane', 'wl-cp', { initialization: { controlPlaneInitialized: true } });
    await h.createKubeconfigSecret(CLUSTER);
    await h.clusters.create({
      metadata: { name: CLUSTER, namespace: h.namespace },
      spec: {
        infrastructureRef: h.ref('GenericInfrastructureCluster', 'wl-infra'),
        controlPlaneRef: h.ref('GenericControlPlane', 'wl-cp'),
      },
    } as Cluster);
    for (const flavor of ['a', 'b']) {
      await h.create(INFRA_TEMPLATE, `tpl-${flavor}`, { template: { spec: { flavor } } });
    }
    await h.create(BOOTSTRAP_TEMPLATE, 'boot', { template: { spec: {} } });
    const tick = () => {
      timer = setTimeout(
        () =>
          void playProviders()
            .catch(() => undefined)
            .finally(tick),
        200,
      );
    };
    tick();
  });
  afterAll(async () => {
    clearTimeout(timer);
    timer = undefined;
    await h?.stop();
  });

  const machinesOf = async () =>
    (await h.machines.list({ namespace: h.namespace })).items.filter(
      (m) => m.metadata.labels?.[LABELS.deploymentName] === 'md',
    );
  /** Every Machine of the deployment Running and Available on `flavor`, and the deployment Available. */
  const runningOn = (flavor: string, replicas: number) =>
    eventually(
      `${replicas} machines running on ${flavor}`,
      async () => {
        const md = await deployments.get({ namespace: h.namespace, name: 'md' });
        const machines = await machinesOf();
        const ok =
          machines.length === replicas &&
          machines.every(
            (m) =>
              m.spec.infrastructureRef.kind === INFRA &&
              m.status?.phase === 'Running' &&
              condition(m, 'Available')?.status === 'True' &&
              condition(m, 'UpToDate')?.status === 'True',
          ) &&
          md.status?.availableReplicas === replicas &&
          condition(md, 'Available')?.status === 'True' &&
          (
            await Promise.all(
              machines.map((m) =>
                h.kind(INFRA).get({ namespace: h.namespace, name: m.spec.infrastructureRef.name }),
              ),
            )
          ).every((infra) => (infra as Unstructured & { spec: { flavor?: string } }).spec.flavor === flavor);
        return ok ? machines : false;
      },
      60_000,
    );

  it('brings a MachineDeployment up through the Machine controller and rolls it to a new template', async () => {
    await deployments.create({
      apiVersion: RESOURCES.MachineDeployment.apiVersion,
      kind: RESOURCES.MachineDeployment.kind,
      metadata: { name: 'md', namespace: h.namespace },
      spec: {
        clusterName: CLUSTER,
        replicas: 2,
        selector: { matchLabels: { pool: 'md' } },
        template: {
          metadata: { labels: { pool: 'md' } },
          spec: {
            clusterName: CLUSTER,
            bootstrap: { configRef: h.ref(BOOTSTRAP_TEMPLATE, 'boot') },
            infrastructureRef: h.ref(INFRA_TEMPLATE, 'tpl-a'),
          },
        },
      },
    });
    const first = await runningOn('a', 2);
    // The Machine controller took the clones over as their controller.
    const infra = await h
      .kind(INFRA)
      .get({ namespace: h.namespace, name: first[0]!.spec.infrastructureRef.name });
    expect(getControllerOf(infra)).toMatchObject({ kind: 'Machine', name: first[0]!.metadata.name });

    // The v1beta1 status upstream's core keeps writing, for clients reading cluster.x-k8s.io/v1beta1: every kind
    // Ready in status.deprecated.v1beta1 (which the CRDs keep), and the old counters.
    await eventually(
      'status.deprecated.v1beta1 Ready on the Cluster, the MachineDeployment, its MachineSet and its Machines',
      async () => {
        const v1beta1Ready = (obj: Parameters<typeof v1beta1Condition>[0]) =>
          v1beta1Condition(obj, 'Ready')?.status === 'True';
        const cluster = await h.clusters.get({ namespace: h.namespace, name: CLUSTER });
        const md = await deployments.get({ namespace: h.namespace, name: 'md' });
        const sets = (
          await h.client.resource<MachineSet>(RESOURCES.MachineSet).list({ namespace: h.namespace })
        ).items;
        const machines = await machinesOf();
        return (
          [cluster, md, ...sets, ...machines].every(v1beta1Ready) &&
          md.status?.deprecated?.v1beta1?.readyReplicas === 2 &&
          md.status.deprecated.v1beta1.availableReplicas === 2 &&
          md.status.deprecated.v1beta1.updatedReplicas === 2 &&
          sets.every((ms) => ms.status?.deprecated?.v1beta1?.readyReplicas === 2) &&
          machines.every((m) =>
            ['BootstrapReady', 'InfrastructureReady', 'NodeHealthy'].every(
              (type) => v1beta1Condition(m, type)?.status === 'True',
            ),
          )
        );
      },
      30_000,
    );

    await deployments.mergePatch(
      { namespace: h.namespace, name: 'md' },
      { spec: { template: { spec: { infrastructureRef: { name: 'tpl-b' } } } } },
    );
    const second = await runningOn('b', 2);
    expect(second.map((m) => m.metadata.name)).not.toContain(first[0]!.metadata.name);
  });

  it('has a MachineHealthCheck remediate a Machine whose Node went NotReady, and the deployment replace it', async () => {
    const checks = h.client.resource<MachineHealthCheck>(RESOURCES.MachineHealthCheck);
    await checks.create({
      apiVersion: RESOURCES.MachineHealthCheck.apiVersion,
      kind: RESOURCES.MachineHealthCheck.kind,
      metadata: { name: 'md', namespace: h.namespace },
      spec: {
        clusterName: CLUSTER,
        selector: { matchLabels: { pool: 'md' } },
        checks: { unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: 300 }] },
      },
    });
    const before = await eventually('all healthy', async () => {
      const machines = await runningOn('b', 2);
      return machines.every((m) => condition(m, 'HealthCheckSucceeded')?.status === 'True') && machines;
    });
    // In v1beta1 too: the health check's RemediationAllowed, the Machines' HealthCheckSucceeded.
    await eventually('RemediationAllowed and HealthCheckSucceeded in status.deprecated.v1beta1', async () => {
      const mhc = await checks.get({ namespace: h.namespace, name: 'md' });
      const machines = await machinesOf();
      return (
        v1beta1Condition(mhc, 'RemediationAllowed')?.status === 'True' &&
        machines.every((m) => v1beta1Condition(m, 'HealthCheckSucceeded')?.status === 'True')
      );
    });
    const victim: Machine = before[0]!;
    const longAgo = new Date(Date.now() - 600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await h.client.resource<V1Node>(NODES).patchStatus(
      { name: victim.status!.nodeRef!.name },
      {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message: '',
            lastHeartbeatTime: longAgo,
            lastTransitionTime: longAgo,
          },
        ],
      },
    );
    const after = await eventually(
      'the unhealthy machine replaced',
      async () => {
        const machines = await runningOn('b', 2);
        return !machines.some((m) => m.metadata.name === victim.metadata.name) && machines;
      },
      60_000,
    );
    expect(after).toHaveLength(2);
  });
});
