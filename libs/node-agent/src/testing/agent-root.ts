import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_AGENT_CONFIG_PATH } from '../agent/agent-config.js';

/**
 * For tests and benchmarks: a machine root holding the agent's config (mode `configMode`), CA and token where the
 * bootstrap data puts them on a real machine.
 */
export function agentMachineRoot(
  admin: KubeConfig,
  agent: { namespace: string; secretName: string; token: string },
  configMode = 0o600,
): string {
  const root = mkdtempSync(join(tmpdir(), 'capstan-agent-root-'));
  mkdirSync(join(root, 'etc/capstan/agent'), { recursive: true });
  const cluster = admin.getCurrentCluster()!;
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString() : '';
  writeFileSync(join(root, 'etc/capstan/agent/ca.crt'), ca, { mode: 0o644 });
  writeFileSync(join(root, 'etc/capstan/agent/token'), agent.token, { mode: 0o600 });
  const config = join(root, DEFAULT_AGENT_CONFIG_PATH);
  writeFileSync(
    config,
    [
      `server: ${cluster.server}`,
      'caFile: /etc/capstan/agent/ca.crt',
      'tokenFile: /etc/capstan/agent/token',
      `namespace: ${agent.namespace}`,
      `secretName: ${agent.secretName}`,
      '',
    ].join('\n'),
    { mode: configMode },
  );
  chmodSync(config, configMode);
  return root;
}
