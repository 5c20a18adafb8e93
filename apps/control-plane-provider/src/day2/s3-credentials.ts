import type { V1Secret } from '@kubernetes/client-node';
import type { K3sControlPlane } from '@capstan/api';
import type { ResourceClient } from '@capstan/kube';
import type { S3Target } from './etcd-commands.js';
import { secretText } from '../k3scontrolplane/secrets.js';

/** The keys of an S3 credentials Secret (Rancher's S3 cloud credential: accessKey, secretKey). */
export const S3_CREDENTIAL_KEYS = { accessKey: 'accessKey', secretKey: 'secretKey' } as const;

/** Why the control plane's S3 store cannot be used: names the Secret and the key, never a value. */
export class S3CredentialsError extends Error {
  override readonly name = 'S3CredentialsError';
}

/**
 * The S3 store of `kcp.spec.etcd.s3` with its keys, read from the credentials Secret in the control plane's
 * namespace (not cached: it carries no cluster label, and it is read once per operation). Undefined without S3.
 */
export async function s3TargetOf(
  secrets: ResourceClient<V1Secret>,
  kcp: K3sControlPlane,
): Promise<S3Target | undefined> {
  const spec = kcp.spec.etcd?.s3;
  if (!spec) return undefined;
  const namespace = kcp.metadata.namespace!;
  const secret = await secrets.getIfExists({ namespace, name: spec.credentialsSecretName });
  if (!secret) {
    throw new S3CredentialsError(
      `the S3 credentials Secret ${namespace}/${spec.credentialsSecretName} (spec.etcd.s3.credentialsSecretName) does not exist`,
    );
  }
  const accessKey = secretText(secret, S3_CREDENTIAL_KEYS.accessKey)?.trim();
  const secretKey = secretText(secret, S3_CREDENTIAL_KEYS.secretKey)?.trim();
  for (const [key, value] of [
    [S3_CREDENTIAL_KEYS.accessKey, accessKey],
    [S3_CREDENTIAL_KEYS.secretKey, secretKey],
  ] as const) {
    if (!value)
      throw new S3CredentialsError(
        `the S3 credentials Secret ${namespace}/${spec.credentialsSecretName} has no ${key}`,
      );
  }
  return { spec, accessKey: accessKey!, secretKey: secretKey! };
}
