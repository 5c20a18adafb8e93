import { ClusterConnection } from '@capstan/kube';
import { parse as parseYaml } from 'yaml';
import { BeneathRootError, readBeneath, statBeneath } from '../apply/beneath-root.js';
import type { HostRoot } from '../apply/host-root.js';

/** Where the agent's config is on a machine (a machine path: under the host root on the sim). */
export const DEFAULT_AGENT_CONFIG_PATH = '/etc/capstan/agent/config.yaml';

/** The agent's config file: how to reach its plan Secret. Paths are machine paths. */
export interface AgentConfig {
  /** The management cluster's API server URL. */
  server: string;
  /** PEM CA bundle of the API server. */
  caFile: string;
  /** The agent's bound service account token. */
  tokenFile: string;
  namespace: string;
  secretName: string;
}

/** A config file the agent refuses: names the file and the rule, never a value. */
export class AgentConfigError extends Error {
  constructor(readonly path: string, readonly rule: string) {
    super(`${path}: ${rule}`);
    this.name = 'AgentConfigError';
  }
}

/** The largest config, token or CA bundle the agent reads (they are a few KiB; the tenant controls the files). */
const MAX_AGENT_FILE_BYTES = 256 * 1024;

const errorCode = (error: unknown) =>
  error instanceof BeneathRootError ? error.code : ((error as NodeJS.ErrnoException).code ?? 'error');

/**
 * A file only the agent's own user may read and own, read without following a symbolic link (a link in the machine
 * root could point at a host file on the sim): the config and the token. `what` names it in errors.
 */
function readPrivateFile(root: HostRoot, machinePath: string, what: 'config' | 'tokenFile'): Buffer {
  const file = root.resolve(machinePath, what);
  // The config file's errors name the file alone (`config.yaml: must have mode 0600`); the token's name its key.
  const subject = what === 'config' ? '' : `${what} `;
  let found: { mode: number; uid: number };
  try {
    found = statBeneath(root, machinePath);
  } catch (error) {
    throw new AgentConfigError(file, `${subject}cannot be read (${errorCode(error)})`);
  }
  if (found.mode !== 0o600) throw new AgentConfigError(file, `${subject}must have mode 0600 (has 0${found.mode.toString(8)})`);
  const uid = typeof process.getuid === 'function' ? process.getuid() : found.uid;
  if (found.uid !== uid) throw new AgentConfigError(file, `${subject}must be owned by the agent's user`);
  return readFile(root, machinePath, what);
}

function readFile(root: HostRoot, machinePath: string, what: string): Buffer {
  try {
    return readBeneath(root, machinePath, MAX_AGENT_FILE_BYTES);
  } catch (error) {
    throw new AgentConfigError(root.resolve(machinePath, what), `${what} cannot be read (${errorCode(error)})`);
  }
}

/**
 * Reads and checks the config: it holds the token's whereabouts, so anything but mode 0600 and the agent's own
 * user is refused, as for the token file.
 */
export function loadAgentConfig(root: HostRoot, machinePath: string): AgentConfig {
  const file = root.resolve(machinePath);
  const bytes = readPrivateFile(root, machinePath, 'config');
  let raw: unknown;
  try {
    raw = parseYaml(bytes.toString('utf8'));
  } catch {
    throw new AgentConfigError(file, 'is not valid YAML');
  }
  if (typeof raw !== 'object' || raw === null) throw new AgentConfigError(file, 'must be a mapping');
  const config = raw as Record<string, unknown>;
  for (const key of ['server', 'caFile', 'tokenFile', 'namespace', 'secretName'] as const) {
    if (typeof config[key] !== 'string' || config[key] === '') {
      throw new AgentConfigError(file, `${key} must be a non-empty string`);
    }
  }
  // The token goes only to an API server whose certificate the CA file vouches for.
  if (!/^https:\/\/[^/\s]+/.test(config['server'] as string)) {
    throw new AgentConfigError(file, 'server must be an https:// URL');
  }
  // The CA and token are read from the machine: a path climbing out of its root is refused (on the sim, the root is
  // the machine's directory on the management host).
  for (const key of ['caFile', 'tokenFile'] as const) {
    try {
      root.resolve(config[key] as string, key);
    } catch (error) {
      throw new AgentConfigError(file, (error as Error).message);
    }
  }
  return config as unknown as AgentConfig;
}

/** How long the agent uses the token it read before reading the file again (the renewer rewrites it). */
const TOKEN_REREAD_MS = 10_000;

/** The agent's token as the file holds it now (mode 0600, the agent's own, no symlink). */
export function readAgentToken(root: HostRoot, config: AgentConfig): string {
  return readPrivateFile(root, config.tokenFile, 'tokenFile').toString('utf8').trim();
}

/**
 * The agent's connection: the CA is read now, the token at start and again every few seconds, so a token the agent
 * renewed (token-renewer.ts) is used without a restart. A token file that became unreadable keeps the last token.
 */
export function agentKubeConfig(root: HostRoot, config: AgentConfig): ClusterConnection {
  let cached = { token: readAgentToken(root, config), readAt: Date.now() };
  const token = () => {
    if (Date.now() - cached.readAt >= TOKEN_REREAD_MS) {
      try {
        cached = { token: readAgentToken(root, config), readAt: Date.now() };
      } catch {
        cached = { ...cached, readAt: Date.now() };
      }
    }
    return cached.token;
  };
  return new ClusterConnection(
    {
      context: 'node-agent',
      server: config.server.replace(/\/+$/, ''),
      caPem: readFile(root, config.caFile, 'caFile').toString('utf8').trim(),
      namespace: config.namespace,
    },
    undefined,
    token,
  );
}
