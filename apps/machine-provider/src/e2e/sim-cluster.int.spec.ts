import { rmSync } from 'node:fs';
import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  BOOTSTRAP_GROUP,
  CONTROL_PLANE_GROUP,
  INFRASTRUCTURE_GROUP,
  RESOURCES,
  type Machine,
} from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import { createKubeClient, type KubeClient } from '@capstan/kube';
import { startService, type RunningService, type ServiceDefinition } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually,
  installCapstanCrds,
  testKubeConfig,
  type TestNamespace,
} from '@capstan/testing';
import { simClusterOptionsFromEnv, type SimMachineOptions } from '@capstan/sim';
// The end-to-end test runs every Capstan service in this one process, so it reaches into their apps.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createCoreService } from '../../../core/src/core-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { bootstrapProviderService } from '../../../bootstrap-provider/src/bootstrap-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { controlPlaneProviderService } from '../../../control-plane-provider/src/control-plane-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createClusterProviderService } from '../../../cluster-provider/src/service.js';
import { createMachineProviderService } from '../service.js';
import { testServiceOptions, testSimOptions } from '../testing/start-machine-provider.js';

// The whole hand-off, end to end, through the real services: core, cluster-provider, machine-provider,
// bootstrap-provider and control-plane-provider bring up a 1 control plane + 2 worker K3s cluster on sim
// machines, and its <cluster>-kubeconfig answers `get nodes` with three Ready nodes.

const SECRETS = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true } as const;
const K3S_VERSION = 'v1.34.1+k3s1';

describe('sim cluster end to end', () => {
  let ns: TestNamespace;
  let client: KubeClient;
  let options: SimMachineOptions;
  const services: RunningService[] = [];
  const topology = uniqueEventTopology('e2e');

  beforeAll(async () => {
    await installCapstanCrds(testKubeConfig());
    ns = await createTestNamespace('e2e');
    client = createKubeClient(testKubeConfig());
    options = testSimOptions({ provisioningJitter: 0.2 });
    const definitions: ServiceDefinition[] = [
      createCoreService(),
      createClusterProviderService({
        ...simClusterOptionsFromEnv({}),
        portRange: { min: 32000, max: 32499 },
      }),
      createMachineProviderService(options),
      bootstrapProviderService,
      controlPlaneProviderService,
    ];
    for (const definition of definitions) {
      services.push(await startService(definition, testServiceOptions(definition.name, ns.name, topology)));
    }
  });

  afterAll(async () => {
    // Cluster deletion tears everything down while the services still run.
    await client
      ?.resource(RESOURCES.Cluster)
      .delete({ namespace: ns.name, name: 'demo' })
      .catch(() => undefined);
    await eventually(
      async () =>
        (await client.resource(RESOURCES.SimMachine).list({ namespace: ns.name })).items.length === 0,
      { timeoutMs: 120_000, message: 'SimMachines deleted with the Cluster' },
    ).catch(() => undefined);
    for (const service of services.reverse()) await service.stop();
    await client?.close();
    await ns?.delete();
    if (options) rmSync(options.stateDir, { recursive: true, force: true });
  });

  const apply = (resource: (typeof RESOURCES)[keyof typeof RESOURCES], body: Record<string, unknown>) =>
    client.resource(resource).create({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      ...body,
      metadata: { namespace: ns.name, ...(body['metadata'] as object) },
    } as KubernetesObject);

  it('brings up 1 control plane + 2 workers whose kubeconfig lists 3 Ready nodes', async () => {
    await apply(RESOURCES.Cluster, {
      metadata: { name: 'demo' },
      spec: {
        infrastructureRef: { apiGroup: INFRASTRUCTURE_GROUP, kind: 'SimCluster', name: 'demo' },
        controlPlaneRef: {
          apiGroup: CONTROL_PLANE_GROUP,
          kind: 'K3sControlPlane',
          name: 'demo-control-plane',
        },
      },
    });
    await apply(RESOURCES.SimCluster, { metadata: { name: 'demo' }, spec: {} });
    await apply(RESOURCES.SimMachineTemplate, {
      metadata: { name: 'demo-control-plane' },
      spec: { template: { spec: { provisioningDelaySeconds: 1 } } },
    });
    await apply(RESOURCES.K3sControlPlane, {
      metadata: { name: 'demo-control-plane' },
      spec: {
        replicas: 1,
        version: K3S_VERSION,
        machineTemplate: {
          spec: {
            infrastructureRef: {
              apiGroup: INFRASTRUCTURE_GROUP,
              kind: 'SimMachineTemplate',
              name: 'demo-control-plane',
            },
          },
        },
        k3sConfigSpec: { version: K3S_VERSION, serverConfig: { disableComponents: ['traefik'] } },
      },
    });
    await apply(RESOURCES.SimMachineTemplate, {
      metadata: { name: 'demo-md-0' },
      spec: { template: { spec: { provisioningDelaySeconds: 1 } } },
    });
    await apply(RESOURCES.K3sConfigTemplate, {
      metadata: { name: 'demo-md-0' },
      spec: {
        template: { spec: { version: K3S_VERSION, agentConfig: { nodeLabels: ['capstan.dev/pool=md-0'] } } },
      },
    });
    await apply(RESOURCES.MachineDeployment, {
      metadata: { name: 'demo-md-0' },
      spec: {
        clusterName: 'demo',
        replicas: 2,
        selector: { matchLabels: {} },
        template: {
          spec: {
            clusterName: 'demo',
            version: K3S_VERSION,
            bootstrap: {
              configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'K3sConfigTemplate', name: 'demo-md-0' },
            },
            infrastructureRef: {
              apiGroup: INFRASTRUCTURE_GROUP,
              kind: 'SimMachineTemplate',
              name: 'demo-md-0',
            },
          },
        },
      },
    });

    const kubeconfig = await eventually(
      async () => {
        const secret = (await client
          .resource(SECRETS)
          .get({ namespace: ns.name, name: 'demo-kubeconfig' })) as { data?: Record<string, string> };
        return secret.data?.['value']
          ? Buffer.from(secret.data['value'], 'base64').toString('utf8')
          : undefined;
      },
      { timeoutMs: 180_000, message: 'demo-kubeconfig' },
    );
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const nodes = await eventually(
      async () => {
        const list = await core.listNode();
        const ready = list.items.filter((n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === 3 ? ready : undefined;
      },
      { timeoutMs: 240_000, message: 'three Ready nodes through demo-kubeconfig' },
    );
    expect(
      nodes.filter((n) => n.metadata?.labels?.['node-role.kubernetes.io/control-plane'] === 'true'),
    ).toHaveLength(1);
    expect(nodes.filter((n) => n.metadata?.labels?.['capstan.dev/pool'] === 'md-0')).toHaveLength(2);
    for (const node of nodes) expect(node.spec?.providerID).toMatch(new RegExp(`^sim://${ns.name}/`));

    // The core saw every Node: each Machine runs with a nodeRef.
    const machines = await eventually(
      async () => {
        const list = (await client.resource<Machine>(RESOURCES.Machine).list({ namespace: ns.name })).items;
        return list.length === 3 && list.every((m) => m.status?.nodeRef?.name) ? list : undefined;
      },
      { timeoutMs: 120_000, message: 'three Machines with a nodeRef' },
    );
    expect(machines.map((m) => m.status?.phase)).toEqual(['Running', 'Running', 'Running']);
  });
});
