import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { apiServerUrl } from '@capstan/pki';
import { PROXY_CLIENT_COMMON_NAME, workloadApiServerArgs } from './api-server-args.js';
import { apiServerFilesIn, writeApiServerFiles } from './api-server-certificates.js';
import { clusterEtcdPrefix, clusterKeyOf, type ClusterApi, type ClusterApiSpec } from './cluster-api.js';
import { SimError } from './errors.js';
import { deleteEtcdPrefix, type SimEtcd } from './etcd.js';
import { EtcdMemberSet } from './etcd-members.js';
import { apiServerReady } from './https-probe.js';
import { encryptionConfigPath, ensureEncryption, readEncryption } from './secrets-encryption.js';
import { OwnedProcess, stopRecordedProcess, type StartOutcome } from './owned-process.js';
import type { SimStateDir } from './state-dir.js';
import { waitFor } from './wait.js';
import { WorkloadControllers, type WorkloadController } from './workload-controllers.js';

export interface ApiServerHost {
  kubeApiserver: string;
  etcd: () => Promise<SimEtcd>;
  stateDir: SimStateDir;
  /** Unset: the endpoint host when it is an IP address, else 0.0.0.0. */
  bindAddress?: string;
  memoryLimitMiB: number;
  startTimeoutMs: number;
  logger: Logger;
  /** A server process the provider started exited on its own. */
  onExit: (key: string) => void;
  /**
   * The kube-controller-manager and kube-scheduler binaries dedicated clusters run next to their API server (a
   * function: resolved, and built if need be, only when the first one starts); unset, they run none.
   */
  workloadControllers?: () => Readonly<Record<WorkloadController, string>>;
  /**
   * Each dedicated cluster keeps its data in etcd members of its own, one per server machine (K3s's embedded etcd:
   * what an etcd snapshot saves and a cluster reset restores); the etcd and etcdutl binaries, resolved when first
   * needed. Unset: every cluster lives in `etcd()` under a key prefix (the shared store, for scale runs).
   */
  clusterEtcd?: { etcd: () => string; etcdutl: () => string };
  /** A new cluster's certificates start this many days old (CAPSTAN_SIM_CERTIFICATE_AGE_DAYS; 0 or unset: new). */
  certificateAgeDays?: number;
}

/** The largest etcd snapshot the sim saves or restores (K3s's default backend quota). */
export const MAX_ETCD_SNAPSHOT_BYTES = 2 * 1024 ** 3;
/** How long the server's processes get after SIGTERM before a cluster reset kills them. */
const RESET_GRACE_MS = 1_000;
/** The member a cluster's etcd starts with when no server named one (a start that is not a server's boot). */
const FIRST_MEMBER = 'server';

export function bindAddressFor(host: ApiServerHost, endpointHost: string): string {
  return host.bindAddress ?? (isIP(endpointHost) !== 0 ? endpointHost : '0.0.0.0');
}

export function advertiseAddressFor(bindAddress: string): string {
  return bindAddress === '0.0.0.0' || bindAddress === '::' ? '127.0.0.1' : bindAddress;
}

export function memoryLimitEnv(memoryLimitMiB: number): NodeJS.ProcessEnv | undefined {
  return memoryLimitMiB > 0 ? { GOMEMLIMIT: `${memoryLimitMiB}MiB` } : undefined;
}

const ADOPTED_READY_TIMEOUT_MS = 15_000;

/** A workload cluster with a kube-apiserver of its own on the cluster endpoint. */
export class DedicatedClusterApi implements ClusterApi {
  readonly key: string;
  readonly url: string;
  private process: OwnedProcess | undefined;
  private controllers: WorkloadControllers | undefined;

  constructor(
    readonly spec: ClusterApiSpec,
    private readonly host: ApiServerHost,
  ) {
    this.key = clusterKeyOf(spec.namespace, spec.clusterName);
    this.url = apiServerUrl(spec.endpoint);
    this.members = host.clusterEtcd
      ? new EtcdMemberSet({
          dir: this.etcdDir,
          clusterKey: this.key,
          binaries: host.clusterEtcd,
          quotaBackendBytes: MAX_ETCD_SNAPSHOT_BYTES,
          env: memoryLimitEnv(Math.round(host.memoryLimitMiB / 2)),
          logger: host.logger,
        })
      : undefined;
  }

  private get dir(): string {
    return this.host.stateDir.clusterDir(this.spec.namespace, this.spec.clusterName);
  }

  private get etcdPrefix(): string {
    // Its own etcd holds the cluster alone, under the prefix a kube-apiserver uses by default (as K3s's does).
    return this.host.clusterEtcd
      ? '/registry'
      : clusterEtcdPrefix(this.spec.namespace, this.spec.clusterName);
  }

  private get etcdDir(): string {
    return join(this.dir, 'etcd');
  }

  /** The cluster's own etcd members (unset: it lives in the shared store). */
  private readonly members: EtcdMemberSet | undefined;

  /** The etcd URLs the running kube-apiserver was given. */
  private etcdUrls: string[] = [];

  /** The cluster's etcd: its own members (started or adopted here; `member` starts a new cluster), or the shared store. */
  private async etcd(member: string | undefined): Promise<string[]> {
    if (!this.members) return [(await this.host.etcd()).url];
    this.host.stateDir.ensure(this.etcdDir);
    await this.members.startAll(member ?? FIRST_MEMBER);
    return this.members.clientUrls();
  }

  /** `member`: the server machine (its node name) whose boot starts the cluster; its etcd member is the first. */
  async start({ fresh, member }: { fresh: boolean; member?: string }): Promise<StartOutcome> {
    const dir = this.host.stateDir.ensure(this.dir);
    if (fresh) {
      // Controllers that cached the old cluster's objects must not act on the new one.
      await (this.controllers ?? this.controllersIn(dir))?.stop();
      this.controllers = undefined;
      await this.process?.stop();
      if (this.members) {
        await this.members.stopAll();
        this.host.stateDir.remove(this.etcdDir);
      } else {
        await deleteEtcdPrefix((await this.host.etcd()).url, this.etcdPrefix);
      }
    }
    const etcdUrls = await this.etcd(member);
    this.etcdUrls = etcdUrls;
    const digest = await writeApiServerFiles(dir, this.spec.identity, {
      firstIssueDaysAgo: this.host.certificateAgeDays ?? 0,
    });
    const bindAddress = bindAddressFor(this.host, this.spec.endpoint.host);
    // K3s turns encryption on when a server starts with `secrets-encryption: true`; once on, it stays on.
    if (this.spec.secretsEncryption) ensureEncryption(dir, new Date());
    const encrypted = readEncryption(dir) !== undefined;
    const process = new OwnedProcess({
      name: 'kube-apiserver',
      dir,
      command: this.spec.installed?.kubeApiserver ?? this.host.kubeApiserver,
      args: [
        ...workloadApiServerArgs({
          etcdUrls,
          etcdPrefix: this.etcdPrefix,
          bindAddress,
          advertiseAddress: advertiseAddressFor(bindAddress),
          port: this.spec.endpoint.port,
          files: apiServerFilesIn(dir),
          serviceCIDR: this.spec.identity.serviceCIDR,
          clusterDomain: this.spec.identity.clusterDomain,
          requestHeaderAllowedNames: [PROXY_CLIENT_COMMON_NAME],
          serviceAccountAdmission: this.host.workloadControllers !== undefined,
        }),
        ...(encrypted ? [`--encryption-provider-config=${encryptionConfigPath(dir)}`] : []),
        // Later flags win: a plan's kube-apiserver-arg overrides the sim's own setting of the same flag.
        ...(this.spec.installed?.extraArgs ?? []),
      ],
      env: memoryLimitEnv(this.host.memoryLimitMiB),
      inputs: [digest],
    });
    this.process = process;
    let outcome = await process.start();
    if (
      outcome === 'adopted' &&
      !(await this.waitHealthy(process, ADOPTED_READY_TIMEOUT_MS).then(
        () => true,
        () => false,
      ))
    ) {
      // Running what we want but not answering: replace it.
      await process.stop();
      outcome = await process.start();
    }
    if (outcome === 'started') {
      void process.exited?.then(() => {
        if (this.process === process) this.host.onExit(this.key);
      });
      await this.waitHealthy(process, this.host.startTimeoutMs).catch(async (error: unknown) => {
        const log = process.tailLog(40);
        await process.stop();
        this.host.logger.warn({ cluster: this.key, log }, 'workload kube-apiserver did not start');
        const inUse = /address already in use/i.test(log);
        throw new SimError(
          inUse
            ? `the kube-apiserver of ${this.key} cannot listen on ${this.url}: the port is in use by another process`
            : `the kube-apiserver of ${this.key} did not become ready: ${(error as Error).message.split('\n')[0]}`,
          'APIServerStartFailed',
          { cluster: this.key, port: this.spec.endpoint.port },
        );
      });
    }
    await this.startControllers(dir);
    return outcome;
  }

  /** The API server answers and, where they run, the controller manager and scheduler are up. */
  async healthy(): Promise<boolean> {
    return (
      (await this.answers()) &&
      (this.host.workloadControllers === undefined || this.controllers?.alive() === true)
    );
  }

  private answers(): Promise<boolean> {
    return apiServerReady(this.url, this.spec.identity.tls.serverCA.certPem, this.spec.identity.token);
  }

  /** `graceMs`: how long each process may take after SIGTERM (a cluster reset kills, as K3s's killall does). */
  async stop(graceMs?: number): Promise<void> {
    const process = this.process;
    this.process = undefined;
    const controllers = this.controllers;
    this.controllers = undefined;
    await (controllers ?? this.controllersIn(this.dir))?.stop(graceMs);
    if (process) await process.stop(graceMs);
    else await stopRecordedProcess(this.dir, 'kube-apiserver');
    await this.members?.stopAll(graceMs);
  }

  /**
   * Server `member` (its node name) has a running etcd member: started again after a restart, or joined to the
   * others (a new server, or one whose data a cluster reset dropped). Nothing for a cluster in the shared store.
   */
  async ensureMember(member: string): Promise<void> {
    await this.members?.ensure(member);
  }

  /**
   * Server `member` is gone: its etcd member leaves the cluster. The kube-apiserver keeps the members it knows,
   * and fails over between them; true when none of them is left, so it must restart to be given the others.
   */
  async removeMember(member: string): Promise<boolean> {
    if (!this.members) return false;
    await this.members.remove(member);
    const urls = this.members.clientUrls();
    return urls.length > 0 && !this.etcdUrls.some((url) => urls.includes(url));
  }

  /**
   * The kube-apiserver alone restarts (its etcd and controllers keep running), as K3s restarts after a
   * `secrets-encrypt` stage: it reads the encryption configuration again.
   */
  async restartApiServer(): Promise<void> {
    const process = this.process;
    // Unset first: this exit is not the server stopping on its own. A short grace, as for a reset: the data is in
    // etcd, and nothing the server still answers matters.
    this.process = undefined;
    if (process) await process.stop(RESET_GRACE_MS);
    else await stopRecordedProcess(this.dir, 'kube-apiserver');
    await this.start({ fresh: false });
  }

  /** The cluster directory (its encryption configuration lives there). */
  get clusterDir(): string {
    return this.dir;
  }

  /**
   * After `k3s certificate rotate` on a server: the API server's serving and front-proxy certificates are issued
   * again. The running server reloads them from file (kube-apiserver watches its --tls-cert-file), so it keeps
   * answering throughout, as a cluster whose servers rotate one at a time does.
   */
  async renewServingCertificate(): Promise<void> {
    await writeApiServerFiles(this.host.stateDir.ensure(this.dir), this.spec.identity, { renew: true });
  }

  /**
   * `k3s etcd-snapshot save` on server `member`: a snapshot of its etcd member into `file` (its size in bytes). Only
   * a cluster with an etcd of its own has one to give.
   */
  async saveSnapshot(file: string, member: string): Promise<number> {
    return this.requireOwnEtcd('snapshot', 'EtcdRequestFailed').saveSnapshot(
      member,
      file,
      MAX_ETCD_SNAPSHOT_BYTES,
    );
  }

  /**
   * `k3s server --cluster-reset --cluster-reset-restore-path` on server `member`: every server stops (API server,
   * controllers, etcd members: Rancher's restore stops them all first), `member`'s etcd data is replaced by the
   * snapshot's as a cluster of one (refused, every member's data untouched, when the snapshot does not check out),
   * the other members' data goes, and the server starts again on the restored data. The other servers join again,
   * empty, when they next start (K3s's tombstone). The controllers start afresh: they must not act on what they
   * cached before the reset.
   */
  async restoreSnapshot(file: string, member: string): Promise<void> {
    const members = this.requireOwnEtcd('restore', 'EtcdRestoreFailed');
    // The reset kills the server, as `k3s-killall.sh` does before a restore: nothing it would still write matters.
    await this.stop(RESET_GRACE_MS);
    try {
      await members.restore(member, file, RESET_GRACE_MS);
    } finally {
      // Restored or not, the cluster serves again: on the snapshot's data, or on what it had.
      await this.start({ fresh: false });
    }
  }

  private requireOwnEtcd(
    what: 'snapshot' | 'restore',
    reason: 'EtcdRequestFailed' | 'EtcdRestoreFailed',
  ): EtcdMemberSet {
    if (this.members) return this.members;
    throw new SimError(
      `${this.key} keeps its data in the shared store: it has no etcd of its own to ${what}`,
      reason,
      {
        cluster: this.key,
      },
    );
  }

  async detach(): Promise<void> {
    // The processes keep running; `this.process` going means their exit is no longer this provider's business.
    this.process = undefined;
    this.controllers?.detach();
    this.controllers = undefined;
    this.members?.detach();
  }

  /** As K3s runs them in the server process: they start (or are adopted, or restarted) with the API server. */
  private async startControllers(dir: string): Promise<void> {
    this.controllers ??= this.controllersIn(dir);
    await this.controllers?.start((component) => {
      this.host.logger.warn({ cluster: this.key, component }, 'a workload controller exited on its own');
      this.host.onExit(this.key);
    });
  }

  private controllersIn(dir: string): WorkloadControllers | undefined {
    const binaries = this.host.workloadControllers?.();
    if (!binaries) return undefined;
    return new WorkloadControllers({
      dir,
      clusterName: this.spec.clusterName,
      apiServerUrl: this.url,
      identity: this.spec.identity,
      binaries,
      // Half the API server's budget each: their working sets are smaller.
      env: memoryLimitEnv(Math.round(this.host.memoryLimitMiB / 2)),
    });
  }

  async destroy(): Promise<void> {
    await this.stop();
    if (!this.members) await deleteEtcdPrefix((await this.host.etcd()).url, this.etcdPrefix);
    this.host.stateDir.remove(this.dir);
  }

  private waitHealthy(process: OwnedProcess, timeoutMs: number): Promise<void> {
    return waitFor(() => this.answers(), {
      what: `kube-apiserver of ${this.key}`,
      timeoutMs,
      exited: process.exited,
      reason: 'APIServerNotReady',
      intervalMs: 200,
    });
  }
}
