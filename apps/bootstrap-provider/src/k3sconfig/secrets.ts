import type { V1Secret } from '@kubernetes/client-node';
import type { ResourceClient } from '@capstan/kube';

export { SECRETS } from '@capstan/kube';

/** The UTF-8 text of one key of a Secret as the API returns it (base64 `data`), if present. */
export function secretText(secret: V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

export const secretNotFound = (name: string): string => `secret ${name} not found`;

/** What keeps a key of a Secret from being read, the Secret and the key named: never a value. */
export function missingSecretKey(secret: V1Secret | undefined, name: string, key: string): string {
  return secret ? `secret ${name} has no key ${key}` : secretNotFound(name);
}

export const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** A Secret read from the API, or undefined when there is none. */
export function getSecretIfExists(
  secrets: ResourceClient<V1Secret>,
  namespace: string,
  name: string,
): Promise<V1Secret | undefined> {
  return secrets.getIfExists({ namespace, name });
}
