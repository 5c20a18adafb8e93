import type { V1Secret } from '@kubernetes/client-node';
import type { Informer, ResourceClient } from '@capstan/kube';

export { SECRETS } from '@capstan/kube';

/** The Secrets API and the cache of the cluster Secrets (selected by the cluster-name label). */
export interface SecretAccess {
  client: ResourceClient<V1Secret>;
  cache: Pick<Informer<V1Secret>, 'getByName' | 'hasSynced'>;
}

/** The UTF-8 text of one key of a Secret as the API returns it (base64 `data`), if present. */
export function secretText(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/**
 * A Secret from the cache, or from the API while the cache has not synced. One the synced cache does not hold is
 * taken as absent: the caller creates it, and reads it only when the create finds it (one without the
 * cluster-name label the cache selects, or one the cache does not show yet), so a new cluster's Secrets cost
 * no GET each.
 */
export async function findSecret(access: SecretAccess, namespace: string, name: string): Promise<V1Secret | undefined> {
  const cached = access.cache.getByName(namespace, name);
  if (cached || access.cache.hasSynced()) return cached;
  return access.client.getIfExists({ namespace, name });
}
