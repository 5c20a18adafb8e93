import { CLUSTER_API_GROUP, CONVERTERS, RESOURCES, crdName, type CrdConversion } from '@capstan/api';
import { canonicalJson, CUSTOM_RESOURCE_DEFINITIONS, type KubeClient } from '@capstan/kube';


/** Where the API server calls the webhook: the in-cluster Service, or a URL when the core runs outside the cluster. */
export type WebhookClientConfig =
  | { service: { name: string; namespace: string; path: string; port: number } }
  | { url: string };

/** The CRDs whose versions the webhook converts between (the core kinds upstream serves as v1beta1 too). */
export function convertedCrdNames(): string[] {
  return Object.values(RESOURCES)
    .filter((resource) => resource.group === CLUSTER_API_GROUP && CONVERTERS[resource.kind] !== undefined)
    .map(crdName);
}

/**
 * Points the converted CRDs at this webhook with its CA bundle (what cert-manager's CA injection does for upstream).
 * A CRD that already says so is not written: every write makes the API server rebuild the CRD's handlers.
 */
export async function configureCrdConversion(
  client: KubeClient,
  caPem: string,
  clientConfig: WebhookClientConfig,
): Promise<{ updated: string[] }> {
  const caBundle = Buffer.from(caPem, 'utf8').toString('base64');
  const wanted: CrdConversion['webhook']['clientConfig'] = { ...clientConfig, caBundle };
  const crds = client.resource<{ metadata: { name?: string }; spec?: { conversion?: CrdConversion } }>(CUSTOM_RESOURCE_DEFINITIONS);
  const updated: string[] = [];
  for (const name of convertedCrdNames()) {
    const crd = await crds.getIfExists({ name });
    if (!crd) continue;
    const current = crd.spec?.conversion?.webhook?.clientConfig ?? {};
    if (canonicalJson(current) === canonicalJson(wanted)) continue;
    await crds.mergePatch(
      { name },
      {
        spec: {
          conversion: {
            strategy: 'Webhook',
            webhook: {
              conversionReviewVersions: ['v1'],
              // Merge patch: the other way of reaching the webhook is taken away explicitly.
              clientConfig: { service: null, url: null, ...wanted },
            },
          },
        },
      },
    );
    updated.push(name);
  }
  return { updated };
}
