import { readFileSync, statSync } from 'node:fs';
import { ClusterConnection } from '@capstan/kube';
import { parse as parseYaml } from 'yaml';
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

/** Reads and checks the config: it holds the token's whereabouts, so anything but mode 0600 is refused. */
export function loadAgentConfig(root: HostRoot, machinePath: string): AgentConfig {
  const file = root.resolve(machinePath);
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch (error) {
    throw new AgentConfigError(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (mode !== 0o600) throw new AgentConfigError(file, `must have mode 0600 (has 0${mode.toString(8)})`);
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
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

/** The agent's connection with its token; the CA and token are read from the machine now (the token file may rotate). */
export function agentKubeConfig(root: HostRoot, config: AgentConfig): ClusterConnection {
  const read = (path: string, what: string) => {
    const file = root.resolve(path, what);
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new AgentConfigError(file, `${what} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  return new ClusterConnection({
    context: 'node-agent',
    server: config.server.replace(/\/+$/, ''),
    caPem: read(config.caFile, 'caFile'),
    token: read(config.tokenFile, 'tokenFile'),
    namespace: config.namespace,
  });
}
