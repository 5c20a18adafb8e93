import type { V1Secret } from '@kubernetes/client-node';
import type { K3sFile as ApiK3sFile } from '@capstan/api';
import type { K3sFile } from '@capstan/k3s-bootstrap';
import type { ResourceClient } from '@capstan/kube';
import { getSecretIfExists, missingSecretKey, secretText } from './secrets.js';

export type FileResolution = { resolved: true; files: K3sFile[] } | { resolved: false; message: string };

/**
 * The K3sConfig's files with `contentFrom.secret` replaced by the secret's value (the bytes of that key,
 * decoded from the API's base64; the file's own `encoding` then tells cloud-init how to decode it on the
 * host). A missing secret or key is named, never its content.
 */
export async function resolveFiles(
  namespace: string,
  files: readonly ApiK3sFile[] | undefined,
  secrets: ResourceClient<V1Secret>,
): Promise<FileResolution> {
  const resolved: K3sFile[] = [];
  for (const [index, file] of (files ?? []).entries()) {
    let content = file.content ?? '';
    const source = file.contentFrom?.secret;
    if (source) {
      const secret = await getSecretIfExists(secrets, namespace, source.name);
      const value = secretText(secret, source.key);
      if (value === undefined) {
        return {
          resolved: false,
          message: `spec.files[${index}]: ${missingSecretKey(secret, source.name, source.key)}`,
        };
      }
      content = value;
    }
    resolved.push({
      path: file.path,
      content,
      ...(file.owner !== undefined && { owner: file.owner }),
      ...(file.permissions !== undefined && { permissions: file.permissions }),
      ...(file.encoding !== undefined && { encoding: file.encoding }),
    });
  }
  return { resolved: true, files: resolved };
}
