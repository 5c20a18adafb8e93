#!/usr/bin/env node
import { run } from '../dist/main.js';

// `capstan ... | head` closes the pipe early; that is not an error.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
process.exitCode = await run(process.argv);
