import { createHash } from 'node:crypto';
import { type V1Node, type V1Secret } from '@kubernetes/client-node';
import { type Logger } from 'pino';
import { CLUSTER_SECRET_TYPE, ClusterSecretPurpose, SECRET_KEYS, clusterSecretName } from '@capstan/api';
import {
  BY_PROVIDER_ID,
  byProviderIdIndex,
  connectionFromKubeconfig,
  Informer,
  isNotFound,
  KubeClient,
  type ClusterConnection,
  type InformerEventHandler,
  type Manager,
} from '@capstan/kube';
import { NODES, SECRETS } from './resources.js';

const KUBECONFIG_SUFFIX = `-${ClusterSecretPurpose.Kubeconfig}`;

/** Why a workload cluster cannot be reached. */
export type WorkloadUnavailableReason = 'InvalidKubeconfig' | 'NotConnected';

/** The workload cluster has a kubeconfig secret, but its API cannot be used (yet). Never carries the kubeconfig. */
export class WorkloadClusterUnavailableError extends Error {
  constructor(
    readonly namespace: string,
    readonly cluster: string,
    readonly reason: WorkloadUnavailableReason,
    message: string,
  ) {
    super(message);
    this.name = 'WorkloadClusterUnavailableError';
  }
}

/** A connected workload cluster: its API client and a synced cache of its Nodes (indexed by providerID). */
export interface WorkloadClusterAccess {
  readonly namespace: string;
  readonly cluster: string;
  readonly client: KubeClient;
  readonly nodes: Informer<V1Node>;
}

export type WorkloadConnectionState = 'NoKubeconfig' | 'Connecting' | 'Connected';

export interface WorkloadClusterProbe {
  state: WorkloadConnectionState;
  /** Why the connection is not up, when known. */
  message?: string;
}

export interface WorkloadClustersOptions {
  /** The management cluster's manager: its client reads kubeconfig secrets, its informers cache them. */
  manager: Manager;
  logger: Logger;
  /** Field manager of writes to workload clusters (node annotations, cordon). */
  fieldManager?: string;
  /** How long `access()` waits for a new connection's node cache before reporting it unavailable. */
  syncWaitMs?: number;
  /** How often a kubeconfig secret of another type than `cluster.x-k8s.io/secret` is read again. */
  untypedSecretRecheckMs?: number;
}

interface Connection {
  readonly hash: string;
  readonly client: KubeClient;
  readonly nodes: Informer<V1Node>;
  /** `namespace/cluster` keys using this connection: clusters with identical kubeconfigs share one. */
  readonly users: Set<string>;
  synced: boolean;
  lastError?: string;
  stopHandler: () => void;
}

interface UntypedSecret {
  content?: string;
  checkedAt: number;
}

/** `previous` is the Node before an update (undefined for adds and deletes). */
export type NodeListener = (node: V1Node, previous?: V1Node) => void;
export type ClusterListener = (namespace: string, cluster: string) => void;

const clusterKey = (namespace: string, cluster: string) => `${namespace}/${cluster}`;

/**
 * Access to workload clusters, for the Machine controller (nodeRef, drain, node deletion) and the
 * MachineHealthCheck controller (node conditions). Each cluster's client is built from Secret
 * `<cluster>-kubeconfig` key `value`, kept while the secret's content stays the same and rebuilt when it
 * changes; clusters whose kubeconfigs are identical (a shared workload API) share one client and one Node cache.
 */
export class WorkloadClusters {
  private readonly secrets: Informer<V1Secret>;
  private readonly connections = new Map<string, Connection>();
  /** cluster key -> hash of the kubeconfig it is bound to. */
  private readonly bindings = new Map<string, string>();
  private readonly untyped = new Map<string, UntypedSecret>();
  private readonly nodeListeners = new Set<NodeListener>();
  private readonly clusterListeners = new Set<ClusterListener>();
  private readonly log: Logger;
  private readonly syncWaitMs: number;
  private readonly recheckMs: number;
  private stopped = false;

  constructor(private readonly options: WorkloadClustersOptions) {
    this.log = options.logger.child({ component: 'workload-clusters' });
    this.syncWaitMs = options.syncWaitMs ?? 3000;
    this.recheckMs = options.untypedSecretRecheckMs ?? 30_000;
    // Created now so the manager waits for it before any reconcile; only Cluster API secrets are cached.
    this.secrets = options.manager.informer<V1Secret>(SECRETS, {
      fieldSelector: `type=${CLUSTER_SECRET_TYPE}`,
    });
    this.secrets.addEventHandler({
      onAdd: (secret) => this.secretChanged(secret),
      onUpdate: (_old, secret) => this.secretChanged(secret),
      onDelete: (secret) => this.secretChanged(secret),
    });
  }

  /** Called with every Node added, changed or removed in any connected workload cluster. */
  onNodeChange(listener: NodeListener): () => void {
    this.nodeListeners.add(listener);
    return () => this.nodeListeners.delete(listener);
  }

  /** Called when a cluster's kubeconfig secret changes or its connection's Node cache becomes ready. */
  onClusterChange(listener: ClusterListener): () => void {
    this.clusterListeners.add(listener);
    return () => this.clusterListeners.delete(listener);
  }

  /** True when the management cluster holds a kubeconfig secret for the cluster. */
  async hasKubeconfig(namespace: string, cluster: string): Promise<boolean> {
    return (await this.kubeconfigOf(namespace, cluster)) !== undefined;
  }

  /**
   * A client of the workload cluster, or undefined when it has no kubeconfig secret (yet). Throws
   * WorkloadClusterUnavailableError when the kubeconfig cannot be parsed.
   */
  async clientFor(namespace: string, cluster: string): Promise<KubeClient | undefined> {
    const connection = await this.connect(namespace, cluster);
    return connection?.client;
  }

  /**
   * The workload cluster's client and synced Node cache; undefined without a kubeconfig secret. Throws
   * WorkloadClusterUnavailableError when the cache does not sync within the wait (the connection keeps trying
   * in the background and `onClusterChange` fires once it is up).
   */
  async access(namespace: string, cluster: string): Promise<WorkloadClusterAccess | undefined> {
    const connection = await this.connect(namespace, cluster);
    if (!connection) return undefined;
    if (!connection.synced) {
      try {
        await connection.nodes.waitForSync(this.syncWaitMs);
        connection.synced = true;
      } catch {
        throw new WorkloadClusterUnavailableError(
          namespace,
          cluster,
          'NotConnected',
          `the API server of cluster ${namespace}/${cluster} did not answer yet${connection.lastError ? `: ${connection.lastError}` : ''}`,
        );
      }
    }
    return { namespace, cluster, client: connection.client, nodes: connection.nodes };
  }

  /** The connection state as last observed, without connecting. */
  probe(namespace: string, cluster: string): WorkloadClusterProbe {
    const hash = this.bindings.get(clusterKey(namespace, cluster));
    const connection = hash ? this.connections.get(hash) : undefined;
    if (!connection) return { state: 'NoKubeconfig' };
    if (connection.synced) return { state: 'Connected' };
    return { state: 'Connecting', ...(connection.lastError ? { message: connection.lastError } : {}) };
  }

  /** The Node with this providerID in the cluster's cache (an already obtained access). */
  nodeByProviderID(access: WorkloadClusterAccess, providerID: string): V1Node | undefined {
    return access.nodes.byIndex(BY_PROVIDER_ID, providerID)[0];
  }

  /** Drops the cluster's connection, e.g. after requests failed with authentication errors. */
  invalidate(namespace: string, cluster: string): void {
    this.unbind(clusterKey(namespace, cluster));
  }

  /**
   * Sharded core: drops the connections of clusters this replica no longer owns (their new owner opens its own), so
   * each workload cluster is watched by one replica. Cluster keys are shard keys (`<namespace>/<cluster>`).
   */
  release(stillOwned: (clusterKey: string) => boolean): void {
    for (const key of [...this.bindings.keys()]) {
      if (stillOwned(key)) continue;
      this.log.info({ cluster: key }, 'cluster moved to another replica: its workload connection is closed');
      this.unbind(key);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    this.bindings.clear();
    await Promise.all(all.map((c) => this.close(c)));
  }

  private async connect(namespace: string, cluster: string): Promise<Connection | undefined> {
    if (this.stopped) return undefined;
    const key = clusterKey(namespace, cluster);
    const content = await this.kubeconfigOf(namespace, cluster);
    if (content === undefined) {
      this.unbind(key);
      return undefined;
    }
    const hash = createHash('sha256').update(content).digest('hex');
    if (this.bindings.get(key) !== hash) this.unbind(key);
    let connection = this.connections.get(hash);
    if (!connection) {
      connection = this.open(namespace, cluster, hash, content);
      this.connections.set(hash, connection);
      void this.watchSync(connection);
    }
    connection.users.add(key);
    this.bindings.set(key, hash);
    return connection;
  }

  private open(namespace: string, cluster: string, hash: string, content: string): Connection {
    let workloadApi: ClusterConnection;
    try {
      workloadApi = connectionFromKubeconfig(content);
    } catch {
      // The parser's message may quote the document: say only which secret is wrong.
      throw new WorkloadClusterUnavailableError(
        namespace,
        cluster,
        'InvalidKubeconfig',
        `Secret ${namespace}/${clusterSecretName(cluster, ClusterSecretPurpose.Kubeconfig)} key ${SECRET_KEYS.value} is not a usable kubeconfig`,
      );
    }
    const client = new KubeClient(workloadApi, { fieldManager: this.options.fieldManager ?? 'capstan-core' });
    const nodes = new Informer<V1Node>(client, NODES, {
      indexers: { [BY_PROVIDER_ID]: byProviderIdIndex },
      logger: this.log.child({ workloadCluster: clusterKey(namespace, cluster) }),
    });
    const connection: Connection = {
      hash,
      client,
      nodes,
      users: new Set(),
      synced: false,
      stopHandler: () => undefined,
    };
    const fanOut: InformerEventHandler<V1Node> = {
      onAdd: (node) => this.emitNode(node),
      onUpdate: (previous, node) => this.emitNode(node, previous),
      onDelete: (node) => this.emitNode(node),
    };
    connection.stopHandler = nodes.addEventHandler(fanOut);
    nodes.start();
    this.log.info({ cluster: clusterKey(namespace, cluster) }, 'connecting to workload cluster');
    return connection;
  }

  /** Marks the connection synced once its first list is in, and tells the clusters using it. */
  private async watchSync(connection: Connection): Promise<void> {
    for (;;) {
      if (this.connections.get(connection.hash) !== connection) return;
      try {
        await connection.nodes.waitForSync(30_000);
        connection.synced = true;
        connection.lastError = undefined;
        for (const key of connection.users) this.emitCluster(key);
        return;
      } catch (error) {
        connection.lastError = error instanceof Error ? error.message : String(error);
      }
    }
  }

  private unbind(key: string): void {
    const hash = this.bindings.get(key);
    if (!hash) return;
    this.bindings.delete(key);
    const connection = this.connections.get(hash);
    if (!connection) return;
    connection.users.delete(key);
    if (connection.users.size === 0) {
      this.connections.delete(hash);
      void this.close(connection);
    }
  }

  private async close(connection: Connection): Promise<void> {
    connection.stopHandler();
    await connection.nodes.stop();
    await connection.client.close();
  }

  /** The kubeconfig document of a cluster: from the cache of Cluster API secrets, else read (rarely) from the API. */
  private async kubeconfigOf(namespace: string, cluster: string): Promise<string | undefined> {
    const name = clusterSecretName(cluster, ClusterSecretPurpose.Kubeconfig);
    const cached = this.secrets.getByName(namespace, name);
    if (cached) return decodeValue(cached);
    const key = clusterKey(namespace, cluster);
    const known = this.untyped.get(key);
    if (known && Date.now() - known.checkedAt < this.recheckMs) return known.content;
    let content: string | undefined;
    try {
      const secret = await this.options.manager.client.resource<V1Secret>(SECRETS).get({ namespace, name });
      content = decodeValue(secret);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.untyped.set(key, { content, checkedAt: Date.now() });
    return content;
  }

  private secretChanged(secret: V1Secret): void {
    const name = secret.metadata?.name ?? '';
    const namespace = secret.metadata?.namespace;
    if (!namespace || !name.endsWith(KUBECONFIG_SUFFIX)) return;
    const cluster = name.slice(0, -KUBECONFIG_SUFFIX.length);
    const key = clusterKey(namespace, cluster);
    this.untyped.delete(key);
    const bound = this.bindings.get(key);
    const content = this.secrets.getByName(namespace, name) ? decodeValue(secret) : undefined;
    const hash = content === undefined ? undefined : createHash('sha256').update(content).digest('hex');
    if (bound !== undefined && bound !== hash) {
      this.log.info({ cluster: key }, 'kubeconfig changed: workload cluster client dropped');
      this.unbind(key);
    }
    this.emitCluster(key);
  }

  private emitNode(node: V1Node, previous?: V1Node): void {
    for (const listener of this.nodeListeners) listener(node, previous);
  }

  private emitCluster(key: string): void {
    const slash = key.indexOf('/');
    for (const listener of this.clusterListeners) listener(key.slice(0, slash), key.slice(slash + 1));
  }
}

function decodeValue(secret: V1Secret): string | undefined {
  const value = secret.data?.[SECRET_KEYS.value];
  if (value) return Buffer.from(value, 'base64').toString('utf8');
  return secret.stringData?.[SECRET_KEYS.value] || undefined;
}
