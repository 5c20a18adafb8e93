import type { V1Secret } from '@kubernetes/client-node';
import type { K3sConfigSpec } from '@capstan/api';
import type { K3sFile, K3sRegistries } from '@capstan/k3s-bootstrap';
import type { ResourceClient } from '@capstan/kube';
import { WaitingReason } from './bootstrap-role.js';
import { resolveFiles } from './file-sources.js';
import { resolveRegistries } from './registry-sources.js';

/** What a K3sConfig spec takes from Secrets, read: the renderer's files and registries. */
export interface SecretSourced {
  files: K3sFile[];
  registries?: K3sRegistries;
}

export type SecretSourcesResolution =
  | { resolved: true; read: SecretSourced }
  | {
      resolved: false;
      reason: typeof WaitingReason.FileSecret | typeof WaitingReason.RegistrySecret;
      message: string;
    };

/**
 * The file contents and registry credentials the spec names, read from its namespace; or the first Secret or key
 * missing, named (never a value), with the reason the bootstrap data waits for it.
 */
export async function resolveSecretSources(
  namespace: string,
  spec: K3sConfigSpec,
  secrets: ResourceClient<V1Secret>,
): Promise<SecretSourcesResolution> {
  const files = await resolveFiles(namespace, spec.files, secrets);
  if (!files.resolved) return { resolved: false, reason: WaitingReason.FileSecret, message: files.message };
  const registries = await resolveRegistries(namespace, spec.privateRegistriesConfig, secrets);
  if (!registries.resolved)
    return { resolved: false, reason: WaitingReason.RegistrySecret, message: registries.message };
  return {
    resolved: true,
    read: { files: files.files, ...(registries.registries && { registries: registries.registries }) },
  };
}
