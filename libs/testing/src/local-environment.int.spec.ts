import { existsSync } from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { isAlive } from './processes.js';
import { startTestEnvironment } from './test-environment.js';

describe('startTestEnvironment with local processes', () => {
  it('starts etcd, kube-apiserver and nats-server, and stop() leaves no process and no temp dir', async () => {
    const environment = await startTestEnvironment({ ignoreExisting: true, noContainers: true });
    expect(environment.kind).toBe('local');
    expect(environment.processes.map((p) => p.name).sort()).toEqual(['etcd', 'kube-apiserver', 'nats-server']);
    const kc = new KubeConfig();
    kc.loadFromString(environment.kubeconfig);
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
    expect(existsSync(environment.kubeconfigPath)).toBe(true);

    await environment.stop();

    for (const { pid } of environment.processes) expect(isAlive(pid)).toBe(false);
    expect(existsSync(environment.kubeconfigPath)).toBe(false);
  });
});
