import { bootstrapProviderService } from '@capstan/bootstrap-provider/service';
import { CLUSTER_PROVIDER, createClusterProviderService } from '@capstan/cluster-provider/service';
import { controlPlaneProviderService } from '@capstan/control-plane-provider/service';
import { coreCommandLine, createCoreService } from '@capstan/core/service';
import { createMachineProviderService, MACHINE_PROVIDER } from '@capstan/machine-provider/service';
import { SharedInformers } from '@capstan/kube';
import {
  startService,
  type RunningService,
  type ServiceDefinition,
  type ServiceOptions,
  type StartServiceOverrides,
} from '@capstan/provider-kit';
import { simClusterOptionsFromEnv, simCommandLine, simMachineOptionsFromEnv } from '@capstan/sim';

export const ALL_IN_ONE = 'all-in-one';

export const ALL_IN_ONE_HELP = [
  'All-in-one:',
  '  Runs the core, cluster-provider, machine-provider, bootstrap-provider and control-plane-provider in this one',
  '  process, each with its own controllers, event consumer and endpoints, and one cache of each kind for all five:',
  '  service i (in that order) serves /healthz, /readyz, /metrics and /admin on --http-port + i (every one on a free',
  '  port with 0). Each service keeps its own Lease, capstan-<service>, as when deployed alone. The core\'s flags and',
  '  the sim\'s --sim-* flags apply as to them.',
].join('\n');

/**
 * The all-in-one command line: the core's flags and the sim's flags taken off (as each service's own main does), the
 * five services in start order (the core first, as deploy/ and the local runs start them), and the rest of the flags
 * for the shared parser. Undefined after a bad flag (reported, exit code set).
 */
export function allInOneCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { definitions: ServiceDefinition[]; rest: string[] } | undefined {
  const core = coreCommandLine(argv, env);
  if (!core) return undefined;
  const simClusters = simCommandLine(CLUSTER_PROVIDER, core.rest, simClusterOptionsFromEnv);
  const simMachines = simCommandLine(MACHINE_PROVIDER, core.rest, simMachineOptionsFromEnv);
  if (!simClusters || !simMachines) return undefined;
  return {
    definitions: [
      createCoreService(core.options),
      createClusterProviderService(simClusters.options),
      createMachineProviderService(simMachines.options),
      bootstrapProviderService,
      controlPlaneProviderService,
    ],
    rest: simClusters.rest,
  };
}

/** What service `index` of the all-in-one runs with: its own Lease and its own endpoint port. */
export function serviceOptionsAt(options: ServiceOptions, name: string, index: number): ServiceOptions {
  return {
    ...options,
    leaderElectionId: `capstan-${name}`,
    httpPort: options.httpPort === 0 ? 0 : options.httpPort + index,
    adminPort: options.adminPort === 0 ? 0 : options.adminPort + index,
  };
}

/**
 * Starts the services one after another, sharing their informers (each kind and scope cached and watched once); a
 * failure stops those already started and is thrown.
 */
export async function startAllInOne(
  definitions: readonly ServiceDefinition[],
  options: ServiceOptions,
  overrides: StartServiceOverrides = {},
): Promise<RunningService[]> {
  const running: RunningService[] = [];
  const sharedInformers = new SharedInformers();
  try {
    for (const [index, definition] of definitions.entries()) {
      running.push(await startService(definition, serviceOptionsAt(options, definition.name, index), { ...overrides, sharedInformers }));
    }
    return running;
  } catch (error) {
    await stopAllInOne(running);
    throw error;
  }
}

/** Stops the services in reverse start order (the providers before the core, as a rollout would). */
export async function stopAllInOne(running: readonly RunningService[]): Promise<void> {
  for (const service of [...running].reverse()) await service.stop();
}
