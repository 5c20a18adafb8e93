import {
  BOOTSTRAP_DATA_FORMAT,
  BootstrapDataError,
  parseK3sCloudConfig,
  readCloudConfigFiles,
  type ParsedFile,
  type ParsedK3sBootstrap,
} from '@capstan/k3s-bootstrap';
import { isNotFound, SECRETS, type KubeClient } from '@capstan/kube';
import type { KubernetesObject } from '@kubernetes/client-node';


interface Secret extends KubernetesObject {
  data?: Record<string, string>;
}

/** Parsed bootstrap data, with every file it writes (the host writes them all before running anything). */
export type RunnableBootstrap = ParsedK3sBootstrap & { files?: ParsedFile[] };

export type BootstrapDataResult =
  | { kind: 'parsed'; parsed: RunnableBootstrap }
  | { kind: 'missing'; message: string }
  /** The data exists but cannot be run; `message` names what could not be read, never the content. */
  | { kind: 'invalid'; message: string };

/**
 * Reads a machine's bootstrap data (Secret key `value`, `format` cloud-config or absent, as CAPD reads it)
 * and parses it the way a host would.
 */
export async function readBootstrapData(
  client: KubeClient,
  namespace: string,
  secretName: string,
): Promise<BootstrapDataResult> {
  let secret: Secret;
  try {
    secret = await client.resource<Secret>(SECRETS).get({ namespace, name: secretName });
  } catch (error) {
    if (isNotFound(error))
      return { kind: 'missing', message: `bootstrap data secret ${secretName} does not exist` };
    throw error;
  }
  const format =
    secret.data?.['format'] === undefined
      ? BOOTSTRAP_DATA_FORMAT
      : Buffer.from(secret.data['format'], 'base64').toString('utf8');
  if (format !== BOOTSTRAP_DATA_FORMAT) {
    return {
      kind: 'invalid',
      message: `bootstrap data secret ${secretName}: format ${JSON.stringify(format.slice(0, 32))} is not supported (cloud-config only)`,
    };
  }
  const value = secret.data?.['value'];
  if (value === undefined)
    return { kind: 'invalid', message: `bootstrap data secret ${secretName} has no key "value"` };
  try {
    const document = Buffer.from(value, 'base64').toString('utf8');
    return { kind: 'parsed', parsed: { ...parseK3sCloudConfig(document), files: readCloudConfigFiles(document) } };
  } catch (error) {
    if (error instanceof BootstrapDataError) return { kind: 'invalid', message: error.message };
    throw error;
  }
}
