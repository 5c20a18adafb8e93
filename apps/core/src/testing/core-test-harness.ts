import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import {
  CLUSTER_SECRET_TYPE,
  RESOURCES,
  type Cluster,
  type ContractVersionedObjectReference,
  type Machine,
} from '@capstan/api';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import {
  uniqueEventTopology,
  type EventDataInput,
  type EventTopology,
  type HandoffEventName,
} from '@capstan/events';
import {
  KubeClient,
  isNotFound,
  loadConnection,
  type ResourceClient,
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
import { createCoreService } from '../core-service.js';
import { NODES, SECRETS } from '../remote/resources.js';

// Integration tests of the core play the providers by hand on the generic provider kinds, as upstream's envtest
// builders do, and use the test API server itself as every workload cluster.

export { condition, v1beta1Condition } from './conditions.js';

export type Unstructured = KubernetesObject & Record<string, unknown>;

export interface CoreHarnessOptions {
  prefix: string;
  syncPeriodSeconds?: number;
  watchExternalProviders?: boolean;
  /** Another NATS server than the shared test one (e.g. one the test stops). */
  natsUrl?: string;
}

export interface CoreHarness {
  ns: TestNamespace;
  namespace: string;
  topology: EventTopology;
  service: RunningService;
  client: KubeClient;
  clusters: ResourceClient<Cluster>;
  machines: ResourceClient<Machine>;
  kind(kind: string): ResourceClient<Unstructured>;
  /** Reference to a generic provider object of this namespace. */
  ref(kind: string, name: string): ContractVersionedObjectReference;
  create(
    kind: string,
    name: string,
    spec?: Record<string, unknown>,
    metadata?: Record<string, unknown>,
  ): Promise<Unstructured>;
  /** Plays the provider: merge-patches the status of a provider object. */
  setStatus(kind: string, name: string, status: Record<string, unknown>): Promise<void>;
  /** Plays the provider's hand-off: publishes `event` about the provider object as it is now. */
  handoff(
    event: HandoffEventName,
    kind: string,
    name: string,
    fields: Record<string, unknown>,
  ): Promise<void>;
  /** Writes `<cluster>-kubeconfig` pointing at the test API server: the workload cluster of the tests. */
  createKubeconfigSecret(cluster: string): Promise<void>;
  /** A Node in the "workload cluster" (the test API server), Ready unless told otherwise. */
  createNode(name: string, providerID: string, ready?: boolean): Promise<V1Node>;
  deleteNodes(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCoreHarness(options: CoreHarnessOptions): Promise<CoreHarness> {
  const kubeconfigPath = process.env['CAPSTAN_TEST_KUBECONFIG'];
  if (!kubeconfigPath)
    throw new Error('CAPSTAN_TEST_KUBECONFIG is not set: run integration tests through jest');
  const ns = await createTestNamespace(options.prefix);
  await installCapstanDefinitions(ns.kc);
  await installGenericProviderCrds(ns.kc);
  const topology = uniqueEventTopology(options.prefix);
  const service = await startService(
    createCoreService({ watchExternalProviders: options.watchExternalProviders ?? false }),
    {
      ...defaultServiceOptions('core', {}),
      kubeconfig: kubeconfigPath,
      natsUrl: options.natsUrl ?? testNatsUrl(),
      httpHost: '127.0.0.1',
      httpPort: 0,
      adminPort: 0,
      namespace: ns.name,
      subjectRoot: topology.root,
      streamName: topology.stream,
      logLevel: process.env['LOG_LEVEL'] ?? 'silent',
      syncPeriodSeconds: options.syncPeriodSeconds ?? 600,
    },
  );
  const client = new KubeClient(loadConnection({ kubeconfigPath }), { fieldManager: 'core-test' });
  const namespace = ns.name;
  const createdNodes: string[] = [];
  const kind = (k: string): ResourceClient<Unstructured> => {
    const g = genericProviderKind(k);
    const type: ResourceType = {
      group: g.group,
      version: g.version,
      plural: g.plural,
      kind: g.kind,
      namespaced: true,
    };
    return client.resource<Unstructured>(type);
  };
  return {
    ns,
    namespace,
    topology,
    service,
    client,
    clusters: client.resource<Cluster>(RESOURCES.Cluster),
    machines: client.resource<Machine>(RESOURCES.Machine),
    kind,
    ref: (k, name) => ({ apiGroup: genericProviderKind(k).group, kind: k, name }),
    create: (k, name, spec = {}, metadata = {}) =>
      kind(k).create({ metadata: { name, namespace, ...metadata }, spec } as Unstructured),
    setStatus: async (k, name, status) => {
      await kind(k).patchStatus({ namespace, name }, status);
    },
    handoff: async (event, k, name, fields) => {
      const obj = await kind(k).get({ namespace, name });
      const data = {
        object: { apiGroup: genericProviderKind(k).group, kind: k, namespace, name, uid: obj.metadata!.uid! },
        generation: obj.metadata?.generation ?? 0,
        resourceVersion: obj.metadata!.resourceVersion!,
        ...fields,
      };
      // The fields are the event's contract fields; the publisher validates them against the catalogue.
      await service.context.publisher.publish(event, data as unknown as EventDataInput<typeof event>);
    },
    createKubeconfigSecret: async (cluster) => {
      await client.resource(SECRETS).create({
        metadata: {
          name: `${cluster}-kubeconfig`,
          namespace,
          labels: { 'cluster.x-k8s.io/cluster-name': cluster },
        },
        type: CLUSTER_SECRET_TYPE,
        data: { value: Buffer.from(readFileSync(kubeconfigPath, 'utf8')).toString('base64') },
      } as KubernetesObject);
    },
    createNode: async (name, providerID, ready = true) => {
      const nodes = client.resource<V1Node>(NODES);
      const node = await nodes.create({ metadata: { name }, spec: { providerID } });
      createdNodes.push(name);
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const condition = (type: string, status: string) => ({
        type,
        status,
        reason: 'Test',
        message: '',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      });
      return nodes.patchStatus(
        { name: node.metadata!.name! },
        {
          conditions: [
            condition('Ready', ready ? 'True' : 'False'),
            condition('MemoryPressure', 'False'),
            condition('DiskPressure', 'False'),
            condition('PIDPressure', 'False'),
          ],
          nodeInfo: {
            machineID: 'm',
            systemUUID: 's',
            bootID: 'b',
            kernelVersion: '6.1.0',
            osImage: 'Capstan Test',
            containerRuntimeVersion: 'containerd://2.0.0',
            kubeletVersion: 'v1.34.0',
            kubeProxyVersion: 'v1.34.0',
            operatingSystem: 'linux',
            architecture: 'amd64',
          },
        },
      );
    },
    deleteNodes: async () => {
      for (const name of createdNodes) {
        await client
          .resource(NODES)
          .delete({ name })
          .catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
          });
      }
    },
    stop: async () => {
      await service.stop();
      for (const name of createdNodes) {
        await client
          .resource(NODES)
          .delete({ name })
          .catch(() => undefined);
      }
      await ns.delete();
      await client.close();
    },
  };
}

/**
 * Polls `probe` until it returns something other than undefined/false (libs/testing's, named first, with its 30 s
 * default: 20 s was not always enough for a Machine to reach Running while the whole suite loads 2 cores).
 */
export function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  return pollUntil(probe, { timeoutMs, intervalMs: 50, message: what });
}

export interface SeenEvent {
  /** Catalogue name, e.g. `cluster.provisioned`. */
  name: string;
  object: string;
}

/** Reads the core's lifecycle events from the stream, from its first message on (an ordered consumer). */
export async function collectLifecycleEvents(
  natsUrl: string,
  topology: EventTopology,
): Promise<{ events: SeenEvent[]; named(name: string, object: string): number; close(): Promise<void> }> {
  const nc = await connect({ servers: natsUrl });
  const consumer = await jetstream(nc).consumers.get(topology.stream, {
    filter_subjects: `${topology.root}.lifecycle.>`,
  });
  const messages = await consumer.consume();
  const events: SeenEvent[] = [];
  void (async () => {
    for await (const message of messages) {
      const envelope = message.json<{ type: string; data: { object: { name: string } } }>();
      events.push({
        name: envelope.type.replace(/^dev\.capstan\.lifecycle\./, ''),
        object: envelope.data.object.name,
      });
    }
  })();
  return {
    events,
    named: (name, object) => events.filter((e) => e.name === name && e.object === object).length,
    close: async () => {
      await messages.close();
      await nc.drain();
    },
  };
}
