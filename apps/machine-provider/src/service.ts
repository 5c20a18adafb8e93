import {
  LABELS,
  RESOURCES,
  type Cluster,
  type Machine,
  type SimCluster,
  type SimMachine,
} from '@capstan/api';
import { BY_CLUSTER_NAME, clusterIndexValue, objectKey, OwnWrites, specOrMetadataChanged } from '@capstan/kube';
import { clusterChangesProvidersRead, clusterShardKey, type ServiceDefinition } from '@capstan/provider-kit';
import { referencedSimKey, SimRuntime, simMachineOptionsFromEnv, type SimMachineOptions } from '@capstan/sim';
import type { KubernetesObject } from '@kubernetes/client-node';
import { MachineLifecycleModule } from './events/machine-lifecycle.handler.js';
import { SIM_MACHINE_CONTROLLER, SimMachineReconciler } from './reconcilers/simmachine.reconciler.js';

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
      const machines = context.manager.informer<Machine>(RESOURCES.Machine);
      const clusters = context.manager.informer<Cluster>(RESOURCES.Cluster);
      const simClusters = context.manager.informer<SimCluster>(RESOURCES.SimCluster);
      const machinesOfCluster = (namespace: string | undefined, clusterName: string | undefined): string[] =>
        clusterName
          ? simMachines.byIndex(BY_CLUSTER_NAME, clusterIndexValue(namespace, clusterName)).map(objectKey)
          : [];
      const shards = context.manager.shards;
      const runtime = new SimRuntime({
        options,
        logger: context.logger,
        binaries: overrides.binaries,
        onClusterDown: (clusterKey) => {
          const [namespace, name] = clusterKey.split('/');
          for (const key of machinesOfCluster(namespace, name))
            context.controllers.enqueue(SIM_MACHINE_CONTROLLER, key);
        },
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
      const ownWrites = new OwnWrites();
      const reconciler = new SimMachineReconciler({
        context,
        options,
        runtime,
        simMachines,
        machines,
        clusters,
        simClusters,
        outbox: context.outbox,
        ownWrites,
      });
      context.addController<SimMachine>({
        name: SIM_MACHINE_CONTROLLER,
        for: simMachines,
        reconcile: (key, rc) => reconciler.reconcile(key, rc),
        // A state this controller wrote needs no second reconcile; status writes are its own (only spec, metadata
        // and deletion changes need one).
        predicate: (event) =>
          (event.type !== 'update' || !ownWrites.isOwn(event.object)) && specOrMetadataChanged(event),
        watches: [
          {
            // The Machine carries the bootstrap data secret name.
            for: RESOURCES.Machine,
            map: (obj: KubernetesObject) =>
              referencedSimKey(
                obj.metadata?.namespace,
                (obj as Machine).spec?.infrastructureRef,
                RESOURCES.SimMachine.kind,
              ),
            // Its spec and metadata: the core's status writes say nothing the SimMachine reads.
            predicate: specOrMetadataChanged,
          },
          {
            // The SimCluster's endpoint, once provisioned, lets the machines boot.
            for: RESOURCES.SimCluster,
            map: (obj: KubernetesObject) =>
              machinesOfCluster(obj.metadata?.namespace, obj.metadata?.labels?.[LABELS.clusterName]),
          },
          {
            // Pausing.
            for: RESOURCES.Cluster,
            map: (obj: KubernetesObject) => machinesOfCluster(obj.metadata?.namespace, obj.metadata?.name),
            predicate: clusterChangesProvidersRead,
          },
        ],
        maxConcurrentReconciles: context.options.concurrency,
        resyncPeriodMs: context.options.syncPeriodSeconds * 1000,
      });
      return () => runtime.shutdown();
    },
  };
}
