import { runServiceMain } from '@capstan/provider-kit';
import { extractSimFlags, simClusterOptionsFromEnv } from '@capstan/sim';
import { createClusterProviderService } from './service.js';

// Sim flags (`--sim-endpoint-host`, `--sim-port-range`) or CAPSTAN_SIM_* variables; the rest are the service's.
const { env, rest } = extractSimFlags(process.argv.slice(2));
await runServiceMain(createClusterProviderService(simClusterOptionsFromEnv(env)), rest);
