import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installCapstanDefinitions } from './capstan-definitions.js';
import {
  killAndRestartLocalService,
  startLocalServices,
  stopLocalServices,
  type LocalService,
  type LocalServiceName,
  type StartLocalServicesOptions,
} from './local-services.js';
import { createTestNamespace, testNatsUrl, type TestNamespace } from './namespace.js';
import { repoRoot } from './repo.js';

export interface CapstanUnderTest {
  namespace: TestNamespace;
  services: LocalService[];
  logDir: string;
  /** The machine-provider's sim state dir: each machine's filesystem root is `machines/<namespace>/<name>`. */
  simStateDir: string;
  /**
   * Stops the services and the workload API servers and node agents this run's sim state dir records, then
   * deletes the namespace, the sim state and the logs (kept when `keepLogs`).
   */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
  /** SIGKILLs one service (replica) mid-flight and starts it again (same namespace, stream and sim state dir). */
  killAndRestart(name: LocalServiceName, replica?: number): Promise<LocalService>;
}

/**
 * The whole product for end-to-end tests: the five services as real processes (the compiled mains, as
 * `capstan init --local` runs them) against the test environment, confined to one new namespace and their
 * own event stream, so test files never see each other's clusters or events. The sim's workload API
 * servers use the test environment's etcd.
 */
export async function startCapstan(
  prefix = 'e2e',
  options: Pick<
    StartLocalServicesOptions,
    'syncPeriodSeconds' | 'env' | 'replicas' | 'leaseTimings' | 'conversionWebhook' | 'allInOne' | 'dashboard'
  > = {},
): Promise<CapstanUnderTest> {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot(), stdio: 'ignore' });
  const namespace = await createTestNamespace(prefix);
  await installCapstanDefinitions(namespace.kc);
  const id = randomBytes(3).toString('hex');
  const logDir = mkdtempSync(join(tmpdir(), `capstan-${prefix}-logs-`));
  // The sim hosts of this run keep their state apart from any other run's (a caller's own dir is kept).
  const givenSimStateDir = options.env?.['CAPSTAN_SIM_STATE_DIR'];
  const simStateDir = givenSimStateDir ?? mkdtempSync(join(tmpdir(), `capstan-${prefix}-sim-`));
  const etcdUrl = process.env['CAPSTAN_TEST_ETCD_URL'];
  const serviceOptions: StartLocalServicesOptions = {
    kubeconfigPath: process.env['CAPSTAN_TEST_KUBECONFIG']!,
    natsUrl: testNatsUrl(),
    logDir,
    simStateDir,
    env: { ...(etcdUrl ? { CAPSTAN_SIM_ETCD_URL: etcdUrl } : {}), ...options.env },
    namespace: namespace.name,
    subjectRoot: `${prefix}${id}`,
    streamName: `${prefix.toUpperCase()}_${id.toUpperCase()}`,
    syncPeriodSeconds: options.syncPeriodSeconds ?? 30,
    replicas: options.replicas,
    leaseTimings: options.leaseTimings,
    conversionWebhook: options.conversionWebhook,
    webhookClientCaFile: process.env['CAPSTAN_TEST_WEBHOOK_CLIENT_CA_FILE'] || undefined,
    allInOne: options.allInOne,
    dashboard: options.dashboard,
  };
  const services = await startLocalServices(serviceOptions);
  return {
    namespace,
    services,
    logDir,
    simStateDir,
    killAndRestart: (name, replica) => killAndRestartLocalService(services, name, serviceOptions, replica),
    stop: async ({ keepLogs } = {}) => {
      await stopLocalServices(services);
      await namespace.delete();
      if (givenSimStateDir === undefined) rmSync(simStateDir, { recursive: true, force: true });
      if (!keepLogs) rmSync(logDir, { recursive: true, force: true });
    },
  };
}
