import { ApiextensionsV1Api, type V1CustomResourceDefinition, type KubeConfig } from '@kubernetes/client-node';
import { type ManifestApplier } from './apply.js';
import { type Manifest } from './manifests.js';

/**
 * The CRD to apply, keeping how the API server reaches the conversion webhook as the core set it (its CA bundle, and
 * its URL when it runs outside the cluster): the core owns that part, and applying the generated Service reference
 * next to its URL would make the CRD invalid.
 */
export function withLiveConversionClient(crd: Manifest, live: V1CustomResourceDefinition | undefined): Manifest {
  const liveClient = live?.spec.conversion?.webhook?.clientConfig;
  const spec = crd['spec'] as { conversion?: { webhook?: { clientConfig?: unknown } } } | undefined;
  if (!liveClient || !spec?.conversion?.webhook) return crd;
  return {
    ...crd,
    spec: { ...spec, conversion: { ...spec.conversion, webhook: { ...spec.conversion.webhook, clientConfig: liveClient } } },
  };
}

/** Applies CRDs and waits until the API server serves each of them (condition Established). */
export async function installCrds(
  kc: KubeConfig,
  applier: ManifestApplier,
  crds: Manifest[],
  options: { fieldManager: string; timeoutMs?: number },
): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds) {
    const live = await api.readCustomResourceDefinition({ name: crd.metadata.name }).catch(() => undefined);
    await applier.apply(withLiveConversionClient(crd, live), { fieldManager: options.fieldManager });
  }
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
