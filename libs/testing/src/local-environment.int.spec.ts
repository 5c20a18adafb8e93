import { existsSync, readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually } from './eventually.js';
import { isAlive } from './processes.js';
import { startTestEnvironment } from './test-environment.js';

describe('startTestEnvironment with local processes', () => {
  it('starts etcd, kube-apiserver, kube-controller-manager and nats-server, and stop() leaves no process and no temp dir', async () => {
    const environment = await startTestEnvironment({ ignoreExisting: true, noContainers: true });
    try {
      expect(environment.kind).toBe('local');
      expect(environment.processes.map((p) => p.name).sort()).toEqual([
        'etcd',
        'kube-apiserver',
        'kube-controller-manager',
        'nats-server',
        'workload-etcd',
      ]);
      // Workload clusters (the sim's API servers) never share an etcd with the management cluster (issue 32).
      const argsOf = (name: string) => {
        const pid = environment.processes.find((p) => p.name === name)!.pid;
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      };
      const managementEtcd = argsOf('kube-apiserver').find((a) => a.startsWith('--etcd-servers='))!.split('=')[1];
      expect(environment.etcdUrl).toBeDefined();
      expect(environment.etcdUrl).not.toBe(managementEtcd);
      expect(argsOf('workload-etcd')).toContain(`--listen-client-urls=${environment.etcdUrl}`);
      const kc = new KubeConfig();
      kc.loadFromString(environment.kubeconfig);
      const core = kc.makeApiClient(CoreV1Api);
      const namespaces = await core.listNamespace();
      expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
      expect(existsSync(environment.kubeconfigPath)).toBe(true);

      // The garbage collector runs: a dependent goes with its owner, as in a real cluster.
      const owner = await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'gc-owner' } },
      });
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: {
            name: 'gc-dependent',
            ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.metadata!.uid! }],
          },
        },
      });
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'gc-owner' });
      await eventually(
        () =>
          core.readNamespacedConfigMap({ namespace: 'default', name: 'gc-dependent' }).then(
            () => false,
            (error: { code?: number }) => error.code === 404,
          ),
        { timeoutMs: 30_000, message: 'the dependent ConfigMap collected' },
      );
    } finally {
      await environment.stop();
    }

    for (const { pid } of environment.processes) expect(isAlive(pid)).toBe(false);
    expect(existsSync(environment.kubeconfigPath)).toBe(false);
  });
});
