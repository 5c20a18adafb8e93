import { CommanderError } from 'commander';
import { useServiceBufferPool } from './buffer-pool.js';
import { parseServiceOptions, type ServiceOptions } from './service-options.js';
import { startService, type RunningService } from './start-service.js';
import { type ServiceDefinition } from './service-definition.js';

/** A service's `main`: parse the command line, start, and stop gracefully on SIGTERM/SIGINT. */
export async function runServiceMain(definition: ServiceDefinition, argv: string[] = process.argv.slice(2)): Promise<void> {
  await runServicesMain(definition.name, definition.helpText, argv, async (options) => [await startService(definition, options)]);
}

/**
 * The `main` of a process hosting services (one, or the all-in-one's five): parses the shared flags as `name`, starts
 * them with `start`, and stops them in reverse order on SIGTERM/SIGINT.
 */
export async function runServicesMain(
  name: string,
  helpText: string | undefined,
  argv: string[],
  start: (options: ServiceOptions) => Promise<RunningService[]>,
): Promise<void> {
  useServiceBufferPool();
  let options;
  try {
    options = parseServiceOptions(name, argv, process.env, helpText);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode !== 0) process.stderr.write(`${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
  let services: RunningService[];
  try {
    services = await start(options);
  } catch (error) {
    process.stderr.write(`capstan-${name}: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  const shutdown = async (signal: string) => {
    for (const service of [...services].reverse()) {
      service.context.logger.info({ signal }, 'shutting down');
      await service.stop();
    }
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
