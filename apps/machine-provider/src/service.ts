import { RESOURCES, type SimMachine } from '@capstan/api';
import { clusterShardKey, type ServiceDefinition } from '@capstan/provider-kit';
import { SimRuntime, simMachineOptionsFromEnv, type SimMachineOptions } from '@capstan/sim';
import { MachineLifecycleModule } from './events/machine-lifecycle.handler.js';
import { simMachineController } from './reconcilers/simmachine.controller.js';

export const MACHINE_PROVIDER = 'machine-provider';

export interface MachineProviderOverrides {
  /** kube-apiserver and etcd binaries (found like the test environment's when unset). */
  binaries?: { kubeApiserver: string; etcd: string };
}

/**
 * The infrastructure machine provider: SimMachine (and SimMachineTemplate, which needs no reconcile: the core
 * clones it). Runs simulated hosts in this process (ARCHITECTURE §9); stopping the service stops them, and
 * starting it again brings back what the objects say should run.
 */
export function createMachineProviderService(
  options: SimMachineOptions = simMachineOptionsFromEnv(),
  overrides: MachineProviderOverrides = {},
): ServiceDefinition {
  return {
    name: MACHINE_PROVIDER,
    consumes: 'lifecycle.machine.>',
    modules: [MachineLifecycleModule],
    setup(context) {
      const simMachines = context.manager.informer<SimMachine>(RESOURCES.SimMachine);
      const shards = context.manager.shards;
      const runtime = new SimRuntime({
        options,
        logger: context.logger,
        binaries: overrides.binaries,
        // Admitted, not merely owned by the view: mid hand-over the old owner still serves the cluster.
        sharding: shards ? { owns: (clusterKey) => shards.admits(clusterKey) } : undefined,
      });
      // Sharded: what this replica runs for a cluster that moved away is handed over before the new owner starts.
      shards?.addReleaseHook((stillOwned) =>
        runtime.releaseClusters(stillOwned, (machineKey) => {
          const machine = simMachines.get(machineKey);
          return machine ? clusterShardKey(machine, RESOURCES.SimMachine) : undefined;
        }),
      );
      runtime.start();
      simMachineController(options, runtime).register(context);
      return () => runtime.shutdown();
    },
  };
}
