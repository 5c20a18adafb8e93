import type { V1Secret } from '@kubernetes/client-node';
import type { PrivateRegistriesConfig, RegistryConfig } from '@capstan/api';
import type {
  K3sRegistries,
  K3sRegistryAuth,
  K3sRegistryConfig,
  K3sRegistryTls,
} from '@capstan/k3s-bootstrap';
import type { ResourceClient } from '@capstan/kube';
import { getSecretIfExists, missingSecretKey, secretNotFound, secretText } from './secrets.js';

export type RegistriesResolution =
  { resolved: true; registries?: K3sRegistries } | { resolved: false; message: string };

/** Keys of a registry auth Secret: kubernetes.io/basic-auth's, or cluster-api-provider-rke2's identity token. */
export const REGISTRY_AUTH_KEYS = {
  username: 'username',
  password: 'password',
  identityToken: 'identity-token',
} as const;

/** Keys of a registry TLS Secret: kubernetes.io/tls's, and the CA as cert-manager adds it. */
export const REGISTRY_TLS_KEYS = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

/** A Secret or key a registry needs is missing; the message names the field, the Secret and the key. */
class UnresolvedRegistrySecret extends Error {}

/** Reads each Secret once, however many registries name it. */
type SecretReader = (name: string) => Promise<V1Secret | undefined>;

async function authOf(read: SecretReader, name: string, field: string): Promise<K3sRegistryAuth> {
  const secret = await read(name);
  const missing = (key: string) =>
    new UnresolvedRegistrySecret(`${field}: ${missingSecretKey(secret, name, key)}`);
  if (!secret) throw new UnresolvedRegistrySecret(`${field}: ${secretNotFound(name)}`);
  const username = secretText(secret, REGISTRY_AUTH_KEYS.username);
  const password = secretText(secret, REGISTRY_AUTH_KEYS.password);
  const identityToken = secretText(secret, REGISTRY_AUTH_KEYS.identityToken);
  if (username === undefined && password === undefined) {
    if (identityToken !== undefined) return { identityToken };
    throw new UnresolvedRegistrySecret(
      `${field}: secret ${name} has neither the keys ${REGISTRY_AUTH_KEYS.username} and ${REGISTRY_AUTH_KEYS.password} nor ${REGISTRY_AUTH_KEYS.identityToken}`,
    );
  }
  if (username === undefined) throw missing(REGISTRY_AUTH_KEYS.username);
  if (password === undefined) throw missing(REGISTRY_AUTH_KEYS.password);
  return { username, password, ...(identityToken !== undefined && { identityToken }) };
}

/** The largest certificate or key a TLS Secret may give (the API's bound on the inline caBundle). */
const MAX_REGISTRY_TLS_BYTES = 64 * 1024;

async function tlsOf(
  read: SecretReader,
  tls: NonNullable<RegistryConfig['tls']>,
  field: string,
): Promise<K3sRegistryTls> {
  const resolved: K3sRegistryTls = {
    ...(tls.caBundle !== undefined && { caPem: tls.caBundle }),
    ...(tls.insecureSkipVerify !== undefined && { insecureSkipVerify: tls.insecureSkipVerify }),
  };
  const ref = tls.tlsConfigSecret;
  if (!ref) return resolved;
  const secretField = `${field}.tlsConfigSecret`;
  const secret = await read(ref.name);
  const ca = secretText(secret, REGISTRY_TLS_KEYS.ca);
  const cert = secretText(secret, REGISTRY_TLS_KEYS.cert);
  const key = secretText(secret, REGISTRY_TLS_KEYS.key);
  const missing = (name: string) =>
    new UnresolvedRegistrySecret(`${secretField}: ${missingSecretKey(secret, ref.name, name)}`);
  if (!secret) throw new UnresolvedRegistrySecret(`${secretField}: ${secretNotFound(ref.name)}`);
  // Bounded as the inline caBundle is: every registry may name the same large Secret, and each copy is rendered.
  for (const [name, value] of [
    [REGISTRY_TLS_KEYS.ca, ca],
    [REGISTRY_TLS_KEYS.cert, cert],
    [REGISTRY_TLS_KEYS.key, key],
  ] as const) {
    const bytes = value === undefined ? 0 : Buffer.byteLength(value);
    if (bytes > MAX_REGISTRY_TLS_BYTES)
      throw new UnresolvedRegistrySecret(
        `${secretField}: key ${name} of secret ${ref.name} is ${bytes} bytes, more than the ${MAX_REGISTRY_TLS_BYTES} a PEM may be`,
      );
  }
  // A client certificate needs its key and the other way round; a CA alone is enough.
  if (cert !== undefined && key === undefined) throw missing(REGISTRY_TLS_KEYS.key);
  if (key !== undefined && cert === undefined) throw missing(REGISTRY_TLS_KEYS.cert);
  if (ca === undefined && cert === undefined) {
    throw new UnresolvedRegistrySecret(
      `${secretField}: secret ${ref.name} has none of the keys ${REGISTRY_TLS_KEYS.ca}, ${REGISTRY_TLS_KEYS.cert} and ${REGISTRY_TLS_KEYS.key}`,
    );
  }
  return {
    ...resolved,
    // The inline caBundle wins over the Secret's ca.crt, as its description says.
    ...(resolved.caPem === undefined && ca !== undefined && { caPem: ca }),
    ...(cert !== undefined && key !== undefined && { certPem: cert, keyPem: key }),
  };
}

/**
 * The K3sConfig's private registries with every Secret they name read from its namespace (the bytes of each key,
 * decoded from the API's base64): the renderer's `registries`. A missing Secret or key is named, never a value, as
 * for the files' contentFrom; the caller waits for it the same way.
 */
export async function resolveRegistries(
  namespace: string,
  config: PrivateRegistriesConfig | undefined,
  secrets: ResourceClient<V1Secret>,
): Promise<RegistriesResolution> {
  if (!config) return { resolved: true };
  const reads = new Map<string, Promise<V1Secret | undefined>>();
  const read: SecretReader = (name) => {
    let pending = reads.get(name);
    if (!pending) reads.set(name, (pending = getSecretIfExists(secrets, namespace, name)));
    return pending;
  };
  const configs: Record<string, K3sRegistryConfig> = {};
  try {
    for (const [registry, entry] of Object.entries(config.configs ?? {})) {
      const field = `spec.privateRegistriesConfig.configs[${registry}]`;
      configs[registry] = {
        ...(entry.authSecret && { auth: await authOf(read, entry.authSecret.name, `${field}.authSecret`) }),
        ...(entry.tls && { tls: await tlsOf(read, entry.tls, `${field}.tls`) }),
      };
    }
  } catch (error) {
    if (error instanceof UnresolvedRegistrySecret) return { resolved: false, message: error.message };
    throw error;
  }
  return {
    resolved: true,
    registries: {
      ...(config.mirrors && { mirrors: config.mirrors }),
      ...(config.configs && { configs }),
    },
  };
}
