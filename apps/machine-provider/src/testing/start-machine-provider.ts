import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '@capstan/provider-kit';
import { testServiceOptions } from '@capstan/provider-kit/testing';
import { simMachineOptionsFromEnv, type SimMachineOptions } from '@capstan/sim';
import { createMachineProviderService, MACHINE_PROVIDER } from '../service.js';

/** Sim options for tests: a fresh state dir, fast heartbeats, the test run's etcd when it has one. */
export function testSimOptions(overrides: Partial<SimMachineOptions> = {}): SimMachineOptions {
  return {
    ...simMachineOptionsFromEnv({}),
    stateDir: mkdtempSync(join(tmpdir(), 'capstan-sim-')),
    etcdUrl: process.env['CAPSTAN_TEST_ETCD_URL'] || undefined,
    heartbeatSeconds: 1,
    nodeStatusSeconds: 2,
    provisioningJitter: 0,
    ...overrides,
  };
}

/** The machine-provider in this process against the test environment, watching one namespace. */
export function startMachineProvider(
  namespace: string,
  topology: { root: string; stream: string },
  options: SimMachineOptions,
): Promise<RunningService> {
  return startService(
    createMachineProviderService(options),
    testServiceOptions(MACHINE_PROVIDER, { namespace, topology }),
  );
}
