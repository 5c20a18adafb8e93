// `capstan`: the clusterctl of Capstan.
import { CommanderError } from 'commander';
import { explainError } from './errors/explain-error.js';
import { failureContext, resetFailureContext } from './errors/failure-context.js';
import { buildProgram } from './program.js';
import { terminalOutput } from './output.js';

export async function run(argv: string[]): Promise<number> {
  const output = terminalOutput();
  const program = buildProgram(output).exitOverride();
  resetFailureContext();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const explained = explainError(error, failureContext());
    // The one line is for people; CAPSTAN_DEBUG=1 adds the stack a bug report needs.
    output.error(explained.message, process.env['CAPSTAN_DEBUG'] ? stackOf(error) : undefined);
    return explained.exitCode;
  }
}

function stackOf(error: unknown): string {
  const own = error instanceof Error ? (error.stack ?? error.message) : String(error);
  const cause = error instanceof Error && error.cause !== undefined ? `\nCaused by: ${stackOf(error.cause)}` : '';
  return own + cause;
}
