import 'reflect-metadata';
import { runServiceMain } from '@capstan/provider-kit';
import { coreCommandLine } from './core-command-line.js';
import { createCoreService } from './core-service.js';

const commandLine = coreCommandLine(process.argv.slice(2));
if (commandLine) await runServiceMain(createCoreService(commandLine.options), commandLine.rest);
