import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** A kubeconfig that cannot be used: says which file or entry and what is wrong, never a credential. */
export class KubeconfigError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'KubeconfigError';
  }
}

/** The current context's cluster, user and namespace, with file references read and `*-data` decoded. */
export interface KubeconfigSelection {
  context: string;
  server: string;
  caPem?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  clientCertificatePem?: string;
  clientKeyPem?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  /** Set when the user authenticates through an exec or auth-provider plugin (resolved by client-node). */
  plugin?: 'exec' | 'auth-provider';
  namespace?: string;
}

interface Named<T> {
  name?: string;
  cluster?: T;
  user?: T;
  context?: T;
}
type Entry = Record<string, unknown>;
interface KubeconfigDocument {
  clusters?: Named<Entry>[];
  users?: Named<Entry>[];
  contexts?: Named<Entry>[];
  'current-context'?: string;
}

const asString = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** Parses kubeconfig text (YAML or JSON); `baseDir` resolves relative file references, as kubectl does. */
export function parseKubeconfig(text: string, options: { context?: string; baseDir?: string; origin?: string } = {}): KubeconfigSelection {
  const origin = options.origin ?? 'the kubeconfig';
  return selectContext([parseDocument(text, origin)], options.context, origin, options.baseDir);
}

function parseDocument(text: string, origin: string): KubeconfigDocument {
  let document: unknown;
  try {
    document = parseYaml(text) ?? {};
  } catch {
    // Not the parser's error: its message quotes the offending text, which may be a credential.
    throw new KubeconfigError(`${origin} is not valid YAML`);
  }
  if (typeof document !== 'object') throw new KubeconfigError(`${origin} is not a mapping`);
  return document as KubeconfigDocument;
}

function selectContext(documents: KubeconfigDocument[], wanted: string | undefined, origin: string, baseDir?: string): KubeconfigSelection {
  // Merged as kubectl merges KUBECONFIG's files: the first file that names an entry wins.
  const find = (list: 'clusters' | 'users' | 'contexts', name: string | undefined) => {
    for (const doc of documents) {
      const entry = doc[list]?.find((e) => e?.name === name);
      if (entry) return entry;
    }
    return undefined;
  };
  const contextName = wanted || documents.map((d) => asString(d['current-context'])).find(Boolean);
  if (!contextName) throw new KubeconfigError(`${origin} names no current context`);
  const context = find('contexts', contextName)?.context;
  if (!context) throw new KubeconfigError(`${origin} has no context "${contextName}"`);
  const clusterName = asString(context['cluster']);
  const cluster = find('clusters', clusterName)?.cluster;
  if (!cluster) throw new KubeconfigError(`${origin}: context "${contextName}" names no known cluster`);
  const server = asString(cluster['server']);
  if (!server) throw new KubeconfigError(`${origin}: cluster "${clusterName}" has no server`);
  if (asString(cluster['proxy-url'])) throw new KubeconfigError(`${origin}: cluster "${clusterName}" uses proxy-url, which Capstan does not support`);
  const user = (find('users', asString(context['user']))?.user ?? {}) as Entry;

  const material = (dataKey: string, fileKey: string, entry: Entry) => {
    const data = asString(entry[dataKey]);
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    const file = asString(entry[fileKey]);
    if (!file) return undefined;
    const path = baseDir && !isAbsolute(file) ? resolve(baseDir, file) : file;
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new KubeconfigError(`${origin}: ${fileKey} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const authProvider = user['auth-provider'] as { name?: string; config?: Entry } | undefined;
  // client-node writes its in-cluster credentials as a "tokenFile" auth provider; it is a token file like any other.
  const providerTokenFile = authProvider?.name === 'tokenFile' ? asString(authProvider.config?.['tokenFile']) : undefined;
  const tokenFile = asString(user['tokenFile']) ?? providerTokenFile;
  return {
    context: contextName,
    server: server.replace(/\/+$/, ''),
    caPem: material('certificate-authority-data', 'certificate-authority', cluster),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true ? true : undefined,
    tlsServerName: asString(cluster['tls-server-name']),
    clientCertificatePem: material('client-certificate-data', 'client-certificate', user),
    clientKeyPem: material('client-key-data', 'client-key', user),
    token: asString(user['token']),
    tokenFile: tokenFile && baseDir && !isAbsolute(tokenFile) ? resolve(baseDir, tokenFile) : tokenFile,
    username: asString(user['username']),
    password: asString(user['password']),
    plugin: user['exec'] ? 'exec' : authProvider && !providerTokenFile ? 'auth-provider' : undefined,
    namespace: asString(context['namespace']),
  };
}

/** Reads kubeconfig files as kubectl does with KUBECONFIG (several paths, merged); missing files are skipped. */
export function readKubeconfigFiles(paths: readonly string[], context?: string): KubeconfigSelection {
  const documents: KubeconfigDocument[] = [];
  let baseDir: string | undefined;
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && paths.length > 1) continue;
      throw new KubeconfigError(`kubeconfig ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    documents.push(parseDocument(text, `kubeconfig ${path}`));
    baseDir ??= dirname(path);
  }
  if (documents.length === 0) throw new KubeconfigError(`none of the kubeconfig files exists: ${paths.join(', ')}`);
  return selectContext(documents, context, `kubeconfig ${paths.join(':')}`, baseDir);
}
