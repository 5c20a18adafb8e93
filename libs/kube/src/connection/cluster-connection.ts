import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { isIPv6 } from 'node:net';
import { impersonationHeaders, type ImpersonatedUser, type RequestHeaders } from './impersonation.js';
import { KubeconfigError, parseKubeconfig, readKubeconfigFiles, type KubeconfigSelection } from './kubeconfig.js';

/** Where the client finds its cluster: a kubeconfig file, a kubeconfig document, the pod's service account, or the default rules. */
export type KubeConfigSource =
  | { kubeconfigPath: string; context?: string }
  | { kubeconfig: string; context?: string }
  | { inCluster: true }
  | { default: true };

/** The part of client-node's KubeConfig this library reads, so tests and the CLI can hand theirs in without this library loading client-node. */
export interface ClientNodeKubeConfig {
  currentContext: string;
  exportConfig(): string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** A projected service account token rotates; it is read again after this long, as client-go does. */
const TOKEN_FILE_TTL_MS = 60_000;

/** TLS settings for every connection to the API server. */
export interface ConnectionTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

/**
 * How to reach one API server and who to be there: its URL, TLS material and credentials (client certificate, bearer
 * token, token file, basic auth, or an exec/auth-provider plugin). Capstan's own replacement for client-node's
 * KubeConfig on the services' path: client-node's KubeConfig loads every generated API class with it (about 50 MiB
 * per process, docs/performance.md); client-node is loaded here only for a plugin, which needs its implementations.
 */
export class ClusterConnection {
  private tokenFromFile?: { token: string; readAt: number };
  private pluginHeaders?: (url: string) => Promise<Record<string, string>>;

  constructor(
    readonly settings: KubeconfigSelection,
    /** The kubeconfig text, kept only when a plugin must interpret it. */
    private readonly pluginKubeconfig?: string,
    /**
     * Where the bearer token comes from when the caller reads it itself (asked per request; it caches): the node
     * agent reads its token file without following symlinks and renews the file while it runs.
     */
    private readonly tokenSource?: () => string,
    /** Set by `impersonating`: every request acts as this user. */
    readonly impersonated?: ImpersonatedUser,
  ) {
    if (settings.plugin && !pluginKubeconfig) {
      throw new KubeconfigError(`context "${settings.context}": an ${settings.plugin} plugin needs the kubeconfig it came from`);
    }
  }

  get server(): string {
    return this.settings.server;
  }

  get namespace(): string | undefined {
    return this.settings.namespace;
  }

  get tls(): ConnectionTls {
    return {
      ca: this.settings.caPem,
      cert: this.settings.clientCertificatePem,
      key: this.settings.clientKeyPem,
      rejectUnauthorized: !this.settings.insecureSkipTlsVerify,
      servername: this.settings.tlsServerName,
    };
  }

  /** The same API server and credentials, acting as `user` (Kubernetes impersonation: see ImpersonatedUser). */
  impersonating(user: ImpersonatedUser): ClusterConnection {
    return new ClusterConnection(this.settings, this.pluginKubeconfig, this.tokenSource, user);
  }

  /**
   * The headers that authenticate a request (and impersonate, when set); read per request because token files and
   * plugin tokens rotate.
   */
  async authenticationHeaders(url: string): Promise<RequestHeaders> {
    const credentials = await this.credentialHeaders(url);
    return this.impersonated ? { ...credentials, ...impersonationHeaders(this.impersonated) } : credentials;
  }

  private async credentialHeaders(url: string): Promise<Record<string, string>> {
    const { token, tokenFile, username, password, plugin } = this.settings;
    if (plugin) return (this.pluginHeaders ??= await pluginAuthentication(this.pluginKubeconfig!))(url);
    if (this.tokenSource) return { Authorization: `Bearer ${this.tokenSource()}` };
    if (token) return { Authorization: `Bearer ${token}` };
    if (tokenFile) return { Authorization: `Bearer ${this.readTokenFile(tokenFile)}` };
    if (username) return { Authorization: `Basic ${Buffer.from(`${username}:${password ?? ''}`).toString('base64')}` };
    return {};
  }

  private readTokenFile(path: string): string {
    const now = Date.now();
    if (this.tokenFromFile && now - this.tokenFromFile.readAt < TOKEN_FILE_TTL_MS) return this.tokenFromFile.token;
    try {
      this.tokenFromFile = { token: readFileSync(path, 'utf8').trim(), readAt: now };
    } catch (error) {
      throw new KubeconfigError(`token file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return this.tokenFromFile.token;
  }
}

/** client-node's plugin implementations (exec, OIDC, cloud providers), loaded only for a kubeconfig that uses one. */
async function pluginAuthentication(kubeconfig: string): Promise<(url: string) => Promise<Record<string, string>>> {
  const { KubeConfig, RequestContext, HttpMethod } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  return async (url): Promise<Record<string, string>> => {
    const context = new RequestContext(url, HttpMethod.GET);
    await kc.applySecurityAuthentication(context);
    const authorization = context.getHeaders()['Authorization'];
    return authorization ? { Authorization: authorization } : {};
  };
}

/** A connection from kubeconfig text (a Secret's, a file's content). */
export function connectionFromKubeconfig(text: string, context?: string): ClusterConnection {
  const settings = parseKubeconfig(text, { context });
  return new ClusterConnection(settings, settings.plugin ? text : undefined);
}

/** The pod's service account, as client-go's rest.InClusterConfig finds it. */
export function inClusterConnection(serviceAccountDir = SERVICE_ACCOUNT_DIR): ClusterConnection {
  const host = process.env['KUBERNETES_SERVICE_HOST'];
  const port = process.env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) throw new KubeconfigError('not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const caPath = join(serviceAccountDir, 'ca.crt');
  let caPem: string;
  try {
    caPem = readFileSync(caPath, 'utf8');
  } catch (error) {
    throw new KubeconfigError(`the service account CA ${caPath} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const namespacePath = join(serviceAccountDir, 'namespace');
  return new ClusterConnection({
    context: 'in-cluster',
    server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
    caPem,
    tokenFile: join(serviceAccountDir, 'token'),
    namespace: existsSync(namespacePath) ? readFileSync(namespacePath, 'utf8').trim() : undefined,
  });
}

/** kubectl's rules: $KUBECONFIG's files, else ~/.kube/config, else the pod's service account. */
export function defaultConnection(context?: string): ClusterConnection {
  const fromEnv = (process.env['KUBECONFIG'] ?? '').split(delimiter).filter(Boolean);
  if (fromEnv.length > 0) return connectionFromFiles(fromEnv, context);
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return connectionFromFiles([home], context);
  return inClusterConnection();
}

function connectionFromFiles(paths: string[], context?: string): ClusterConnection {
  const settings = readKubeconfigFiles(paths, context);
  // A plugin is handed the first file's text: the files merged into one document would be needed otherwise.
  return new ClusterConnection(settings, settings.plugin ? readFileSync(paths.find((p) => existsSync(p))!, 'utf8') : undefined);
}

function isClientNodeKubeConfig(source: unknown): source is ClientNodeKubeConfig {
  return typeof (source as ClientNodeKubeConfig).exportConfig === 'function';
}

/** A connection from any of the ways a caller names a cluster. */
export function loadConnection(source: KubeConfigSource | ClusterConnection | ClientNodeKubeConfig): ClusterConnection {
  if (source instanceof ClusterConnection) return source;
  if (isClientNodeKubeConfig(source)) return connectionFromKubeconfig(source.exportConfig(), source.currentContext);
  if ('kubeconfigPath' in source) return connectionFromFiles([source.kubeconfigPath], source.context);
  if ('kubeconfig' in source) return connectionFromKubeconfig(source.kubeconfig, source.context);
  if ('inCluster' in source) return inClusterConnection();
  return defaultConnection();
}
