// `capstan`: the clusterctl of Capstan.
import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { CliError, terminalOutput } from './output.js';

export async function run(argv: string[]): Promise<number> {
  const output = terminalOutput();
  const program = buildProgram(output).exitOverride();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      output.error(error.message);
      return error.exitCode;
    }
    output.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}
