import type { V1Secret } from '@kubernetes/client-node';
import type { ResourceClient } from '@capstan/kube';

export { SECRETS } from '@capstan/kube';

/** The UTF-8 text of one key of a Secret as the API returns it (base64 `data`), if present. */
export function secretText(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** A Secret from the cache, else from the API (the cache lags what was just created), else undefined. */
export async function findSecret(
  secrets: ResourceClient<V1Secret>,
  cached: V1Secret | undefined,
  namespace: string,
  name: string,
): Promise<V1Secret | undefined> {
  return cached ?? secrets.getIfExists({ namespace, name });
}
