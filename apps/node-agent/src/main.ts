import { collectDefaultMetrics, Registry } from 'prom-client';
import { createLogger } from '@capstan/observability';
import { parseAgentOptions, type AgentOptions } from './agent-options.js';
import { readAgentsFile, startAgents } from './agent-host.js';
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
try {
  const specs = options.agentsFile
    ? readAgentsFile(options.agentsFile)
    : [{ hostRoot: options.hostRoot, config: options.config, ...(options.stateDir && { stateDir: options.stateDir }), confine: options.confine }];
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const running = startAgents(specs, logger, registry, options.probePeriodMs);
  let stopping = false;
  const health = await startHealthServer(options.healthPort, registry, () => !stopping);
  logger.info({ agents: running.agents.map((a) => a.secret), healthPort: health.port }, 'node agent started');
  const shutdown = (signal: string) => {
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void running.stop().finally(() => health.close(() => process.exit(0)));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  process.stderr.write(`capstan-node-agent: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
