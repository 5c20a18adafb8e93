import { startTestEnvironment, type TestEnvironment } from '../test-environment.js';

declare global {
  var __capstanTestEnvironment: TestEnvironment | undefined;
}

/** Starts the servers once per run; workers find them through the environment variables set here. */
export default async function globalSetup(): Promise<void> {
  const environment = await startTestEnvironment({
    log: (line) => process.stderr.write(`[capstan-test-env] ${line}\n`),
  });
  globalThis.__capstanTestEnvironment = environment;
  process.env['CAPSTAN_TEST_KUBECONFIG'] = environment.kubeconfigPath;
  process.env['CAPSTAN_TEST_NATS_URL'] = environment.natsUrl;
  if (environment.etcdUrl) process.env['CAPSTAN_TEST_ETCD_URL'] = environment.etcdUrl;
  if (environment.webhookClientCaPath) process.env['CAPSTAN_TEST_WEBHOOK_CLIENT_CA_FILE'] = environment.webhookClientCaPath;
}
