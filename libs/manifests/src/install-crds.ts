import { ApiextensionsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { type ManifestApplier } from './apply.js';
import { type Manifest } from './manifests.js';

/** Applies CRDs and waits until the API server serves each of them (condition Established). */
export async function installCrds(
  kc: KubeConfig,
  applier: ManifestApplier,
  crds: Manifest[],
  options: { fieldManager: string; timeoutMs?: number },
): Promise<void> {
  for (const crd of crds) await applier.apply(crd, { fieldManager: options.fieldManager });
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (const crd of crds) {
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name: crd.metadata.name });
      if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not established in time`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  applier.refreshDiscovery();
}
