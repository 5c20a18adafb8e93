import { runServiceMain } from '@capstan/provider-kit';
import { simClusterOptionsFromEnv, simCommandLine } from '@capstan/sim';
import { CLUSTER_PROVIDER, createClusterProviderService } from './service.js';

// Sim settings come as `--sim-*` flags or CAPSTAN_SIM_* variables (docs/sim.md); the rest are the service's.
const commandLine = simCommandLine(CLUSTER_PROVIDER, process.argv.slice(2), simClusterOptionsFromEnv);
if (commandLine) await runServiceMain(createClusterProviderService(commandLine.options), commandLine.rest);
