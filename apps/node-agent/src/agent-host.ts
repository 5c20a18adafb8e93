import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { KubeClient } from '@capstan/kube';
import {
  agentKubeConfig,
  AgentConfigError,
  HostRoot,
  loadAgentConfig,
  NodeAgent,
  readAgentToken,
} from '@capstan/node-agent';

/** One agent of this process: its machine's root and config file (a machine path under that root). */
export interface AgentSpec {
  hostRoot: string;
  config: string;
  /** The agent's own records (a host path); default `/var/lib/capstan/agent` under the host root. */
  stateDir?: string;
  /** Instructions run in their own namespaces rooted at the host root (a sim machine). */
  confine?: boolean;
}

/** Where an agent keeps its records when nothing says: the machine's `/var/lib/capstan/agent`. */
export const defaultStateDir = (hostRoot: string) => join(hostRoot, '/var/lib/capstan/agent');

export interface RunningAgents {
  agents: { agent: NodeAgent; client: KubeClient; secret: string }[];
  stop(): Promise<void>;
}

/**
 * Starts the agents of this process: one on a real host; many in shared mode (`--agents-file`), each with its own
 * root, config and credentials, so the sim can host hundreds of machines' agents in one process for scale runs.
 */
export function startAgents(specs: AgentSpec[], logger: Logger, registry: Registry | undefined, probePeriodMs: number): RunningAgents {
  const agents = specs.map((spec) => {
    const root = new HostRoot(spec.hostRoot, { confined: spec.confine === true });
    const config = loadAgentConfig(root, spec.config);
    const client = new KubeClient(agentKubeConfig(root, config), { fieldManager: 'capstan-node-agent' });
    const agent = new NodeAgent({
      client,
      namespace: config.namespace,
      secretName: config.secretName,
      root,
      stateDir: spec.stateDir ?? defaultStateDir(spec.hostRoot),
      token: { file: config.tokenFile, read: () => readAgentToken(root, config) },
      logger,
      // One set of agent metrics per process: in shared mode the per-agent figures would collide.
      registry: specs.length === 1 ? registry : undefined,
      probePeriodMs,
    });
    return { agent, client, secret: `${config.namespace}/${config.secretName}` };
  });
  for (const { agent } of agents) agent.start();
  return {
    agents,
    stop: async () => {
      await Promise.all(agents.map(({ agent }) => agent.stop()));
      await Promise.all(agents.map(({ client }) => client.close()));
    },
  };
}

/** The `--agents-file`: a JSON list of `{ hostRoot, config }`. */
export function readAgentsFile(path: string): AgentSpec[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new AgentConfigError(path, 'must be a readable JSON list of { hostRoot, config }');
  }
  if (
    !Array.isArray(parsed) ||
    parsed.some(
      (s) =>
        typeof s?.hostRoot !== 'string' ||
        typeof s?.config !== 'string' ||
        (s.stateDir !== undefined && typeof s.stateDir !== 'string') ||
        (s.confine !== undefined && typeof s.confine !== 'boolean'),
    )
  ) {
    throw new AgentConfigError(path, 'must be a JSON list of { hostRoot, config }');
  }
  return parsed as AgentSpec[];
}
