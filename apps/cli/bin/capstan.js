#!/usr/bin/env node
// The `capstan` launcher. It must load on any Node >= 18: the CLI itself (../dist, ESM) needs Node 24, and
// the machine's `node` is often older, so this file parses on old versions (no static import of the dist,
// nothing newer than ES2020) and hands over to the project's Node 24 from `.tools/` (scripts/node24.sh).
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REQUIRED_MAJOR = 24;
// Set for the re-executed child: a `.tools/` Node that is itself too old must not re-exec forever.
const REEXEC_MARK = 'CAPSTAN_LAUNCHER_REEXEC';

// npm links bin/ into node_modules/.bin; the real path finds the repository either way.
const self = realpathSync(fileURLToPath(import.meta.url));
const repoRoot = join(dirname(self), '..', '..', '..');
const major = Number(process.versions.node.split('.')[0]);

if (major < REQUIRED_MAJOR) {
  const node24 = join(repoRoot, '.tools', 'node24', 'node_modules', 'node', 'bin', 'node');
  if (process.env[REEXEC_MARK] || !existsSync(node24)) {
    process.stderr.write(
      `capstan: needs Node.js ${REQUIRED_MAJOR} (this is ${process.version}); run \`npm run setup\` in ${repoRoot} to install it into .tools/, then retry.\n`,
    );
    process.exit(1);
  }
  const child = spawn(node24, [self, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, [REEXEC_MARK]: '1' },
  });
  // Ctrl-C reaches the child too (same foreground process group), which stops in its own time; this
  // process only waits for it. A SIGTERM sent to this pid alone (a supervisor) is passed on.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('error', (error) => {
    process.stderr.write(`capstan: could not start ${node24}: ${error.message}; run \`npm run setup\`, then retry.\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
} else {
  // `capstan ... | head` closes the pipe early; that is not an error.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  let cli;
  try {
    cli = await import('../dist/main.js');
  } catch (error) {
    const notBuilt = error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes(join('cli', 'dist', 'main.js'));
    process.stderr.write(
      notBuilt
        ? `capstan: the CLI is not built (${join(repoRoot, 'apps', 'cli', 'dist')}); run \`npm run build\` in ${repoRoot}, then retry.\n`
        : `capstan: could not load the CLI: ${error && error.message ? error.message.split('\n')[0] : error}; run \`npm run build\`, then retry.\n`,
    );
    process.exit(1);
  }
  process.exitCode = await cli.run(process.argv);
}
