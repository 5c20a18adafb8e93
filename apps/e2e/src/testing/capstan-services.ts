import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueEventTopology, type EventTopology } from '@capstan/events';
import {
  defaultServiceOptions,
  startService,
  type RunningService,
  type ServiceDefinition,
} from '@capstan/provider-kit';
import { simMachineOptionsFromEnv } from '@capstan/sim';
import { testNatsUrl } from '@capstan/testing';
// End-to-end tests start every service in this process: they import the apps' service definitions by path,
// which no app may do (apps never import each other).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { bootstrapProviderService } from '../../../bootstrap-provider/src/bootstrap-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createClusterProviderService } from '../../../cluster-provider/src/service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { controlPlaneProviderService } from '../../../control-plane-provider/src/control-plane-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createCoreService } from '../../../core/src/core-service.js';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createMachineProviderService } from '../../../machine-provider/src/service.js';

export interface CapstanServices {
  topology: EventTopology;
  services: RunningService[];
  stop(): Promise<void>;
}

/**
 * core, cluster-provider, machine-provider, bootstrap-provider and control-plane-provider, each started as
 * its main would (own Manager, NATS consumer, HTTP endpoints) against the test API server and NATS, on a
 * subject root of their own and watching one namespace. Sim hosts keep their state in a fresh folder and
 * their workload clusters in the test etcd.
 */
export async function startCapstanServices(namespace: string, label: string): Promise<CapstanServices> {
  const topology = uniqueEventTopology(label);
  const stateDir = mkdtempSync(join(tmpdir(), 'capstan-e2e-sim-'));
  const definitions: ServiceDefinition[] = [
    createCoreService({ watchExternalProviders: false }),
    createClusterProviderService({ endpointHost: '127.0.0.1', portRange: { min: 20000, max: 29999 } }),
    createMachineProviderService({
      ...simMachineOptionsFromEnv({}),
      stateDir,
      etcdUrl: process.env['CAPSTAN_TEST_ETCD_URL'] || undefined,
      heartbeatSeconds: 1,
      nodeStatusSeconds: 2,
      provisioningJitter: 0,
    }),
    bootstrapProviderService,
    controlPlaneProviderService,
  ];
  const services: RunningService[] = [];
  const stop = async () => {
    for (const service of services.reverse()) await service.stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    for (const definition of definitions) {
      services.push(
        await startService(definition, {
          ...defaultServiceOptions(definition.name, {}),
          kubeconfig: process.env['CAPSTAN_TEST_KUBECONFIG'],
          natsUrl: testNatsUrl(),
          httpHost: '127.0.0.1',
          httpPort: 0,
          namespace,
          subjectRoot: topology.root,
          streamName: topology.stream,
          // Lost events are healed by resync; kept short so a test never waits long for one.
          syncPeriodSeconds: 30,
          logLevel: process.env['LOG_LEVEL'] ?? 'silent',
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { topology, services, stop };
}
