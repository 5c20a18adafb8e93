import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { deployDir, loadKustomization, ManifestApplier } from '@capstan/manifests';
import { installCapstanDefinitions } from './capstan-definitions.js';
import { renderKubeconfig } from './kubeconfig.js';
import { startLocalEnvironment, type LocalEnvironment } from './local-environment.js';

export interface ManagementClusterOptions {
  /** Where the data, certificates and logs go (a volume of the container). */
  workDir: string;
  /** The API server's port on every address of the container. */
  port: number;
  /** The name the other containers reach it by (its compose service), in the serving certificate and the kubeconfig. */
  serverName: string;
  /** Where the admin kubeconfig for the other containers is written (a shared volume), once the CRDs are served. */
  kubeconfigOut: string;
  log: (line: string) => void;
}

/**
 * The management cluster of docker-compose.yml, where no K3s image can be pulled: etcd, kube-apiserver and
 * kube-controller-manager as the test environment runs them, on a fixed port of every address, with Capstan's CRDs,
 * admission policies and namespace installed before the kubeconfig is written, so a service that finds the kubeconfig
 * finds its kinds served. Resolves with the running environment; `stop()` ends it.
 */
export async function runManagementCluster(options: ManagementClusterOptions): Promise<LocalEnvironment> {
  const environment = await startLocalEnvironment({
    workDir: options.workDir,
    apiServer: { port: options.port, serverNames: [options.serverName] },
    nats: false,
    log: options.log,
  });
  try {
    const kc = new KubeConfig();
    kc.loadFromString(environment.kubeconfig);
    await installCapstanDefinitions(kc);
    const applier = new ManifestApplier(kc);
    for (const namespace of loadKustomization(deployDir()).filter((m) => m.kind === 'Namespace')) {
      await applier.apply(namespace, { fieldManager: 'capstan-management' });
    }
    options.log("installed Capstan's CRDs, admission policies and namespace");
    const ca = kc.getCurrentCluster()?.caData;
    const kubeconfig = renderKubeconfig({
      clusterName: 'capstan-compose',
      server: `https://${options.serverName}:${options.port}`,
      ...(ca ? { caData: ca } : {}),
      user: { token: environment.adminToken },
    });
    // Written whole or not at all: the services poll for it. Readable by their non-root users (a compose volume).
    mkdirSync(dirname(options.kubeconfigOut), { recursive: true });
    writeFileSync(`${options.kubeconfigOut}.partial`, kubeconfig, { mode: 0o644 });
    renameSync(`${options.kubeconfigOut}.partial`, options.kubeconfigOut);
    options.log(
      `kubeconfig for the other containers: ${options.kubeconfigOut} (server https://${options.serverName}:${options.port})`,
    );
    return environment;
  } catch (error) {
    await environment.stop();
    throw error;
  }
}
