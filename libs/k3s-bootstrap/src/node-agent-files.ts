import { stringify } from 'yaml';
import {
  NODE_AGENT_BINARY_PATH,
  NODE_AGENT_CA_PATH,
  NODE_AGENT_CONFIG_PATH,
  NODE_AGENT_TOKEN_PATH,
  NODE_AGENT_UNIT_PATH,
} from './paths.js';

/** What a machine's node agent needs to reach its plan Secret; the token is never logged or put in an error. */
export interface NodeAgentBootstrap {
  /** The management cluster's API server, as the machine reaches it. */
  server: string;
  caPem: string;
  token: string;
  namespace: string;
  secretName: string;
}

export interface NodeAgentFile {
  path: string;
  permissions: string;
  content: string;
}

/** Started after K3s is installed: the agent then manages the machine through plans. */
export const NODE_AGENT_START_LINE = 'systemctl daemon-reload && systemctl enable --now capstan-node-agent.service';

const UNIT = `[Unit]
Description=Capstan node agent: applies this machine's plans from the management cluster
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
ExecStart=${NODE_AGENT_BINARY_PATH} --config ${NODE_AGENT_CONFIG_PATH}
Restart=always
RestartSec=5s

[Install]
WantedBy=multi-user.target
`;

/** The agent's files: the config (0600, as the agent demands), the CA, the token (0600) and the systemd unit. */
export function nodeAgentFiles(agent: NodeAgentBootstrap): NodeAgentFile[] {
  const config = {
    server: agent.server,
    caFile: NODE_AGENT_CA_PATH,
    tokenFile: NODE_AGENT_TOKEN_PATH,
    namespace: agent.namespace,
    secretName: agent.secretName,
  };
  return [
    { path: NODE_AGENT_CONFIG_PATH, permissions: '0600', content: stringify(config) },
    { path: NODE_AGENT_CA_PATH, permissions: '0644', content: agent.caPem },
    { path: NODE_AGENT_TOKEN_PATH, permissions: '0600', content: agent.token },
    { path: NODE_AGENT_UNIT_PATH, permissions: '0644', content: UNIT },
  ];
}

const AGENT_PATHS = new Set([NODE_AGENT_CONFIG_PATH, NODE_AGENT_CA_PATH, NODE_AGENT_TOKEN_PATH, NODE_AGENT_UNIT_PATH]);

export function isNodeAgentPath(path: string): boolean {
  return AGENT_PATHS.has(path);
}
