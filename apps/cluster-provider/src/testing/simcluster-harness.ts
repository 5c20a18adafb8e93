import { type KubernetesObject } from '@kubernetes/client-node';
import { pino } from 'pino';
import { RESOURCES, type Cluster, type SimCluster, type SimMachine } from '@capstan/api';
import {
  EventBusConnection,
  EventPublisher,
  provisionEventStreams,
  uniqueEventTopology,
  type EventTopology,
} from '@capstan/events';
import {
  EventRecorder,
  Informer,
  KubeClient,
  STANDARD_INDEXERS,
  type KubeRequest,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceClient,
  type ResourceType,
  HttpMethod,
} from '@capstan/kube';
import { EventOutbox, type ControllerHost, type OwedEvent } from '@capstan/provider-kit';
import { createTestNamespace, eventually, testNatsUrl, type TestNamespace } from '@capstan/testing';
import { simClusterController } from '../reconcilers/simcluster.controller.js';

const logger = pino({ level: 'silent' });

export interface TestProvider {
  reconcile(name: string): Promise<ReconcileResult | void>;
  /** Events this provider published to the stream, in order. */
  readonly published: OwedEvent[];
}

/**
 * The SimCluster reconciler on the test environment's real kube-apiserver and NATS JetStream (libs/testing),
 * in a namespace and an event stream of its own. The provider's caches are real informers; `caughtUp()` waits
 * until they show what the server has, as they do shortly after each write. Objects are made through `admin`.
 */
export class SimClusterTestServer {
  /** Writes of the provider's client to SimClusters (main resource and status) that the server took. */
  simClusterWrites = 0;
  private readonly simClusters: Informer<SimCluster>;
  private readonly clusters: Informer<Cluster>;
  private readonly simMachines: Informer<SimMachine>;

  private constructor(
    readonly ns: TestNamespace,
    /** The provider's client: the manager's in the service. */
    readonly client: KubeClient,
    /** Someone else's client: users, the core, other providers. */
    readonly admin: KubeClient,
    private readonly bus: EventBusConnection,
    readonly topology: EventTopology,
  ) {
    const send = client.request.bind(client);
    client.request = async <T>(req: KubeRequest): Promise<T> => {
      const result = await send<T>(req);
      if (req.method !== HttpMethod.GET && /\/simclusters\//.test(req.path)) this.simClusterWrites++;
      return result;
    };
    const informer = <T extends KubernetesObject>(type: ResourceType) =>
      new Informer<T>(client, type, { namespace: ns.name, indexers: STANDARD_INDEXERS, logger });
    this.simClusters = informer<SimCluster>(RESOURCES.SimCluster);
    this.clusters = informer<Cluster>(RESOURCES.Cluster);
    this.simMachines = informer<SimMachine>(RESOURCES.SimMachine);
  }

  static async start(prefix = 'simcl-rec'): Promise<SimClusterTestServer> {
    const ns = await createTestNamespace(prefix);
    const bus = await EventBusConnection.connect({ servers: testNatsUrl(), name: prefix });
    const topology = uniqueEventTopology(prefix);
    await provisionEventStreams(await bus.jsm(), { topology });
    const server = new SimClusterTestServer(
      ns,
      new KubeClient(ns.kc, { fieldManager: 'capstan-cluster-provider' }),
      new KubeClient(ns.kc, { fieldManager: 'capstan-test-admin' }),
      bus,
      topology,
    );
    for (const informer of server.informers()) informer.start();
    await Promise.all(server.informers().map((informer) => informer.waitForSync(30_000)));
    return server;
  }

  get namespace(): string {
    return this.ns.name;
  }

  simClusterResource(): ResourceClient<SimCluster> {
    return this.admin.resource<SimCluster>(RESOURCES.SimCluster);
  }

  clusterResource(): ResourceClient<Cluster> {
    return this.admin.resource<Cluster>(RESOURCES.Cluster);
  }

  simMachineResource(): ResourceClient<SimMachine> {
    return this.admin.resource<SimMachine>(RESOURCES.SimMachine);
  }

  /** The SimCluster as the server has it now. */
  getSimCluster(name: string): Promise<SimCluster | undefined> {
    return this.simClusterResource().getIfExists({ namespace: this.namespace, name });
  }

  /** Waits until every cache holds exactly the objects the server has, at the server's versions. */
  async caughtUp(): Promise<void> {
    const versions = (objects: KubernetesObject[]) =>
      objects
        .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
        .sort()
        .join(',');
    await eventually(
      async () => {
        for (const informer of this.informers()) {
          const { items } = await this.admin.resource(informer.resource).list({ namespace: this.namespace });
          if (versions(informer.list(this.namespace)) !== versions(items)) return false;
        }
        return true;
      },
      { message: 'the caches to show what the server has' },
    );
  }

  /**
   * A provider process: its own reconciler, outbox and own-write memory over the caches; a second one is the
   * provider after a restart. With `busDown`, its publisher sends to subjects no stream takes, so every
   * publish fails as it does while the bus is unreachable.
   */
  provider(options: { busDown?: boolean } = {}): TestProvider {
    const published: OwedEvent[] = [];
    const publisher = new EventPublisher(this.bus, {
      source: '/capstan/cluster-provider',
      topology: options.busDown ? uniqueEventTopology('nowhere') : this.topology,
      timeoutMs: 2_000,
    });
    // The reconciler reaches the API through the context's client, records Kubernetes Events with its recorder and
    // delivers its events through the context's outbox (here one that also notes what it published).
    const outbox = new EventOutbox({
      publisher: {
        publish: async (name, data) => {
          const result = await publisher.publish(name, data);
          published.push({ name, data } as OwedEvent);
          return result;
        },
      },
      logger,
    });
    const context: Pick<ControllerHost, 'client' | 'outbox'> = { client: this.client, outbox };
    const declared = simClusterController({
      endpointHost: '127.0.0.1',
      portRange: { min: 31000, max: 31999 },
    });
    const caches = new Map<string, Informer>([
      [RESOURCES.Cluster.kind, this.clusters as unknown as Informer],
      [RESOURCES.SimMachine.kind, this.simMachines as unknown as Informer],
    ]);
    const reconciler = declared.reconcilerOn({
      // Only what the SimCluster controller's wiring reads of its service.
      context: context as ControllerHost,
      primary: this.simClusters,
      recorder: new EventRecorder({
        client: this.client,
        reportingController: `capstan.dev/${declared.definition.name}`,
        reportingInstance: 'test',
        logger,
      }),
      informer: <O extends KubernetesObject>(type: ResourceType) =>
        caches.get(type.kind) as unknown as Informer<O>,
    });
    const reconcile = async (name: string) => {
      const key = `${this.namespace}/${name}`;
      const rc: ReconcileContext = {
        key,
        namespace: this.namespace,
        name,
        reconcileId: 'test',
        log: logger,
        signal: new AbortController().signal,
      };
      return reconciler(key, rc);
    };
    return { reconcile, published };
  }

  /** Messages in this server's event stream. */
  async storedEvents(): Promise<number> {
    return (await (await this.bus.jsm()).streams.info(this.topology.stream)).state.messages;
  }

  async close(): Promise<void> {
    await Promise.all(this.informers().map((informer) => informer.stop()));
    const jsm = await this.bus.jsm();
    await jsm.streams.delete(this.topology.stream).catch(() => undefined);
    await jsm.streams.delete(this.topology.deadLetterStream).catch(() => undefined);
    await this.bus.close();
    await this.ns.delete();
    await this.client.close();
    await this.admin.close();
  }

  private informers(): Informer[] {
    return [this.simClusters, this.clusters, this.simMachines] as unknown as Informer[];
  }
}
