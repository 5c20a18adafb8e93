import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containersUsable, TEST_ENVIRONMENT_IMAGES } from './docker-engine.js';
import { startLocalEnvironment } from './local-environment.js';

export type TestEnvironmentKind = 'existing' | 'containers' | 'local';

export interface TestEnvironment {
  kind: TestEnvironmentKind;
  kubeconfigPath: string;
  /** The kubeconfig document itself (admin of the management API server). */
  kubeconfig: string;
  natsUrl: string;
  /** Set for the local kind: the workload clusters' etcd (never the management cluster's), for the sim's API servers. */
  etcdUrl?: string;
  /** Set for the local kind: the CA of the client certificate the API server presents to admission webhooks. */
  webhookClientCaPath?: string;
  processes: { name: string; pid: number }[];
  stop(): Promise<void>;
}

export interface StartTestEnvironmentOptions {
  log?: (line: string) => void;
  /** Skip the first strategy (existing endpoints), e.g. to test the local one while env vars are set. */
  ignoreExisting?: boolean;
  /** Skip testcontainers even where a Docker engine answers. */
  noContainers?: boolean;
}

/**
 * The management cluster and event bus for tests and the demo, chosen in order: endpoints given in
 * CAPSTAN_TEST_KUBECONFIG / CAPSTAN_TEST_NATS_URL; testcontainers where a Docker engine answers and already holds
 * the images (never pulled); local etcd + kube-apiserver + nats-server processes.
 */
export async function startTestEnvironment(options: StartTestEnvironmentOptions = {}): Promise<TestEnvironment> {
  const kubeconfigPath = process.env['CAPSTAN_TEST_KUBECONFIG'];
  const natsUrl = process.env['CAPSTAN_TEST_NATS_URL'];
  if (!options.ignoreExisting && kubeconfigPath && natsUrl) {
    return {
      kind: 'existing',
      kubeconfigPath,
      kubeconfig: readFileSync(kubeconfigPath, 'utf8'),
      natsUrl,
      etcdUrl: process.env['CAPSTAN_TEST_ETCD_URL'] || undefined,
      webhookClientCaPath: process.env['CAPSTAN_TEST_WEBHOOK_CLIENT_CA_FILE'] || undefined,
      processes: [],
      stop: async () => undefined,
    };
  }
  if (!options.noContainers) {
    const containers = await containersUsable();
    if (containers.usable) return startContainers();
    if (containers.reason) options.log?.(containers.reason);
  }
  const local = await startLocalEnvironment({ log: options.log });
  return {
    kind: 'local',
    kubeconfigPath: local.kubeconfigPath,
    kubeconfig: local.kubeconfig,
    natsUrl: local.natsUrl,
    etcdUrl: local.etcdUrl,
    webhookClientCaPath: local.webhookClientCaPath,
    processes: local.processes,
    stop: local.stop,
  };
}

async function startContainers(): Promise<TestEnvironment> {
  // Loaded only where a Docker engine exists: the packages are optional dependencies.
  const [{ K3sContainer }, { NatsContainer }] = await Promise.all([
    import('@testcontainers/k3s'),
    import('@testcontainers/nats'),
  ]);
  const [k3s, nats] = await Promise.all([
    new K3sContainer(TEST_ENVIRONMENT_IMAGES[0]).start(),
    new NatsContainer(TEST_ENVIRONMENT_IMAGES[1]).withJetStream().start(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-containers-'));
  const kubeconfig = k3s.getKubeConfig();
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  return {
    kind: 'containers',
    kubeconfigPath,
    kubeconfig,
    natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
    processes: [],
    stop: async () => {
      await Promise.all([k3s.stop(), nats.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
