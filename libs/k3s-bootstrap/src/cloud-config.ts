import { stringify } from 'yaml';
import type { K3sBootstrapInput } from './k3s-config-spec.js';
import { k3sConfigFor } from './k3s-config.js';
import { K3S_CONFIG_PATH, K3S_INSTALL_SCRIPT_PATH } from './paths.js';
import { nodeAgentFiles } from './node-agent-files.js';
import { registriesFiles } from './private-registries.js';
import { execFor, runcmdLines } from './runcmd.js';
import { serverTlsFiles, serverTlsFromClusterCertificates } from './server-tls-files.js';
import { validateBootstrapInput } from './validate-input.js';
import { YAML_OPTIONS } from './yaml-options.js';

export const CLOUD_CONFIG_HEADER = '#cloud-config';

/** Files the bootstrap provider writes are root's; the config holds the token, so only root reads it. */
const ROOT_OWNER = 'root:root';
const CONFIG_PERMISSIONS = '0600';

export { YAML_OPTIONS } from './yaml-options.js';

/** A `write_files` entry as rendered (cloud-init's field names). */
export interface CloudConfigWriteFile {
  path: string;
  owner?: string;
  permissions?: string;
  encoding?: string;
  content: string;
}

/**
 * Renders the bootstrap data of one K3s node as a `#cloud-config` document: write_files (the K3s config, the
 * server CA material for servers, registries.yaml and its certificates, the node agent's files, the user's files)
 * and runcmd (pre commands, the K3s install, post commands, the Cluster API sentinel). The output depends only on
 * the input, key order included, so a re-render does not change the data secret.
 */
export function renderK3sCloudConfig(input: K3sBootstrapInput): string {
  validateBootstrapInput(input);
  const { spec, role } = input;
  const files: CloudConfigWriteFile[] = [
    {
      path: K3S_CONFIG_PATH,
      owner: ROOT_OWNER,
      permissions: CONFIG_PERMISSIONS,
      content: stringify(k3sConfigFor(input), YAML_OPTIONS),
    },
  ];
  if (role !== 'agent' && input.certificates) {
    for (const file of serverTlsFiles(serverTlsFromClusterCertificates(input.certificates))) {
      files.push({
        path: file.path,
        owner: ROOT_OWNER,
        permissions: file.permissions,
        content: file.content,
      });
    }
  }
  for (const file of spec.registries ? registriesFiles(spec.registries) : []) {
    files.push({ path: file.path, owner: ROOT_OWNER, permissions: file.permissions, content: file.content });
  }
  for (const file of input.nodeAgent ? nodeAgentFiles(input.nodeAgent) : []) {
    files.push({ path: file.path, owner: ROOT_OWNER, permissions: file.permissions, content: file.content });
  }
  for (const file of spec.files ?? []) {
    files.push({
      path: file.path,
      ...(file.owner !== undefined && { owner: file.owner }),
      ...(file.permissions !== undefined && { permissions: file.permissions }),
      ...(file.encoding !== undefined && { encoding: file.encoding }),
      content: file.content,
    });
  }
  const runcmd = runcmdLines(
    {
      version: spec.version,
      exec: execFor(role),
      airGapped: spec.airGapped === true,
      scriptPath: spec.airGapped
        ? (spec.airGappedInstallScriptPath ?? K3S_INSTALL_SCRIPT_PATH)
        : K3S_INSTALL_SCRIPT_PATH,
    },
    spec.preK3sCommands,
    spec.postK3sCommands,
    input.nodeAgent !== undefined,
  );
  return `${CLOUD_CONFIG_HEADER}\n${stringify({ write_files: files, runcmd }, YAML_OPTIONS)}`;
}
