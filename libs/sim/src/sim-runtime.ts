import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { ClusterConnection, createKubeClient, SECRETS, type KubeClient } from '@capstan/kube';
import type { ApiEndpoint } from '@capstan/pki';
import {
  resolveControlPlaneBinaries,
  resolveEtcdutl,
  resolveKubeComponent,
} from '@capstan/testing/local-host';
import type { Logger } from 'pino';
import {
  clusterKeyOf,
  endpointKeyOf,
  type ClusterApi,
  type ClusterApiSpec,
  type InstalledServer,
} from './cluster-api.js';
import { DedicatedClusterApi, type ApiServerHost } from './dedicated-cluster-api.js';
import { stopRecordedMembers } from './etcd-members.js';
import { SimError } from './errors.js';
import { externalEtcd, startOwnedEtcd, type SimEtcd } from './etcd.js';
import { MachineAgents } from './machine-agents.js';
import { NodeAgent, type NodeAgentOptions, type WorkloadConnection } from './node-agent.js';
import type { SimMachineOptions } from './options.js';
import { recordedProcessAlive, stopRecordedProcess, type StartOutcome } from './owned-process.js';
import { SharedApiServer, SharedClusterApi } from './shared-api-server.js';
import { join } from 'node:path';
import { SimStateDir } from './state-dir.js';
import { withHostLock } from './host-lock.js';
import { SimKubelet, type KubeletNode } from './sim-kubelet.js';
import {
  encryptionStatusText,
  prepareStage,
  readEncryption,
  reencryptedStage,
  rotateStage,
  writeEncryption,
} from './secrets-encryption.js';
import { WORKLOAD_CONTROLLERS, type WorkloadController } from './workload-controllers.js';

/** Secrets read per request while re-encrypting (K3s's own reencrypt pages by the same order of size). */
const REENCRYPT_PAGE_SIZE = 100;

/** The `k3s secrets-encrypt` commands the sim runs. */
export type SecretsEncryptCommand = 'status' | 'prepare' | 'rotate' | 'reencrypt';

export interface SimRuntimeOptions {
  options: SimMachineOptions;
  logger: Logger;
  /** kube-apiserver and etcd binaries; found like the test environment's when unset. */
  binaries?: { kubeApiserver: string; etcd: string };
  /**
   * Sharded provider: several replicas share this host and state dir, each serving the clusters it owns. What runs
   * on the host (API servers, the shared server, etcd, agent processes) then outlives a replica: a stopping replica
   * leaves it for the others to adopt, and a replica sweeps orphans only among clusters it owns.
   */
  sharding?: { owns(clusterKey: string): boolean };
}

export type NodeAgentSpec = Omit<NodeAgentOptions, 'connect' | 'logger' | 'heartbeatMs' | 'nodeStatusMs'> & {
  /** Where the node's K3s config points (`server:`), or the cluster endpoint for the init server. */
  serverEndpoint: ApiEndpoint;
  /** The node's join token. */
  token: string;
};

function sameIdentity(a: ClusterApiSpec, b: ClusterApiSpec): string | undefined {
  if (a.identity.tls.serverCA.certPem !== b.identity.tls.serverCA.certPem)
    return "its server CA differs from the cluster's";
  if (a.identity.tls.clientCA.certPem !== b.identity.tls.clientCA.certPem)
    return "its client CA differs from the cluster's";
  if (a.identity.token !== b.identity.token) return "its join token differs from the cluster's";
  if (endpointKeyOf(a.endpoint) !== endpointKeyOf(b.endpoint))
    return "it points at another endpoint than the cluster's";
  if (a.mode !== b.mode) return 'its cluster changed mode';
  return undefined;
}

/**
 * The simulated hosts of one machine-provider: the workload clusters' API servers (one kube-apiserver per
 * dedicated cluster, front proxies to one shared kube-apiserver for shared ones), the etcd they keep their
 * data in, and one NodeAgent per machine. It holds no desired state: the reconcilers tell it what should
 * run, from the API objects, so a restarted provider brings back what was running.
 */
export class SimRuntime {
  readonly stateDir: SimStateDir;
  private readonly clusters = new Map<string, ClusterApi>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly agents = new Map<string, NodeAgent>();
  /** machine key -> the URL of the cluster API its node registers with. */
  private readonly agentUrls = new Map<string, string>();
  /** cluster key -> the kubelets of its nodes (dedicated clusters that run workloads). */
  private readonly kubelets = new Map<string, SimKubelet>();
  /** The node agents (docs/node-agent.md) of machines whose bootstrap data starts one. */
  readonly machineAgents: MachineAgents;
  private readonly clients = new Map<string, KubeClient>();
  private etcdHandle: Promise<SimEtcd> | undefined;
  private binaries: { kubeApiserver: string; etcd: string } | undefined;
  private controllerBinaries: Readonly<Record<WorkloadController, string>> | undefined;
  private sharedServer: SharedApiServer | undefined;
  private orphanTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private closed = false;
  private readonly clusterDownListeners = new Set<(clusterKey: string) => void>();

  constructor(private readonly runtime: SimRuntimeOptions) {
    this.stateDir = new SimStateDir(runtime.options.stateDir);
    this.binaries = runtime.binaries;
    this.log = runtime.logger.child({ component: 'sim-runtime' });
    this.machineAgents = new MachineAgents(
      runtime.options.nodeAgentMode,
      runtime.logger.child({ component: 'machine-agents' }),
      runtime.options.nodeAgentMain,
    );
  }

  /**
   * Looks for API servers an earlier provider left running; those no machine claims within the grace
   * period (their cluster is gone) are stopped, so their ports are free again.
   */
  start(): void {
    this.stateDir.ensure(this.stateDir.root);
    const found = this.stateDir.clusterDirs().filter((c) => recordedProcessAlive(c.dir, 'kube-apiserver'));
    if (found.length === 0) return;
    this.log.info(
      { count: found.length },
      'found workload API servers from an earlier run; adopting those still wanted',
    );
    this.orphanTimer = setTimeout(() => {
      for (const orphan of found) {
        const key = clusterKeyOf(orphan.namespace, orphan.name);
        if (this.clusters.has(key)) continue;
        // Another replica's cluster is not an orphan: only the owner may judge (and it serves it by now).
        if (this.runtime.sharding && !this.runtime.sharding.owns(key)) continue;
        this.log.info({ cluster: key }, 'stopping an API server no machine claims');
        void Promise.all(
          [...WORKLOAD_CONTROLLERS, 'kube-apiserver'].map((name) => stopRecordedProcess(orphan.dir, name)),
        ).then(() => stopRecordedMembers(join(orphan.dir, 'etcd')));
      }
    }, this.runtime.options.orphanGraceSeconds * 1000);
    this.orphanTimer.unref();
  }

  etcd(): Promise<SimEtcd> {
    this.etcdHandle ??= (async () => {
      const { etcdUrl } = this.runtime.options;
      if (etcdUrl) return externalEtcd(etcdUrl);
      const dir = this.stateDir.ensure(this.stateDir.etcdDir);
      // Replicas sharing the state dir start it once; the later ones adopt it (its pid file).
      const etcd = await withHostLock(join(dir, 'start.lock'), 120_000, () =>
        startOwnedEtcd(this.resolveBinaries().etcd, dir),
      );
      this.log.info({ url: etcd.url }, 'sim etcd running');
      return etcd;
    })().catch((error: unknown) => {
      this.etcdHandle = undefined;
      throw error;
    });
    return this.etcdHandle;
  }

  clusterApi(clusterKey: string): ClusterApi | undefined {
    return this.clusters.get(clusterKey);
  }

  /**
   * Brings a cluster's API up for one of its server machines: starts it (or adopts the one an earlier
   * provider left) when none runs, restarts it when it stopped, and otherwise checks that the server
   * belongs to this cluster (same CAs, token and endpoint), as a K3s server joining would.
   * `fresh` wipes data a cluster of the same name left: the init server's first boot. `member`: the server's node
   * name; in a cluster with an etcd of its own, that server's etcd member runs (started, or joined to the others).
   */
  ensureClusterApi(
    spec: ClusterApiSpec,
    { fresh, member }: { fresh: boolean; member?: string },
  ): Promise<{ api: ClusterApi; outcome: StartOutcome | 'running' }> {
    const key = clusterKeyOf(spec.namespace, spec.clusterName);
    return this.withLock(key, async () => {
      if (this.closed)
        throw new SimError('the sim runtime is shut down', 'APIServerStartFailed', { cluster: key });
      const existing = this.clusters.get(key);
      if (existing) {
        const mismatch = sameIdentity(existing.spec, spec);
        if (mismatch)
          throw new SimError(`the server cannot join ${key}: ${mismatch}`, 'JoinRejected', { cluster: key });
        const ensureMember = async () => {
          if (member && existing instanceof DedicatedClusterApi) await existing.ensureMember(member);
        };
        if (await existing.healthy()) {
          await ensureMember();
          return { api: existing, outcome: 'running' as const };
        }
        const outcome = await existing.start({ fresh: false, member });
        await ensureMember();
        this.ensureKubelet(existing);
        return { api: existing, outcome };
      }
      const api = this.createClusterApi(spec);
      this.clusters.set(key, api);
      try {
        const outcome = await api.start({ fresh, member });
        if (member && api instanceof DedicatedClusterApi) await api.ensureMember(member);
        this.log.info({ cluster: key, url: api.url, mode: spec.mode, outcome }, 'workload API server up');
        this.ensureKubelet(api);
        return { api, outcome };
      } catch (error) {
        this.clusters.delete(key);
        throw error;
      }
    });
  }

  /**
   * A server machine installed another release or configuration (a plan ran install.sh): the cluster's API server
   * restarts with that release's kube-apiserver binary and the machine's `kube-apiserver-arg`, keeping its data.
   * Nothing happens when it already runs that or a newer install. Shared-mode clusters keep the shared server (only
   * the node reports the new release).
   */
  reinstallClusterApi(clusterKey: string, installed: InstalledServer): Promise<{ restarted: boolean }> {
    return this.withLock(clusterKey, async () => {
      const existing = this.clusters.get(clusterKey);
      if (!existing || existing.spec.mode === 'shared') return { restarted: false };
      // The bootstrap install runs what the API server was started with; only a later install restarts it.
      // One API server stands in for every server machine of the cluster: it runs the newest install, so an older
      // one (another server's, seen on its next reconcile) does not restart it back.
      const current = existing.spec.installed;
      if (current && Date.parse(current.installedAt) >= Date.parse(installed.installedAt))
        return { restarted: false };
      await this.stopKubelet(clusterKey);
      await existing.stop();
      const api = this.createClusterApi({ ...existing.spec, installed });
      this.clusters.set(clusterKey, api);
      this.closeClients(api.url);
      await api.start({ fresh: false });
      this.ensureKubelet(api);
      this.log.info(
        { cluster: clusterKey, version: installed.version },
        'workload API server restarted for a new install',
      );
      return { restarted: true };
    });
  }

  /** How old a new server's certificates start (CAPSTAN_SIM_CERTIFICATE_AGE_DAYS). */
  get certificateAgeDays(): number {
    return this.runtime.options.certificateAgeDays;
  }

  /**
   * `k3s certificate rotate` on one of the cluster's servers: its API server serves a new certificate (reloaded from
   * file, no restart). A shared-mode cluster's server is the shared one, whose certificate is the sim's own: nothing.
   */
  renewServingCertificate(clusterKey: string): Promise<void> {
    return this.withLock(clusterKey, async () => {
      const api = this.clusters.get(clusterKey);
      if (api instanceof DedicatedClusterApi) await api.renewServingCertificate();
    });
  }

  /**
   * `k3s etcd-snapshot save` on server `member` (its node name) of the cluster: a snapshot of that server's etcd
   * member into `file` (a file the provider owns, outside every machine root). Returns its size in bytes.
   */
  saveEtcdSnapshot(clusterKey: string, file: string, member: string): Promise<number> {
    return this.withLock(clusterKey, async () =>
      this.ownEtcdCluster(clusterKey, 'EtcdRequestFailed').saveSnapshot(file, member),
    );
  }

  /**
   * `k3s server --cluster-reset --cluster-reset-restore-path=<file>` on server `member`: the cluster's servers stop,
   * that server's etcd member is rebuilt from the snapshot as a cluster of one and it starts again on that data (the
   * other servers' members join again, empty, when they next start); the nodes' kubelets reconnect. A snapshot that
   * does not check out is refused (EtcdRestoreFailed) and the cluster serves what it had.
   */
  restoreEtcdSnapshot(clusterKey: string, file: string, member: string): Promise<void> {
    return this.withLock(clusterKey, async () => {
      const api = this.ownEtcdCluster(clusterKey, 'EtcdRestoreFailed');
      await this.stopKubelet(clusterKey);
      this.closeClients(api.url);
      try {
        await api.restoreSnapshot(file, member);
        this.log.info({ cluster: clusterKey }, 'workload cluster restored from an etcd snapshot');
      } finally {
        this.ensureKubelet(api);
        // Every node of the cluster restarts with it: Nodes the snapshot does not hold register again.
        for (const [machineKey, url] of this.agentUrls)
          if (url === api.url) this.agents.get(machineKey)?.restarted();
      }
    });
  }

  /**
   * `k3s secrets-encrypt <command>` on one of the cluster's servers (docs/day2.md): `status` prints the stage and the
   * key names; `prepare` adds a key, `rotate` makes it the one that encrypts, `reencrypt` writes every Secret again
   * with it and drops the old ones. Each stage but status restarts the cluster's kube-apiserver, as K3s restarts
   * after one, so it reads the new configuration. A stage out of order is refused (EncryptionStageInvalid), nothing
   * changed. Returns what the command prints.
   */
  secretsEncrypt(clusterKey: string, command: SecretsEncryptCommand): Promise<string> {
    return this.withLock(clusterKey, async () => {
      const api = this.clusters.get(clusterKey);
      if (!(api instanceof DedicatedClusterApi))
        throw new SimError(
          api
            ? `${clusterKey} is a shared-mode cluster: its Secrets live in the shared server, which the cluster cannot re-key`
            : `no server of ${clusterKey} is running here`,
          'EncryptionStageInvalid',
          { cluster: clusterKey },
        );
      const dir = api.clusterDir;
      const state = readEncryption(dir);
      if (command === 'status') return encryptionStatusText(state);
      if (!state)
        throw new SimError(
          `secrets encryption is not enabled on ${clusterKey} (K3s secrets-encryption: true when the cluster starts)`,
          'EncryptionStageInvalid',
          { cluster: clusterKey },
        );
      let rewritten: number | undefined;
      if (command === 'prepare') writeEncryption(dir, prepareStage(state, new Date()));
      else if (command === 'rotate') writeEncryption(dir, rotateStage(state));
      else {
        // Refused unless rotated: the key that writes must be the new one before anything is written again.
        reencryptedStage(state);
        writeEncryption(dir, { ...state, stage: 'reencrypt_active' });
        rewritten = await this.rewriteSecrets(api);
        writeEncryption(dir, reencryptedStage(state));
      }
      await this.restartApiServer(api);
      this.log.info({ cluster: clusterKey, command, rewritten }, 'secrets encryption stage done');
      const done = `secrets-encrypt ${command} done${rewritten === undefined ? '' : `: ${rewritten} Secret(s) written with the new key`}`;
      return `${done}\n${encryptionStatusText(readEncryption(dir))}`;
    });
  }

  /** Every Secret of the cluster written back unchanged: the API server stores it again with its first key. */
  private async rewriteSecrets(api: DedicatedClusterApi): Promise<number> {
    const connection = this.connect(api.spec.endpoint, api.spec.identity.token);
    if (!connection) throw new SimError(`${api.key} does not answer`, 'APIServerNotReady');
    const secrets = connection.client.resource<V1Secret>(SECRETS);
    let count = 0;
    // A page at a time: the cluster owner decides how many Secrets there are and how large, and the provider holds
    // one page of them, never the whole set.
    let token: string | undefined;
    do {
      const page = await secrets.list({ limit: REENCRYPT_PAGE_SIZE, ...(token && { continue: token }) });
      for (const secret of page.items) {
        await secrets.replace(secret);
        count++;
      }
      token = page.continue;
    } while (token);
    return count;
  }

  private async restartApiServer(api: DedicatedClusterApi): Promise<void> {
    await this.stopKubelet(api.key);
    this.closeClients(api.url);
    try {
      await api.restartApiServer();
    } finally {
      this.ensureKubelet(api);
    }
  }

  private ownEtcdCluster(
    clusterKey: string,
    reason: 'EtcdRequestFailed' | 'EtcdRestoreFailed',
  ): DedicatedClusterApi {
    const api = this.clusters.get(clusterKey);
    if (!api)
      throw new SimError(`no server of ${clusterKey} is running here`, reason, { cluster: clusterKey });
    if (!(api instanceof DedicatedClusterApi)) {
      throw new SimError(
        `${clusterKey} is a shared-mode cluster: its data lives in the shared server, which has no per-cluster snapshots`,
        reason,
        {
          cluster: clusterKey,
        },
      );
    }
    return api;
  }

  /**
   * A server machine of the cluster is gone and others remain: its etcd member leaves the cluster (K3s removes the
   * member of a deleted server's Node). Nothing for a cluster in the shared store, or one not served here.
   */
  removeEtcdMember(clusterKey: string, member: string): Promise<void> {
    return this.withLock(clusterKey, async () => {
      const api = this.clusters.get(clusterKey);
      if (api instanceof DedicatedClusterApi && (await api.removeMember(member)))
        await this.restartApiServer(api);
    });
  }

  /** The cluster's API server stops for good and its data goes: its last server machine is gone. */
  releaseClusterApi(clusterKey: string): Promise<void> {
    return this.withLock(clusterKey, async () => {
      const api = this.clusters.get(clusterKey);
      if (!api) return;
      await this.stopKubelet(clusterKey);
      this.clusters.delete(clusterKey);
      this.closeClients(api.url);
      await api.destroy();
      this.log.info({ cluster: clusterKey }, 'workload API server stopped and its data deleted');
      // Sharded, other replicas' shared clusters may still use the shared server: it stays.
      const lastShared =
        !this.runtime.sharding && ![...this.clusters.values()].some((c) => c.spec.mode === 'shared');
      if (api.spec.mode === 'shared' && lastShared) {
        await this.sharedServer?.stop();
        await this.sharedServer?.wipe();
        this.sharedServer = undefined;
      }
    });
  }

  /** The API a node reaches at `serverEndpoint` with `token` (undefined when no cluster is served there). */
  connect(serverEndpoint: ApiEndpoint, token: string): WorkloadConnection | undefined {
    const url = endpointKeyOf(serverEndpoint);
    const api = [...this.clusters.values()].find((c) => c.url === url);
    if (!api) return undefined;
    const clientKey = `${url}|${createHash('sha256').update(token).digest('hex')}`;
    let client = this.clients.get(clientKey);
    if (!client) {
      const node = new ClusterConnection({
        context: 'node',
        server: url,
        caPem: api.spec.identity.tls.serverCA.certPem,
        token,
      });
      client = createKubeClient(node, { fieldManager: 'k3s' });
      this.clients.set(clientKey, client);
    }
    return { client, url };
  }

  /** Starts the machine's node agent unless one runs; returns it. */
  ensureNodeAgent(machineKey: string, spec: NodeAgentSpec): NodeAgent {
    const running = this.agents.get(machineKey);
    if (running) {
      running.setFaults(spec.faults);
      return running;
    }
    const { serverEndpoint, token, ...rest } = spec;
    const url = endpointKeyOf(serverEndpoint);
    this.agentUrls.set(machineKey, url);
    const agent = new NodeAgent({
      ...rest,
      onChange: (status) => {
        rest.onChange(status);
        this.kubeletAt(url)?.nodeChanged(rest.identity.name);
      },
      connect: () => this.connect(serverEndpoint, token),
      heartbeatMs: this.runtime.options.heartbeatSeconds * 1000,
      nodeStatusMs: this.runtime.options.nodeStatusSeconds * 1000,
      logger: this.runtime.logger.child({ machine: machineKey }),
    });
    this.agents.set(machineKey, agent);
    agent.start();
    return agent;
  }

  nodeAgent(machineKey: string): NodeAgent | undefined {
    return this.agents.get(machineKey);
  }

  /**
   * Sharded: hands over the clusters (and machines) this replica no longer owns. Their API servers keep running for
   * the new owner to adopt (shared-mode front proxies close so it can listen), their nodes stop heartbeating from
   * here (the Nodes stay), their agent processes keep running. `clusterOfMachine` maps a machine key to its
   * cluster key (undefined: unknown, left alone).
   */
  async releaseClusters(
    stillOwned: (clusterKey: string) => boolean,
    clusterOfMachine: (machineKey: string) => string | undefined,
  ): Promise<void> {
    const machines = [...new Set([...this.agents.keys(), ...this.machineAgents.keys()])].filter((key) => {
      const cluster = clusterOfMachine(key);
      return cluster !== undefined && !stillOwned(cluster);
    });
    await Promise.all(
      machines.map(async (key) => {
        await this.removeNodeAgent(key, { deleteNode: false });
        await this.machineAgents.detach(key);
      }),
    );
    const clusters = [...this.clusters.keys()].filter((key) => !stillOwned(key));
    await Promise.all(
      clusters.map((key) =>
        this.withLock(key, async () => {
          const api = this.clusters.get(key);
          if (!api) return;
          await this.stopKubelet(key);
          this.clusters.delete(key);
          this.closeClients(api.url);
          await api.detach();
        }),
      ),
    );
    if (machines.length + clusters.length > 0)
      this.log.info(
        { clusters: clusters.length, machines: machines.length },
        'handed clusters over to another replica',
      );
  }

  /** Stops the machine's node agent; with `deleteNode` its Node goes too (the host is gone). */
  async removeNodeAgent(machineKey: string, options: { deleteNode: boolean }): Promise<void> {
    const agent = this.agents.get(machineKey);
    if (!agent) return;
    this.agents.delete(machineKey);
    await agent.stop(options);
    this.agentUrls.delete(machineKey);
  }

  get agentCount(): number {
    return this.agents.size;
  }

  get clusterCount(): number {
    return this.clusters.size;
  }

  /**
   * Graceful shutdown: node agents stop (their Nodes stay, as when a host's kubelet restarts), API
   * servers and the provider's own etcd stop; their data stays for the next start.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.orphanTimer);
    if (this.runtime.sharding) {
      await this.shutdownReplica();
      return;
    }
    await Promise.all([...this.kubelets.keys()].map((key) => this.stopKubelet(key)));
    await Promise.all([...this.agents.values()].map((agent) => agent.stop({ deleteNode: false })));
    this.agents.clear();
    await this.machineAgents.shutdown();
    await Promise.all(
      [...this.clusters.values()].map((api) =>
        api
          .stop()
          .catch((error: unknown) =>
            this.log.warn({ err: error, cluster: api.key }, 'could not stop an API server'),
          ),
      ),
    );
    this.clusters.clear();
    await this.sharedServer?.stop();
    for (const url of new Set([...this.clients.keys()].map((k) => k.split('|')[0]!))) this.closeClients(url);
    const etcd = await this.etcdHandle?.catch(() => undefined);
    await etcd?.stop();
    this.log.info('sim runtime stopped');
  }

  /** A sharded replica stops: the host's processes stay for the other replicas (see releaseClusters). */
  private async shutdownReplica(): Promise<void> {
    await Promise.all([...this.kubelets.keys()].map((key) => this.stopKubelet(key)));
    await Promise.all([...this.agents.values()].map((agent) => agent.stop({ deleteNode: false })));
    this.agents.clear();
    await this.machineAgents.detachAll();
    await Promise.all([...this.clusters.values()].map((api) => api.detach()));
    this.clusters.clear();
    for (const url of new Set([...this.clients.keys()].map((k) => k.split('|')[0]!))) this.closeClients(url);
    this.log.info(
      'sim runtime replica stopped; API servers, etcd and agent processes left running for the others',
    );
  }

  /** Called when a cluster's API server stops on its own: its machines should reconcile (and restart it). */
  onClusterDown(listener: (clusterKey: string) => void): () => void {
    this.clusterDownListeners.add(listener);
    return () => this.clusterDownListeners.delete(listener);
  }

  private clusterDown(clusterKey: string): void {
    for (const listener of this.clusterDownListeners) listener(clusterKey);
  }

  private createClusterApi(spec: ClusterApiSpec): ClusterApi {
    const host: ApiServerHost = {
      kubeApiserver: this.resolveBinaries().kubeApiserver,
      etcd: () => this.etcd(),
      stateDir: this.stateDir,
      bindAddress: this.runtime.options.bindAddress,
      memoryLimitMiB: this.runtime.options.apiServerMemoryLimitMiB,
      workloadControllers: this.runtime.options.workloads
        ? () => this.resolveWorkloadControllers()
        : undefined,
      clusterEtcd:
        this.runtime.options.clusterEtcd === 'per-cluster'
          ? { etcd: () => this.resolveBinaries().etcd, etcdutl: () => this.resolveEtcdutl() }
          : undefined,
      certificateAgeDays: this.runtime.options.certificateAgeDays,
      startTimeoutMs: this.runtime.options.apiServerStartTimeoutSeconds * 1000,
      logger: this.runtime.logger,
      onExit: (key) => {
        this.log.warn({ cluster: key }, 'a workload API server exited on its own');
        if (key === 'shared') {
          for (const api of this.clusters.values()) if (api.spec.mode === 'shared') this.clusterDown(api.key);
        } else {
          this.clusterDown(key);
        }
      },
    };
    if (spec.mode === 'shared') {
      this.sharedServer ??= new SharedApiServer(host);
      return new SharedClusterApi(spec, host, this.sharedServer);
    }
    return new DedicatedClusterApi(spec, host);
  }

  private etcdutl: string | undefined;

  private resolveEtcdutl(): string {
    this.etcdutl ??= resolveEtcdutl((line) => this.log.info(line));
    return this.etcdutl;
  }

  private resolveBinaries(): { kubeApiserver: string; etcd: string } {
    this.binaries ??= resolveControlPlaneBinaries((line) => this.log.info(line));
    return this.binaries;
  }

  /** Dedicated clusters that run workloads get their nodes' kubelets, one pod watch per cluster. */
  private ensureKubelet(api: ClusterApi): void {
    if (!this.runtime.options.workloads || api.spec.mode !== 'dedicated' || this.kubelets.has(api.key))
      return;
    const connection = this.connect(api.spec.endpoint, api.spec.identity.token);
    if (!connection) return;
    const kubelet = new SimKubelet({
      clusterKey: api.key,
      client: connection.client,
      runningNode: (name) => this.runningNode(api.url, name),
      logger: this.runtime.logger,
    });
    this.kubelets.set(api.key, kubelet);
    kubelet.start();
  }

  private async stopKubelet(clusterKey: string): Promise<void> {
    const kubelet = this.kubelets.get(clusterKey);
    this.kubelets.delete(clusterKey);
    await kubelet?.stop();
  }

  private kubeletAt(url: string): SimKubelet | undefined {
    const api = [...this.clusters.values()].find((c) => c.url === url);
    return api ? this.kubelets.get(api.key) : undefined;
  }

  /** A node of the cluster at `url` whose agent runs here: registered (its kubelet works) or stopped by the not-ready fault. */
  private runningNode(url: string, name: string): KubeletNode | undefined {
    for (const [key, agent] of this.agents) {
      if (this.agentUrls.get(key) !== url || agent.identity.name !== name) continue;
      const { phase } = agent.status;
      if (phase !== 'Registered' && phase !== 'NotReady') continue;
      const internalIP = agent.identity.addresses.find((a) => a.type === 'InternalIP')?.address;
      if (!internalIP) return undefined;
      const state = phase === 'Registered' ? 'Running' : 'NotReady';
      return { name, state, internalIP, role: agent.identity.role, version: agent.identity.version };
    }
    return undefined;
  }

  private resolveWorkloadControllers(): Readonly<Record<WorkloadController, string>> {
    const log = (line: string) => this.log.info(line);
    this.controllerBinaries ??= {
      'kube-controller-manager': resolveKubeComponent('kube-controller-manager', log),
      'kube-scheduler': resolveKubeComponent('kube-scheduler', log),
    };
    return this.controllerBinaries;
  }

  private closeClients(url: string): void {
    for (const [key, client] of this.clients) {
      if (key.startsWith(`${url}|`)) {
        void client.close();
        this.clients.delete(key);
      }
    }
  }

  private withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    this.locks.set(key, settled);
    void settled.then(() => {
      if (this.locks.get(key) === settled) this.locks.delete(key);
    });
    return next;
  }
}
