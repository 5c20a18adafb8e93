import { runServiceMain } from '@capstan/provider-kit';
import { extractSimFlags, simMachineOptionsFromEnv } from '@capstan/sim';
import { createMachineProviderService } from './service.js';

// Sim flags (`--sim-etcd-url`, `--sim-state-dir`, ...) or CAPSTAN_SIM_* variables; the rest are the service's.
const { env, rest } = extractSimFlags(process.argv.slice(2));
await runServiceMain(createMachineProviderService(simMachineOptionsFromEnv(env)), rest);
