import { isNodeAgentPath, NODE_AGENT_START_LINE } from './node-agent-files.js';
import type { ApiEndpoint, KeyPairPem } from '@capstan/pki';
import { isMap, parseDocument, type YAMLError } from 'yaml';
import { CLOUD_CONFIG_HEADER } from './cloud-config.js';
import { BootstrapDataError } from './errors.js';
import { FileDecodingBudget } from './file-content.js';
import type { K3sRole } from './k3s-config-spec.js';
import { K3S_CONFIG_KEYS, PROVIDER_ID_KUBELET_ARG } from './k3s-config.js';
import { parseNodeLabel, parseNodeTaint, type NodeTaint } from './node-metadata.js';
import { K3S_CONFIG_PATH } from './paths.js';
import { FAIL_FAST_LINE, DOWNLOAD_INSTALL_SCRIPT_LINE, SENTINEL_LINE, parseInstallLine } from './runcmd.js';
import {
  isServerTlsPath,
  K3S_CA_FILES,
  K3S_CA_NAMES,
  K3S_SERVICE_ACCOUNT_KEY_PATH,
  type K3sServerTls,
} from './server-tls-files.js';

/** What a host learns from its bootstrap data: how to run K3s and which node it registers. */
export interface ParsedK3sBootstrap {
  role: K3sRole;
  version: string;
  airGapped: boolean;
  installScriptPath: string;
  token: string;
  /** `server` of joining servers and agents; the init server has none (its endpoint is the cluster's). */
  serverUrl?: string;
  endpoint?: ApiEndpoint;
  providerID?: string;
  nodeName?: string;
  nodeLabels: Record<string, string>;
  nodeTaints: NodeTaint[];
  /** kubelet args other than provider-id. */
  kubeletArgs: string[];
  kubeProxyArgs: string[];
  tlsSANs: string[];
  disableComponents: string[];
  clusterCIDR?: string;
  serviceCIDR?: string;
  clusterDNS?: string;
  clusterDomain?: string;
  kubeAPIServerArgs: string[];
  kubeControllerManagerArgs: string[];
  kubeSchedulerArgs: string[];
  /** `secrets-encryption: true`: Secrets encrypted at rest. */
  secretsEncryption: boolean;
  /** The server TLS files present in the document (complete for documents this provider rendered for servers). */
  serverTls: Partial<K3sServerTls>;
  /** Files other than the K3s config and the server TLS files, decoded. */
  userFiles: ParsedFile[];
  preK3sCommands: string[];
  postK3sCommands: string[];
  /** The node agent's files (config, CA, token, unit), when the data installs one. */
  nodeAgentFiles?: ParsedFile[];
  /** Set when the data starts the node agent after K3s. */
  startsNodeAgent?: true;
}

export interface ParsedFile {
  path: string;
  owner?: string;
  permissions?: string;
  content: Buffer;
}

const fail = (reason: ConstructorParameters<typeof BootstrapDataError>[1], field: string, what: string) =>
  new BootstrapDataError(`bootstrap data: ${field} ${what}`, reason, field);

/** Line of a YAML error from its offset; the error's own message quotes the source, which may hold the token. */
function yamlFailure(error: YAMLError, source: string, field: string): BootstrapDataError {
  const line = source.slice(0, error.pos[0]).split('\n').length;
  return fail('InvalidYaml', field, `is not valid YAML (${error.code} at line ${line})`);
}

function parseYaml(source: string, field: string): unknown {
  const doc = parseDocument(source, { version: '1.1', prettyErrors: false, uniqueKeys: true });
  const [error] = doc.errors;
  if (error) throw yamlFailure(error, source, field);
  if (doc.contents === null) return {};
  if (!isMap(doc.contents)) throw fail('InvalidStructure', field, 'is not a YAML mapping');
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch {
    throw fail('InvalidYaml', field, 'cannot be resolved (aliases)');
  }
}

function stripHeader(document: string): string {
  const lines = document.split('\n');
  // cluster-api-k3s and CAPRKE2 put a jinja template marker before the cloud-config header.
  const headerIndex = lines[0]?.trim() === '## template: jinja' ? 1 : 0;
  if (lines[headerIndex]?.trim() !== CLOUD_CONFIG_HEADER) {
    throw fail('NotCloudConfig', 'header', `is missing: the first line must be ${CLOUD_CONFIG_HEADER}`);
  }
  return lines.slice(headerIndex + 1).join('\n');
}

function readFiles(writeFiles: unknown): ParsedFile[] {
  if (writeFiles === undefined) return [];
  if (!Array.isArray(writeFiles)) throw fail('InvalidStructure', 'write_files', 'is not a list');
  const budget = new FileDecodingBudget();
  return writeFiles.map((entry: unknown, index) => {
    const field = `write_files[${index}]`;
    if (typeof entry !== 'object' || entry === null)
      throw fail('InvalidStructure', field, 'is not a mapping');
    const { path, content = '', encoding, owner, permissions } = entry as Record<string, unknown>;
    if (typeof path !== 'string' || path === '') throw fail('MissingField', `${field}.path`, 'is missing');
    // Refused, not skipped: bootstrap data a cluster owner wrote himself never met the bootstrap provider's rules.
    if (!path.startsWith('/') || path.split('/').includes('..') || path.includes('\0'))
      throw fail('InvalidField', `${field}.path`, "must be an absolute path without '..' segments");
    if (typeof content !== 'string') throw fail('InvalidField', `${field}.content`, 'is not text');
    const decoded = budget.decode(content, encoding, `${field}.content`);
    return {
      path,
      ...(typeof owner === 'string' && { owner }),
      ...(typeof permissions === 'string' && { permissions }),
      content: decoded,
    };
  });
}

function stringList(config: Record<string, unknown>, key: string): string[] {
  const value = config[key];
  const field = `${K3S_CONFIG_PATH}:${key}`;
  if (value === undefined || value === null) return [];
  // K3s takes a single string as well as a list for repeatable flags.
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw fail('InvalidField', field, 'is not a string or a list of strings');
}

function optionalString(config: Record<string, unknown>, key: string): string | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw fail('InvalidField', `${K3S_CONFIG_PATH}:${key}`, 'is not a non-empty string');
  }
  return value;
}

function endpointOf(serverUrl: string): ApiEndpoint {
  const field = `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.server}`;
  let url: URL;
  try {
    url = new URL(serverUrl);
  } catch {
    throw fail('InvalidField', field, 'is not a URL');
  }
  if (url.protocol !== 'https:') throw fail('InvalidField', field, 'is not an https URL');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port === '' ? 443 : Number(url.port) };
}

function readServerTls(files: ParsedFile[]): Partial<K3sServerTls> {
  const byPath = new Map(files.map((file) => [file.path, file.content.toString('utf8')]));
  const tls: Partial<K3sServerTls> = {};
  for (const name of K3S_CA_NAMES) {
    const { stem } = K3S_CA_FILES[name];
    const certPem = byPath.get(`${stem}.crt`);
    const keyPem = byPath.get(`${stem}.key`);
    if (certPem === undefined && keyPem === undefined) continue;
    if (certPem === undefined || keyPem === undefined) {
      const missing = certPem === undefined ? `${stem}.crt` : `${stem}.key`;
      throw fail('MissingCertificate', missing, 'is missing while its pair is present');
    }
    tls[name] = { certPem, keyPem } satisfies KeyPairPem;
  }
  const serviceAccountKeyPem = byPath.get(K3S_SERVICE_ACCOUNT_KEY_PATH);
  if (serviceAccountKeyPem !== undefined) tls.serviceAccountKeyPem = serviceAccountKeyPem;
  return tls;
}

function splitCommands(runcmd: unknown) {
  if (!Array.isArray(runcmd)) throw fail('MissingField', 'runcmd', 'is missing or not a list');
  const lines = runcmd.map((entry: unknown, index) => {
    if (typeof entry !== 'string')
      throw fail('InvalidField', `runcmd[${index}]`, 'is not a shell command string');
    return entry;
  });
  const installIndexes = lines.flatMap((line, index) => (parseInstallLine(line) ? [index] : []));
  if (installIndexes.length === 0) {
    throw fail(
      'MissingInstallCommand',
      'runcmd',
      'has no K3s install command (INSTALL_K3S_EXEC=server|agent)',
    );
  }
  if (installIndexes.length > 1)
    throw fail('InvalidField', 'runcmd', 'has more than one K3s install command');
  const installIndex = installIndexes[0]!;
  const install = parseInstallLine(lines[installIndex]!)!;
  const start = lines[0] === FAIL_FAST_LINE ? 1 : 0;
  const preEnd = lines[installIndex - 1] === DOWNLOAD_INSTALL_SCRIPT_LINE ? installIndex - 1 : installIndex;
  const postEnd = lines[lines.length - 1] === SENTINEL_LINE ? lines.length - 1 : lines.length;
  const startsNodeAgent = lines[installIndex + 1] === NODE_AGENT_START_LINE;
  return {
    install,
    preK3sCommands: lines.slice(start, preEnd),
    postK3sCommands: lines.slice(installIndex + (startsNodeAgent ? 2 : 1), postEnd),
    startsNodeAgent,
  };
}

/** Every `write_files` entry of a cloud-config document, decoded: what a host writes before running commands. */
export function readCloudConfigFiles(document: string): ParsedFile[] {
  const body = parseYaml(stripHeader(document), 'cloud-config') as Record<string, unknown>;
  return readFiles(body['write_files']);
}

/**
 * Reads bootstrap data rendered by `renderK3sCloudConfig` back, the way a host would: the K3s config,
 * the server TLS files, the install command. Anything it cannot understand raises a BootstrapDataError
 * whose `field` names it; no error carries content of the document (the token in particular).
 */
export function parseK3sCloudConfig(document: string): ParsedK3sBootstrap {
  const body = parseYaml(stripHeader(document), 'cloud-config') as Record<string, unknown>;
  const files = readFiles(body['write_files']);
  const configFile = files.find((file) => file.path === K3S_CONFIG_PATH);
  if (!configFile) throw fail('MissingK3sConfig', K3S_CONFIG_PATH, 'is not among write_files');
  const configText = configFile.content.toString('utf8');
  const config = parseYaml(configText, K3S_CONFIG_PATH) as Record<string, unknown>;

  const token = optionalString(config, K3S_CONFIG_KEYS.token);
  if (token === undefined)
    throw fail('MissingField', `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.token}`, 'is missing');
  const serverUrl = optionalString(config, K3S_CONFIG_KEYS.server);
  const clusterInit = config[K3S_CONFIG_KEYS.clusterInit];
  if (clusterInit !== undefined && typeof clusterInit !== 'boolean') {
    throw fail('InvalidField', `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.clusterInit}`, 'is not a boolean');
  }
  const { install, preK3sCommands, postK3sCommands, startsNodeAgent } = splitCommands(body['runcmd']);
  const role = roleOf(install.exec, serverUrl, clusterInit === true);

  const nodeLabels: Record<string, string> = {};
  stringList(config, K3S_CONFIG_KEYS.nodeLabel).forEach((entry, index) => {
    const label = parseNodeLabel(entry);
    if (!label)
      throw fail(
        'InvalidField',
        `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.nodeLabel}[${index}]`,
        'is not key=value',
      );
    nodeLabels[label.key] = label.value;
  });
  const nodeTaints = stringList(config, K3S_CONFIG_KEYS.nodeTaint).map((entry, index) => {
    const taint = parseNodeTaint(entry);
    if (!taint) {
      throw fail(
        'InvalidField',
        `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.nodeTaint}[${index}]`,
        'is not key[=value]:Effect',
      );
    }
    return taint;
  });
  const providerPrefix = `${PROVIDER_ID_KUBELET_ARG}=`;
  const allKubeletArgs = stringList(config, K3S_CONFIG_KEYS.kubeletArg).map((arg) => arg.replace(/^--/, ''));
  const providerIDs = allKubeletArgs.filter((arg) => arg.startsWith(providerPrefix));
  if (providerIDs.length > 1) {
    throw fail(
      'InvalidField',
      `${K3S_CONFIG_PATH}:${K3S_CONFIG_KEYS.kubeletArg}`,
      'sets provider-id more than once',
    );
  }
  const providerID = providerIDs[0]?.slice(providerPrefix.length);
  const nodeName = optionalString(config, K3S_CONFIG_KEYS.nodeName);
  const clusterCIDR = optionalString(config, K3S_CONFIG_KEYS.clusterCidr);
  const serviceCIDR = optionalString(config, K3S_CONFIG_KEYS.serviceCidr);
  const clusterDNS = optionalString(config, K3S_CONFIG_KEYS.clusterDns);
  const clusterDomain = optionalString(config, K3S_CONFIG_KEYS.clusterDomain);

  return {
    role,
    version: install.version,
    airGapped: install.airGapped,
    installScriptPath: install.scriptPath,
    token,
    ...(serverUrl !== undefined && { serverUrl, endpoint: endpointOf(serverUrl) }),
    ...(providerID !== undefined && providerID !== '' && { providerID }),
    ...(nodeName !== undefined && { nodeName }),
    nodeLabels,
    nodeTaints,
    kubeletArgs: allKubeletArgs.filter((arg) => !arg.startsWith(providerPrefix)),
    kubeProxyArgs: stringList(config, K3S_CONFIG_KEYS.kubeProxyArg),
    tlsSANs: stringList(config, K3S_CONFIG_KEYS.tlsSan),
    disableComponents: stringList(config, K3S_CONFIG_KEYS.disable),
    ...(clusterCIDR !== undefined && { clusterCIDR }),
    ...(serviceCIDR !== undefined && { serviceCIDR }),
    ...(clusterDNS !== undefined && { clusterDNS }),
    ...(clusterDomain !== undefined && { clusterDomain }),
    kubeAPIServerArgs: stringList(config, K3S_CONFIG_KEYS.kubeApiserverArg),
    kubeControllerManagerArgs: stringList(config, K3S_CONFIG_KEYS.kubeControllerManagerArg),
    kubeSchedulerArgs: stringList(config, K3S_CONFIG_KEYS.kubeSchedulerArg),
    secretsEncryption: config[K3S_CONFIG_KEYS.secretsEncryption] === true,
    serverTls: readServerTls(files),
    userFiles: files.filter(
      (file) => file.path !== K3S_CONFIG_PATH && !isServerTlsPath(file.path) && !isNodeAgentPath(file.path),
    ),
    preK3sCommands,
    postK3sCommands,
    ...(files.some((file) => isNodeAgentPath(file.path)) && {
      nodeAgentFiles: files.filter((file) => isNodeAgentPath(file.path)),
    }),
    ...(startsNodeAgent && { startsNodeAgent: true as const }),
  };
}

function roleOf(exec: 'server' | 'agent', serverUrl: string | undefined, clusterInit: boolean): K3sRole {
  const field = K3S_CONFIG_PATH;
  if (exec === 'agent') {
    if (serverUrl === undefined) throw fail('InconsistentRole', field, 'has no server for an agent to join');
    if (clusterInit) throw fail('InconsistentRole', field, 'sets cluster-init for an agent');
    return 'agent';
  }
  if (serverUrl !== undefined && clusterInit) {
    throw fail(
      'InconsistentRole',
      field,
      'sets both cluster-init and server; a server either initializes or joins',
    );
  }
  return serverUrl === undefined ? 'init-server' : 'join-server';
}

/**
 * The complete server TLS material of a server's bootstrap data, or a BootstrapDataError naming the first
 * missing file: what a host that serves the cluster API (the sim's servers) needs.
 */
export function requireServerTls(parsed: ParsedK3sBootstrap): K3sServerTls {
  const tls = parsed.serverTls;
  for (const name of K3S_CA_NAMES) {
    if (!tls[name]) throw fail('MissingCertificate', `${K3S_CA_FILES[name].stem}.crt`, 'is missing');
  }
  if (tls.serviceAccountKeyPem === undefined)
    throw fail('MissingCertificate', K3S_SERVICE_ACCOUNT_KEY_PATH, 'is missing');
  return tls as K3sServerTls;
}
