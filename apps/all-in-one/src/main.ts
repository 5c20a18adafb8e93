import 'reflect-metadata';
import { runServicesMain } from '@capstan/provider-kit';
import { ALL_IN_ONE, ALL_IN_ONE_HELP, allInOneCommandLine, startAllInOne } from './all-in-one.js';

const commandLine = allInOneCommandLine(process.argv.slice(2));
if (commandLine) {
  await runServicesMain(ALL_IN_ONE, ALL_IN_ONE_HELP, commandLine.rest, (options) => startAllInOne(commandLine.definitions, options));
}
