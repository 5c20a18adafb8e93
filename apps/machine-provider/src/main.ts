import { runServiceMain } from '@capstan/provider-kit';
import { simCommandLine, simMachineOptionsFromEnv } from '@capstan/sim';
import { createMachineProviderService, MACHINE_PROVIDER } from './service.js';

// Sim settings come as `--sim-*` flags or CAPSTAN_SIM_* variables (docs/sim.md); the rest are the service's.
const commandLine = simCommandLine(MACHINE_PROVIDER, process.argv.slice(2), simMachineOptionsFromEnv);
if (commandLine) await runServiceMain(createMachineProviderService(commandLine.options), commandLine.rest);
