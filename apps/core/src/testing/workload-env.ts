import { askCanUpdateMachine } from '@capstan/events';
import { readFileSync } from 'node:fs';
import {
  CLUSTER_SECRET_TYPE,
  FINALIZERS,
  RESOURCES,
  type Cluster,
  type Machine,
  type MachineTemplateSpec,
} from '@capstan/api';
import { uniqueEventTopology } from '@capstan/events';
import {
  createKubeClient,
  Informer,
  isNotFound,
  objectKey,
  SECRETS,
  type KubeClient,
  type ResourceType,
} from '@capstan/kube';
import { defaultServiceOptions, startService, type RunningService } from '@capstan/provider-kit';
import {
  createTestNamespace,
  eventually as pollUntil,
  genericProviderKind,
  installCapstanDefinitions,
  installGenericProviderCrds,
  testNatsUrl,
  type TestNamespace,
} from '@capstan/testing';
import type { EventTopology } from '@capstan/events';
import type { KubernetesObject } from '@kubernetes/client-node';
import { WorkloadClusters } from '../remote/workload-clusters.js';
import { registerWorkloadControllers } from '../reconcilers/workload-controllers.js';

// Integration tests of the workload controllers run them alone in a service against the real API server and NATS,
// and play the Machine controller and the providers themselves: they set Machine status by hand, as upstream's
// envtest tests do.

export const TEST_FIELD_MANAGER = 'capstan-test';
/** The Machine controller's part, played by the tests. */
export const PLAYER_FIELD_MANAGER = 'capstan-test-machine-controller';

/** What the helpers below write through: a client playing everyone but the controllers, and their namespace. */
export interface WorkloadTestBed {
  ns: { name: string };
  client: KubeClient;
}

export interface WorkloadEnv extends WorkloadTestBed {
  ns: TestNamespace;
  service: RunningService;
  topology: EventTopology;
  stop(): Promise<void>;
}

export async function startWorkloadEnv(prefix: string): Promise<WorkloadEnv> {
  const ns = await createTestNamespace(prefix);
  await installCapstanDefinitions(ns.kc);
  await installGenericProviderCrds(ns.kc);
  const kubeconfig = process.env['CAPSTAN_TEST_KUBECONFIG']!;
  const client = createKubeClient({ kubeconfigPath: kubeconfig }, { fieldManager: TEST_FIELD_MANAGER });
  const topology = uniqueEventTopology(prefix);
  const service = await startService(
    {
      name: `core-${prefix}`,
      setup(context) {
        const workloadClusters = new WorkloadClusters({ manager: context.manager, logger: context.logger });
        registerWorkloadControllers(context, {
          workloadClusters,
          askCanUpdate: (request) => askCanUpdateMachine(context.bus.nc, context.topology.root, request),
          clusterResourceSetPeriodMs: 2_000,
        });
        return () => workloadClusters.stop();
      },
    },
    {
      ...defaultServiceOptions('core', {}),
      kubeconfig,
      natsUrl: testNatsUrl(),
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace: ns.name,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: process.env['LOG_LEVEL'] ?? 'silent',
    },
  );
  return {
    ns,
    client,
    service,
    topology,
    stop: async () => {
      await service.stop();
      await client.close();
      await ns.delete();
    },
  };
}

/** libs/testing's eventually, with the thing waited for named first (it reads better in long tests). */
export function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  return pollUntil(probe, { message: what, timeoutMs });
}

export const resourceOf = (kind: string): ResourceType => {
  const k = genericProviderKind(kind);
  return { group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: true };
};

/** A Cluster whose infrastructure is ready and control plane initialized, as the Cluster controller would say. */
export async function createReadyCluster(env: WorkloadTestBed, name: string): Promise<Cluster> {
  const clusters = env.client.resource<Cluster>(RESOURCES.Cluster);
  const created = await clusters.create({
    apiVersion: RESOURCES.Cluster.apiVersion,
    kind: RESOURCES.Cluster.kind,
    metadata: { name, namespace: env.ns.name },
    spec: {
      infrastructureRef: {
        apiGroup: 'infrastructure.generic.capstan.dev',
        kind: 'GenericInfrastructureCluster',
        name,
      },
    },
  } as Cluster);
  const longAgo = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await clusters.applyStatus(
    {
      metadata: { name, namespace: env.ns.name },
      status: {
        conditions: ['ControlPlaneInitialized', 'InfrastructureReady'].map((type) => ({
          type,
          status: 'True',
          reason: type === 'InfrastructureReady' ? 'Ready' : 'Initialized',
          message: '',
          lastTransitionTime: longAgo,
        })),
      },
    } as unknown as Cluster,
    { fieldManager: PLAYER_FIELD_MANAGER },
  );
  return created;
}

/** An infrastructure machine template and a bootstrap config template of the generic providers. */
export async function createTemplates(
  env: WorkloadTestBed,
  name: string,
  spec: Record<string, unknown> = { flavor: name },
): Promise<void> {
  for (const kind of ['GenericInfrastructureMachineTemplate', 'GenericBootstrapConfigTemplate']) {
    await env.client.resource(resourceOf(kind)).create({
      apiVersion: `${genericProviderKind(kind).group}/${genericProviderKind(kind).version}`,
      kind,
      metadata: { name, namespace: env.ns.name },
      spec: { template: { metadata: { labels: { 'template-label': name } }, spec } },
    } as KubernetesObject);
  }
}

export function machineTemplate(
  clusterName: string,
  templateName: string,
  labels: Record<string, string>,
): MachineTemplateSpec {
  return {
    metadata: { labels },
    spec: {
      clusterName,
      bootstrap: {
        configRef: {
          apiGroup: 'bootstrap.generic.capstan.dev',
          kind: 'GenericBootstrapConfigTemplate',
          name: templateName,
        },
      },
      infrastructureRef: {
        apiGroup: 'infrastructure.generic.capstan.dev',
        kind: 'GenericInfrastructureMachineTemplate',
        name: templateName,
      },
    },
  };
}

export interface PlayerOptions {
  /** How long a new Machine takes to become Ready and Available (undefined: never by itself). */
  availableAfterMs?: number;
  /** How long the deletion of a Machine takes (its finalizer is removed then). */
  releaseAfterMs: number;
  /** The Node a Machine gets (status.nodeRef), if any. */
  nodeName?: (machine: Machine) => string | undefined;
  /** Which Machines ever come up (default all). */
  comesUp?: (machine: Machine) => boolean;
  /** Runs before a Machine is marked Available (e.g. to create its Node). */
  beforeAvailable?: (machine: Machine) => Promise<void>;
}

/**
 * Plays the Machine controller for the tests: new Machines become Ready and Available after a while, deleted ones
 * lose their finalizer after a while.
 */
export class MachinePlayer {
  private readonly informer: Informer<Machine>;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly scheduled = new Set<string>();
  private stopped = false;

  constructor(
    private readonly env: WorkloadTestBed,
    private readonly options: PlayerOptions,
  ) {
    this.informer = new Informer<Machine>(env.client, RESOURCES.Machine, { namespace: env.ns.name });
    const react = (machine: Machine) => this.react(machine);
    this.informer.addEventHandler({ onAdd: react, onUpdate: (_old, m) => react(m) });
  }

  async start(): Promise<this> {
    this.informer.start();
    await this.informer.waitForSync();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.informer.stop();
  }

  /** Marks a Machine Ready and Available now (with its Node, when the options name one). */
  async makeAvailable(machine: Machine): Promise<void> {
    const node = this.options.nodeName?.(machine);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await this.env.client
      .resource<Machine>(RESOURCES.Machine)
      .applyStatus(
        {
          metadata: { name: machine.metadata.name, namespace: machine.metadata.namespace },
          status: {
            ...(node ? { nodeRef: { name: node } } : {}),
            conditions: ['Ready', 'Available', 'NodeHealthy', 'InfrastructureReady'].map((type) => ({
              type,
              status: 'True',
              reason: type,
              message: '',
              lastTransitionTime: now,
            })),
          },
        } as unknown as Machine,
        { fieldManager: PLAYER_FIELD_MANAGER },
      )
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  private react(machine: Machine): void {
    if (this.stopped) return;
    const key = `${objectKey(machine)}/${machine.metadata.uid}`;
    if (machine.metadata.deletionTimestamp) {
      if (!machine.metadata.finalizers?.includes(FINALIZERS.machine) || this.scheduled.has(`${key}/release`))
        return;
      this.scheduled.add(`${key}/release`);
      this.later(this.options.releaseAfterMs, () => this.release(machine));
      return;
    }
    const available = machine.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    if (available || this.options.availableAfterMs === undefined || this.scheduled.has(`${key}/available`))
      return;
    if (this.options.comesUp && !this.options.comesUp(machine)) return;
    this.scheduled.add(`${key}/available`);
    this.later(this.options.availableAfterMs, async () => {
      await this.options.beforeAvailable?.(machine);
      await this.makeAvailable(machine);
    });
  }

  private async release(machine: Machine): Promise<void> {
    const current = this.informer.get(objectKey(machine));
    if (!current || current.metadata.uid !== machine.metadata.uid) return;
    const finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== FINALIZERS.machine);
    await this.env.client
      .resource<Machine>(RESOURCES.Machine)
      .mergePatch(
        { namespace: current.metadata.namespace, name: current.metadata.name! },
        { metadata: { finalizers, resourceVersion: current.metadata.resourceVersion } },
      )
      .catch((err: unknown) => {
        if (isNotFound(err)) return;
        // Changed meanwhile: try again shortly.
        this.scheduled.delete(`${objectKey(machine)}/${machine.metadata.uid}/release`);
        this.later(50, () => this.release(machine));
      });
  }

  private later(ms: number, action: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) void action().catch(() => undefined);
    }, ms);
    this.timers.add(timer);
  }
}

/** The test environment's kubeconfig as the `<cluster>-kubeconfig` Secret: the test API server is the workload cluster. */
export async function createKubeconfigSecret(env: WorkloadTestBed, clusterName: string): Promise<void> {
  const content = readFileSync(process.env['CAPSTAN_TEST_KUBECONFIG']!, 'utf8');
  await env.client.resource(SECRETS).create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${clusterName}-kubeconfig`,
      namespace: env.ns.name,
      labels: { 'cluster.x-k8s.io/cluster-name': clusterName },
    },
    type: CLUSTER_SECRET_TYPE,
    data: { value: Buffer.from(content).toString('base64') },
  } as KubernetesObject);
}
