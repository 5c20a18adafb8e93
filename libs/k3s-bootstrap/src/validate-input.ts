import { isIP } from 'node:net';
import { BootstrapRenderError } from './errors.js';
import type { K3sBootstrapInput, K3sFileEncoding } from './k3s-config-spec.js';
import { parseNodeLabel, parseNodeTaint } from './node-metadata.js';
import { isNodeAgentPath } from './node-agent-files.js';
import { K3S_CONFIG_PATH, K3S_INSTALL_SCRIPT_PATH, NODE_AGENT_BINARY_PATH, NODE_AGENT_DIR } from './paths.js';
import { isRegistriesPath, validateRegistries } from './private-registries.js';
import { isServerTlsPath } from './server-tls-files.js';

/** K3s release tags (`v1.31.4+k3s1`, `v1.32.0-rc1+k3s1`); also plain `v1.31.4` for air-gapped images. */
export const K3S_VERSION = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?(\+[0-9A-Za-z.]+)?$/;
const PROVIDER_ID = /^[A-Za-z][-A-Za-z0-9+.]*:\/\/\S*$/;
const ARG = /^[A-Za-z0-9][-A-Za-z0-9]*(=[^\n\r]*)?$/;
const COMPONENT = /^[a-z0-9][-a-z0-9]*$/;
const HOST_NAME =
  /^(\*\.)?[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*$/;
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const ABSOLUTE_PATH = /^\/[A-Za-z0-9._@%+=,:/-]*$/;
const PERMISSIONS = /^0?[0-7]{3}$|^[0-7]{4}$/;
const OWNER = /^[A-Za-z_][-A-Za-z0-9_.]*(:[A-Za-z_][-A-Za-z0-9_.]*)?$/;
const ENCODINGS: readonly K3sFileEncoding[] = ['base64', 'gzip', 'gzip+base64'];

const invalid = (field: string, what: string) =>
  new BootstrapRenderError(`${field} ${what}`, 'InvalidField', field);

function isCidr(text: string): boolean {
  const [address, prefix, ...rest] = text.split('/');
  if (rest.length > 0 || !address || !prefix || !/^\d{1,3}$/.test(prefix)) return false;
  const family = isIP(address);
  return family !== 0 && Number(prefix) <= (family === 4 ? 32 : 128);
}

function each(
  values: readonly string[] | undefined,
  field: string,
  check: (value: string, name: string) => void,
) {
  (values ?? []).forEach((value, index) => check(value, `${field}[${index}]`));
}

/**
 * Checks everything that ends up in the document, so a bad spec fails here with the field named instead
 * of producing a host that never joins. Nothing is interpolated into a shell line unvalidated.
 */
export function validateBootstrapInput(
  input: K3sBootstrapInput,
  /** What is checked for: the whole bootstrap data, or a running machine's in-place plan (no TLS files, no agent). */
  target: 'bootstrap-data' | 'in-place-plan' = 'bootstrap-data',
): void {
  const { spec } = input;
  if (!K3S_VERSION.test(spec.version)) {
    throw invalid('spec.version', 'is not a K3s release such as v1.31.4+k3s1');
  }
  if (!/^[\x21-\x7e]+$/.test(input.token)) {
    throw invalid('token', 'must be non-empty printable ASCII without spaces');
  }
  if (input.providerID !== undefined && !PROVIDER_ID.test(input.providerID)) {
    throw invalid('providerID', 'is not of the form <provider>://<id>');
  }
  if (input.nodeAgent) validateNodeAgent(input.nodeAgent);

  const agent = spec.agentConfig ?? {};
  each(agent.nodeLabels, 'spec.agentConfig.nodeLabels', (v, f) => {
    if (!parseNodeLabel(v)) throw invalid(f, 'is not a key=value node label');
  });
  each(agent.nodeTaints, 'spec.agentConfig.nodeTaints', (v, f) => {
    if (!parseNodeTaint(v))
      throw invalid(f, 'is not a key[=value]:NoSchedule|PreferNoSchedule|NoExecute taint');
  });
  each(agent.kubeletArgs, 'spec.agentConfig.kubeletArgs', (v, f) => {
    if (!ARG.test(v)) throw invalid(f, 'is not flag=value (without leading dashes)');
    if (input.providerID !== undefined && /^provider-id(=|$)/.test(v)) {
      throw invalid(f, 'sets provider-id, which the machine provides');
    }
  });
  each(agent.kubeProxyArgs, 'spec.agentConfig.kubeProxyArgs', (v, f) => {
    if (!ARG.test(v)) throw invalid(f, 'is not flag=value (without leading dashes)');
  });
  if (agent.nodeName !== undefined && (agent.nodeName.length > 253 || !NODE_NAME.test(agent.nodeName))) {
    throw invalid('spec.agentConfig.nodeName', 'is not a lower-case DNS subdomain');
  }

  const server = spec.serverConfig ?? {};
  each(server.tlsSANs, 'spec.serverConfig.tlsSANs', (v, f) => {
    if (isIP(v) === 0 && !HOST_NAME.test(v)) throw invalid(f, 'is neither an IP address nor a DNS name');
  });
  each(server.disableComponents, 'spec.serverConfig.disableComponents', (v, f) => {
    if (!COMPONENT.test(v)) throw invalid(f, 'is not a K3s component name');
  });
  for (const key of ['clusterCIDR', 'serviceCIDR'] as const) {
    const value = server[key];
    if (value !== undefined && !value.split(',').every(isCidr)) {
      throw invalid(`spec.serverConfig.${key}`, 'is not a CIDR list such as 10.42.0.0/16');
    }
  }

  if (server.clusterDNS !== undefined && !server.clusterDNS.split(',').every((ip) => isIP(ip) !== 0)) {
    throw invalid('spec.serverConfig.clusterDNS', 'is not an IP address list');
  }
  if (server.clusterDomain !== undefined && !NODE_NAME.test(server.clusterDomain)) {
    throw invalid('spec.serverConfig.clusterDomain', 'is not a lower-case DNS name');
  }
  for (const key of ['kubeAPIServerArgs', 'kubeControllerManagerArgs', 'kubeSchedulerArgs'] as const) {
    each(server[key], `spec.serverConfig.${key}`, (v, f) => {
      if (!ARG.test(v)) throw invalid(f, 'is not flag=value (without leading dashes)');
    });
  }

  if (spec.registries) validateRegistries(spec.registries);

  const seen = new Set<string>();
  (spec.files ?? []).forEach((file, index) => {
    const field = `spec.files[${index}]`;
    if (!ABSOLUTE_PATH.test(file.path) || file.path.split('/').includes('..')) {
      throw invalid(`${field}.path`, 'is not an absolute path');
    }
    if (file.path === K3S_CONFIG_PATH || isServerTlsPath(file.path)) {
      throw new BootstrapRenderError(
        `${field}.path is written by the bootstrap provider itself; use /etc/rancher/k3s/config.yaml.d/ for extra K3s config`,
        'ReservedPath',
        `${field}.path`,
      );
    }
    // Without privateRegistriesConfig a file may still provide registries.yaml, as before the field existed.
    if (spec.registries && isRegistriesPath(file.path)) {
      throw new BootstrapRenderError(
        `${field}.path is written from spec.privateRegistriesConfig`,
        'ReservedPath',
        `${field}.path`,
      );
    }
    if (
      isNodeAgentPath(file.path) ||
      file.path.startsWith(`${NODE_AGENT_DIR}/`) ||
      file.path === NODE_AGENT_BINARY_PATH
    ) {
      throw new BootstrapRenderError(
        `${field}.path belongs to the node agent (its config, credentials, unit and binary are the bootstrap provider's)`,
        'ReservedPath',
        `${field}.path`,
      );
    }
    if (file.path === K3S_INSTALL_SCRIPT_PATH || file.path === spec.airGappedInstallScriptPath) {
      throw new BootstrapRenderError(
        `${field}.path is the K3s install script, which the bootstrap data downloads (or the image provides) and in-place updates run`,
        'ReservedPath',
        `${field}.path`,
      );
    }
    if (seen.has(file.path)) {
      throw new BootstrapRenderError(`${field}.path is written twice`, 'DuplicatePath', `${field}.path`);
    }
    seen.add(file.path);
    if (file.permissions !== undefined && !PERMISSIONS.test(file.permissions)) {
      throw invalid(`${field}.permissions`, 'is not an octal mode such as 0644');
    }
    if (file.owner !== undefined && !OWNER.test(file.owner))
      throw invalid(`${field}.owner`, 'is not user[:group]');
    if (file.encoding !== undefined && !ENCODINGS.includes(file.encoding)) {
      throw invalid(`${field}.encoding`, `is not one of ${ENCODINGS.join(', ')}`);
    }
  });
  each(spec.preK3sCommands, 'spec.preK3sCommands', (v, f) => {
    if (!v.trim()) throw invalid(f, 'is empty');
  });
  each(spec.postK3sCommands, 'spec.postK3sCommands', (v, f) => {
    if (!v.trim()) throw invalid(f, 'is empty');
  });
  if (
    spec.airGappedInstallScriptPath !== undefined &&
    !/^\/[A-Za-z0-9._/-]+$/.test(spec.airGappedInstallScriptPath)
  ) {
    throw invalid('spec.airGappedInstallScriptPath', 'is not an absolute path of plain characters');
  }
  // A running server keeps the TLS files its bootstrap data wrote: an in-place plan renders none.
  if (target === 'bootstrap-data' && input.role !== 'agent' && !input.certificates) {
    throw new BootstrapRenderError(
      `a ${input.role} needs the cluster certificates`,
      'MissingCertificates',
      'certificates',
    );
  }
}

const DNS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validateNodeAgent(agent: NonNullable<K3sBootstrapInput['nodeAgent']>): void {
  let url: URL | undefined;
  try {
    url = new URL(agent.server);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:') throw invalid('nodeAgent.server', 'is not an https URL');
  if (!agent.caPem.includes('-----BEGIN CERTIFICATE-----'))
    throw invalid('nodeAgent.caPem', 'is not a PEM certificate');
  if (!/^[\x21-\x7e]+$/.test(agent.token))
    throw invalid('nodeAgent.token', 'must be non-empty printable ASCII');
  if (!DNS_NAME.test(agent.namespace)) throw invalid('nodeAgent.namespace', 'is not a namespace name');
  if (!DNS_NAME.test(agent.secretName)) throw invalid('nodeAgent.secretName', 'is not a Secret name');
}
