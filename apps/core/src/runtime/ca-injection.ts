import type { V1Secret } from '@kubernetes/client-node';
import type { ExtensionConfig } from '@capstan/api';
import { isNotFound, SECRETS, type KubeClient } from '@capstan/kube';

// CA injection (upstream core/reconcilers/extensionconfig reconcileCABundle, after cert-manager's cainjector): an
// ExtensionConfig annotated with `<namespace>/<name>` of a Secret gets that Secret's `ca.crt` as its caBundle, so
// an extension whose certificate is issued in-cluster can be trusted without copying its CA by hand.

export const INJECT_CA_FROM_SECRET_ANNOTATION = 'runtime.cluster.x-k8s.io/inject-ca-from-secret';
/** The Secret key holding the CA certificate (PEM). */
export const CA_KEY = 'ca.crt';

/** Why a CA could not be injected; the message names the Secret, never its content. */
export class CaInjectionError extends Error {
  override readonly name = 'CaInjectionError';
}

/** The Secret an ExtensionConfig asks its CA from, or undefined when it asks none. */
export function caSecretOf(config: ExtensionConfig): { namespace: string; name: string } | undefined {
  const value = config.metadata.annotations?.[INJECT_CA_FROM_SECRET_ANNOTATION];
  if (value === undefined) return undefined;
  const slash = value.indexOf('/');
  const namespace = slash < 0 ? '' : value.slice(0, slash);
  const name = slash < 0 ? value : value.slice(slash + 1);
  if (!namespace || !name || name.includes('/'))
    throw new CaInjectionError(`annotation ${INJECT_CA_FROM_SECRET_ANNOTATION} must be <namespace>/<name>`);
  return { namespace, name };
}

/**
 * The caBundle the ExtensionConfig should have: the `ca.crt` (base64, as the Secret's data holds it) of the Secret
 * its annotation names, read from the API server (the core caches no Secret of this kind), or undefined when it is
 * not annotated.
 */
export async function injectedCaBundle(
  client: KubeClient,
  config: ExtensionConfig,
): Promise<string | undefined> {
  const ref = caSecretOf(config);
  if (!ref) return undefined;
  let secret: V1Secret;
  try {
    secret = await client.resource<V1Secret>(SECRETS).get(ref);
  } catch (error) {
    if (isNotFound(error)) throw new CaInjectionError(`Secret ${ref.namespace}/${ref.name} not found`);
    throw error;
  }
  const ca = secret.data?.[CA_KEY];
  if (!ca) throw new CaInjectionError(`Secret ${ref.namespace}/${ref.name} has no ${CA_KEY}`);
  return ca;
}
