import { stringify } from 'yaml';

/** The CLI's only way to print: data to stdout, progress and errors to stderr. */
export interface Output {
  line(text: string): void;
  data(value: unknown, format: OutputFormat): void;
  /** One line `Error: text`; `detail` (a stack, for CAPSTAN_DEBUG) goes below it verbatim. */
  error(text: string, detail?: string): void;
  progress(text: string): Progress;
  readonly colour: boolean;
}

export type OutputFormat = 'json' | 'yaml' | 'text';

export interface Progress {
  update(text: string): void;
  done(text?: string): void;
  fail(text?: string): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function terminalOutput(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Output {
  const interactive = stderr.isTTY === true;
  return {
    colour: stdout.isTTY === true && !process.env['NO_COLOR'],
    line: (text) => stdout.write(`${text}\n`),
    data: (value, format) => stdout.write(format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value)),
    error: (text, detail) => stderr.write(`Error: ${text}\n${detail ? `${detail}\n` : ''}`),
    progress(text) {
      let current = text;
      let frame = 0;
      // A spinner only on a terminal; a log or a pipe gets one line per state change.
      const timer = interactive
        ? setInterval(() => stderr.write(`\r${FRAMES[frame++ % FRAMES.length]} ${current}\x1b[K`), 100)
        : undefined;
      if (!interactive) stderr.write(`${text}\n`);
      const finish = (mark: string, final?: string) => {
        if (timer) clearInterval(timer);
        stderr.write(interactive ? `\r${mark} ${final ?? current}\x1b[K\n` : `${mark} ${final ?? current}\n`);
      };
      return {
        update(next) {
          if (next === current) return;
          current = next;
          if (!interactive) stderr.write(`${next}\n`);
        },
        done: (final) => finish('✓', final),
        fail: (final) => finish('✗', final),
      };
    },
  };
}

/** An error the CLI reports in one line and turns into a non-zero exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
