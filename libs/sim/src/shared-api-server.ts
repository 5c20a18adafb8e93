import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  apiServerUrl,
  generateClusterCertificates,
  issueServerCertificate,
  loadCertificateAuthority,
} from '@capstan/pki';
import { serverTlsFromClusterCertificates } from '@capstan/k3s-bootstrap';
import { freePort } from '@capstan/testing/local-host';
import { PROXY_CLIENT_COMMON_NAME, workloadApiServerArgs } from './api-server-args.js';
import {
  apiServerFilesIn,
  servingCertificateNames,
  writeApiServerFiles,
  type ApiServerIdentity,
} from './api-server-certificates.js';
import { clusterKeyOf, SHARED_ETCD_PREFIX, type ClusterApi, type ClusterApiSpec } from './cluster-api.js';
import { bindAddressFor, type ApiServerHost } from './dedicated-cluster-api.js';
import { SimError } from './errors.js';
import { deleteEtcdPrefix } from './etcd.js';
import { ClusterFrontProxy, type FrontProxyUpstream } from './front-proxy.js';
import { apiServerReady } from './https-probe.js';
import { OwnedProcess, recordedProcessAlive } from './owned-process.js';
import { portIsFree } from './port-allocator.js';
import { withHostLock } from './host-lock.js';
import { K3S_DEFAULT_CLUSTER_CIDR, K3S_DEFAULT_CLUSTER_DOMAIN, K3S_DEFAULT_SERVICE_CIDR } from './service-network.js';
import { sharedClusterNodeSelector } from './shared-cluster-nodes.js';
import { waitFor } from './wait.js';

interface SharedState {
  port: number;
  identity: ApiServerIdentity;
}

/**
 * The one kube-apiserver behind every shared-mode cluster: its own certificates (generated once, kept in the
 * state dir), listening on loopback only; clusters reach it through their front proxies.
 */
export class SharedApiServer {
  private process: OwnedProcess | undefined;
  private starting: Promise<FrontProxyUpstream> | undefined;
  private ready = false;

  constructor(private readonly host: ApiServerHost) {}

  private get dir(): string {
    return this.host.stateDir.sharedDir;
  }

  /**
   * One prefix per state dir: environments sharing one etcd (test runs, the demo next to them) never see each
   * other's shared clusters, including what a sharded provider's shared server leaves when its replicas stop.
   */
  private get etcdPrefix(): string {
    return `${SHARED_ETCD_PREFIX}/${createHash('sha256').update(this.host.stateDir.root).digest('hex').slice(0, 12)}`;
  }

  /** Starts or adopts the shared API server once; what a front proxy needs to reach it. */
  ensure(): Promise<FrontProxyUpstream> {
    // An adopted server is not our child: its death shows only here (another replica's own start replaces it).
    if (this.ready && !this.process?.alive()) {
      this.ready = false;
      this.starting = undefined;
    }
    this.starting ??= this.start().then(
      (upstream) => {
        this.ready = true;
        return upstream;
      },
      (error: unknown) => {
        this.starting = undefined;
        throw error;
      },
    );
    return this.starting;
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    this.ready = false;
    await starting?.catch(() => undefined);
    const process = this.process;
    this.process = undefined;
    await process?.stop();
  }

  private async loadState(): Promise<SharedState> {
    const file = join(this.dir, 'state.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as SharedState;
    const certificates = await generateClusterCertificates('capstan-sim-shared');
    const state: SharedState = {
      port: await freePort(),
      identity: {
        tls: serverTlsFromClusterCertificates(certificates),
        token: randomBytes(24).toString('hex'),
        endpointHost: '127.0.0.1',
        tlsSANs: [],
        serviceCIDR: K3S_DEFAULT_SERVICE_CIDR,
        clusterCIDR: K3S_DEFAULT_CLUSTER_CIDR,
        clusterDomain: K3S_DEFAULT_CLUSTER_DOMAIN,
      },
    };
    writeFileSync(file, JSON.stringify(state), { mode: 0o600 });
    return state;
  }

  /**
   * The recorded port, or a new one (saved) when no server of ours runs and something else took it while the server
   * was down: a restart would otherwise fail on "address already in use" for as long as that process holds it.
   */
  private async portStillOurs(dir: string, state: SharedState): Promise<SharedState> {
    if (recordedProcessAlive(dir, 'kube-apiserver') || (await portIsFree('127.0.0.1', state.port))) return state;
    const moved = { ...state, port: await freePort() };
    writeFileSync(join(this.dir, 'state.json'), JSON.stringify(moved), { mode: 0o600 });
    return moved;
  }

  /** Under a host lock: replicas sharing the state dir start it once, and the later ones adopt it. */
  private start(): Promise<FrontProxyUpstream> {
    const dir = this.host.stateDir.ensure(this.dir);
    return withHostLock(join(dir, 'start.lock'), this.host.startTimeoutMs, () => this.startLocked(dir));
  }

  private async startLocked(dir: string): Promise<FrontProxyUpstream> {
    // etcd first: its ports are bound before this server's is chosen, so the two cannot pick the same free port.
    const etcd = await this.host.etcd();
    const state = await this.portStillOurs(dir, await this.loadState());
    const digest = await writeApiServerFiles(dir, state.identity);
    const files = apiServerFilesIn(dir);
    const process = new OwnedProcess({
      name: 'kube-apiserver',
      dir,
      command: this.host.kubeApiserver,
      args: workloadApiServerArgs({
        etcdUrls: [etcd.url],
        etcdPrefix: this.etcdPrefix,
        bindAddress: '127.0.0.1',
        advertiseAddress: '127.0.0.1',
        port: state.port,
        files,
        serviceCIDR: state.identity.serviceCIDR,
        clusterDomain: state.identity.clusterDomain,
        requestHeaderAllowedNames: [PROXY_CLIENT_COMMON_NAME],
        watchCache: true,
      }),
      inputs: [digest],
    });
    this.process = process;
    await process.start();
    void process.exited?.then(() => {
      if (this.process === process) {
        this.starting = undefined;
        this.host.onExit('shared');
      }
    });
    const url = `https://127.0.0.1:${state.port}`;
    await waitFor(() => apiServerReady(url, state.identity.tls.serverCA.certPem, state.identity.token), {
      what: 'the shared kube-apiserver',
      timeoutMs: this.host.startTimeoutMs,
      exited: process.exited,
      details: () => process.tailLog(5),
      reason: 'APIServerStartFailed',
      intervalMs: 200,
    }).catch(async (error: unknown) => {
      await process.stop();
      throw error;
    });
    return {
      host: '127.0.0.1',
      port: state.port,
      caPem: state.identity.tls.serverCA.certPem,
      certPem: readFileSync(files.proxyClientCert, 'utf8'),
      keyPem: readFileSync(files.proxyClientKey, 'utf8'),
    };
  }

  /** Deletes what every shared cluster left (nodes of machines deleted without the provider) once none is left. */
  async wipe(): Promise<void> {
    const etcd = await this.host.etcd();
    await deleteEtcdPrefix(etcd.url, this.etcdPrefix);
  }
}

/** A shared-mode cluster: its endpoint is a front proxy with the cluster's certificates to the shared server. */
export class SharedClusterApi implements ClusterApi {
  readonly key: string;
  readonly url: string;
  private proxy: ClusterFrontProxy | undefined;

  constructor(
    readonly spec: ClusterApiSpec,
    private readonly host: ApiServerHost,
    private readonly shared: SharedApiServer,
  ) {
    this.key = clusterKeyOf(spec.namespace, spec.clusterName);
    this.url = apiServerUrl(spec.endpoint);
  }

  async start(): Promise<'started'> {
    const upstream = await this.shared.ensure();
    if (this.proxy?.listening) return 'started';
    const { identity } = this.spec;
    let serverCA;
    try {
      serverCA = await loadCertificateAuthority(identity.tls.serverCA, 'server CA');
    } catch (error) {
      throw new SimError(
        `the bootstrap data's server CA is unusable: ${(error as Error).message}`,
        'InvalidServerTls',
      );
    }
    const serving = await issueServerCertificate(serverCA, {
      commonName: 'kube-apiserver',
      ...servingCertificateNames(identity),
    });
    const proxy = new ClusterFrontProxy({
      bindAddress: bindAddressFor(this.host, this.spec.endpoint.host),
      port: this.spec.endpoint.port,
      servingCertPem: serving.certPem + identity.tls.serverCA.certPem,
      servingKeyPem: serving.keyPem,
      clientCAPem: identity.tls.clientCA.certPem,
      token: identity.token,
      upstream,
      nodeSelector: sharedClusterNodeSelector(this.spec.namespace, this.spec.clusterName),
      logger: this.host.logger.child({ cluster: this.key }),
    });
    try {
      await proxy.listen();
    } catch (error) {
      throw new SimError(
        `the endpoint of ${this.key} cannot listen on ${this.url}: ${(error as Error).message}`,
        'APIServerStartFailed',
        { cluster: this.key, port: this.spec.endpoint.port },
      );
    }
    this.proxy = proxy;
    await waitFor(() => this.healthy(), {
      what: `the shared API server through ${this.url}`,
      timeoutMs: this.host.startTimeoutMs,
      reason: 'APIServerNotReady',
      intervalMs: 200,
    });
    return 'started';
  }

  healthy(): Promise<boolean> {
    if (!this.proxy?.listening) return Promise.resolve(false);
    return apiServerReady(this.url, this.spec.identity.tls.serverCA.certPem, this.spec.identity.token);
  }

  async stop(): Promise<void> {
    const proxy = this.proxy;
    this.proxy = undefined;
    await proxy?.close();
  }

  async destroy(): Promise<void> {
    await this.stop();
  }

  async detach(): Promise<void> {
    await this.stop();
  }
}
