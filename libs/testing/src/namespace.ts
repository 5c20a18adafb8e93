import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** The admin kubeconfig of the test environment started for this run (see jest/global-setup.ts). */
export function testKubeConfig(): KubeConfig {
  const path = process.env['CAPSTAN_TEST_KUBECONFIG'];
  if (!path) throw new Error('CAPSTAN_TEST_KUBECONFIG is not set: run integration tests through `npm test`');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export function testNatsUrl(): string {
  const url = process.env['CAPSTAN_TEST_NATS_URL'];
  if (!url) throw new Error('CAPSTAN_TEST_NATS_URL is not set: run integration tests through `npm test`');
  return url;
}

export interface TestNamespace {
  name: string;
  kc: KubeConfig;
  /** Deletes the namespace (and so everything namespaced in it). */
  delete(): Promise<void>;
}

/** Each test file gets its own namespace, so files never see each other's objects. */
export async function createTestNamespace(prefix = 't'): Promise<TestNamespace> {
  const kc = testKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name, labels: { 'capstan.dev/test': 'true' } } } });
  return {
    name,
    kc,
    delete: async () => {
      await core.deleteNamespace({ name }).catch(() => undefined);
    },
  };
}
