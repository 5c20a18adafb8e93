import { collectDefaultMetrics, Registry } from 'prom-client';
import { KubeClient } from '@capstan/kube';
import { agentKubeConfig, HostRoot, loadAgentConfig, NodeAgent } from '@capstan/node-agent';
import { createLogger } from '@capstan/observability';
import { parseAgentOptions, type AgentOptions } from './agent-options.js';
import { startHealthServer } from './health-server.js';

let options: AgentOptions;
try {
  options = parseAgentOptions(process.argv.slice(2));
} catch (error) {
  const code = (error as { exitCode?: number }).exitCode;
  if (code === 0) process.exit(0);
  if (!(error as { code?: string }).code?.startsWith('commander.')) process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}

const logger = createLogger({ service: 'node-agent', level: options.logLevel });
const root = new HostRoot(options.hostRoot);
let agent: NodeAgent;
let client: KubeClient;
try {
  const config = loadAgentConfig(root, options.config);
  client = new KubeClient(agentKubeConfig(root, config), { fieldManager: 'capstan-node-agent' });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  agent = new NodeAgent({
    client,
    namespace: config.namespace,
    secretName: config.secretName,
    root,
    logger,
    registry,
    probePeriodMs: options.probePeriodMs,
  });
  let stopping = false;
  const health = await startHealthServer(options.healthPort, registry, () => !stopping);
  agent.start();
  logger.info({ secret: `${config.namespace}/${config.secretName}`, healthPort: health.port }, 'node agent started');
  const shutdown = (signal: string) => {
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void agent
      .stop()
      .then(() => client.close())
      .finally(() => health.close(() => process.exit(0)));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  process.stderr.write(`capstan-node-agent: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
