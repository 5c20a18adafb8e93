import { CommanderError } from 'commander';
import { parseServiceOptions } from './service-options.js';
import { startService } from './start-service.js';
import { type ServiceDefinition } from './service-definition.js';

/** A service's `main`: parse the command line, start, and stop gracefully on SIGTERM/SIGINT. */
export async function runServiceMain(definition: ServiceDefinition, argv: string[] = process.argv.slice(2)): Promise<void> {
  let options;
  try {
    options = parseServiceOptions(definition.name, argv, process.env, definition.helpText);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode !== 0) process.stderr.write(`${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
  let service;
  try {
    service = await startService(definition, options);
  } catch (error) {
    process.stderr.write(`capstan-${definition.name}: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  const shutdown = (signal: string) => {
    service.context.logger.info({ signal }, 'shutting down');
    void service.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
