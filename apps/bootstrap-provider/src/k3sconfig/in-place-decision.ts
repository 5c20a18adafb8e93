import { canonicalJson } from '@capstan/kube';
import type { K3sConfigSpec } from '@capstan/api';
import type { CanUpdateMachineResponse } from '@capstan/events';
import { k3sReleaseFor } from './render-input.js';

// What of a K3s machine can change in place (docs/in-place-updates.md). K3s takes a new release, a new
// config.yaml and a new registries.yaml through its install script and a restart (Rancher's planner does the
// same); files are written by the agent. What only the first boot reads, or what the whole cluster agreed on at
// init, cannot change in place.

/** K3sConfig spec fields that cannot change on a running machine, and why. */
const FIXED_FIELDS: Record<string, string> = {
  preK3sCommands: 'run only at first boot',
  postK3sCommands: 'run only at first boot',
  airGapped: 'decides how K3s was installed at first boot',
  airGappedInstallScriptPath: 'decides how K3s was installed at first boot',
  'agentConfig.nodeName': "is the node's identity",
  'serverConfig.clusterCIDR': 'is fixed when the cluster is initialized',
  'serverConfig.serviceCIDR': 'is fixed when the cluster is initialized',
  'serverConfig.clusterDNS': 'is fixed when the cluster is initialized',
  'serverConfig.clusterDomain': 'is fixed when the cluster is initialized',
  'serverConfig.tlsSANs': 'is baked into the serving certificate',
  'serverConfig.secretsEncryption': 'is read when the cluster starts (its key is rotated with spec.rotateEncryptionKeys of the control plane)',
};

/**
 * Fields that go into K3s's config.yaml or registries.yaml, which K3s reads only when it starts: changing them
 * restarts K3s (and so drains the node first).
 */
const RESTART_FIELDS = ['version', 'serverConfig', 'agentConfig', 'privateRegistriesConfig'] as const;

const SEMVER = /^v?(\d+)\.(\d+)\.(\d+)/;

export interface MachineConfiguration {
  /** The Machine's spec.version. */
  version?: string;
  spec: K3sConfigSpec;
}

function pick(spec: K3sConfigSpec, path: string): unknown {
  let value: unknown = spec;
  for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
  return value;
}

const differs = (a: unknown, b: unknown) => canonicalJson(a ?? null) !== canonicalJson(b ?? null);

/** What of a spec a machine of `role` uses: agents never read `serverConfig`, so a change there is none for them. */
function usedBy(spec: K3sConfigSpec, role: 'server' | 'agent'): K3sConfigSpec {
  if (role === 'server') return spec;
  const { serverConfig: _ignored, ...rest } = spec;
  return rest;
}

/** Whether a K3s machine can go from `current` to `desired` in place, and whether that restarts K3s. */
export function decideInPlace(
  currentConfiguration: MachineConfiguration,
  desiredConfiguration: MachineConfiguration,
  role: 'server' | 'agent' = 'server',
): CanUpdateMachineResponse {
  const current = { ...currentConfiguration, spec: usedBy(currentConfiguration.spec, role) };
  const desired = { ...desiredConfiguration, spec: usedBy(desiredConfiguration.spec, role) };
  const fixed = Object.keys(FIXED_FIELDS).filter((path) => differs(pick(current.spec, path), pick(desired.spec, path)));
  if (fixed.length > 0) {
    const path = fixed[0]!;
    return {
      inPlace: false,
      reason: `K3sConfig spec.${path} changed: it ${FIXED_FIELDS[path]}`,
      fields: fixed.map((f) => `spec.${f}`),
    };
  }
  const from = k3sReleaseFor(current.spec.version, current.version);
  const to = k3sReleaseFor(desired.spec.version, desired.version);
  const versionField = desired.spec.version !== current.spec.version ? 'spec.version (K3sConfig)' : 'spec.version';
  if (from && to && from !== to) {
    const a = SEMVER.exec(from);
    const b = SEMVER.exec(to);
    if (!a || !b) return { inPlace: false, reason: `cannot compare K3s releases ${from} and ${to}`, fields: [versionField] };
    const [ma, mi, pa] = [Number(a[1]), Number(a[2]), Number(a[3])];
    const [mb, mj, pb] = [Number(b[1]), Number(b[2]), Number(b[3])];
    if (mb < ma || (mb === ma && (mj < mi || (mj === mi && pb < pa)))) {
      return { inPlace: false, reason: `K3s does not downgrade in place (${from} -> ${to})`, fields: [versionField] };
    }
    if (mb !== ma || mj - mi > 1) {
      return {
        inPlace: false,
        reason: `K3s upgrades one minor version at a time (${from} -> ${to})`,
        fields: [versionField],
      };
    }
  }
  const restart =
    from !== to || RESTART_FIELDS.some((field) => field !== 'version' && differs(current.spec[field], desired.spec[field]));
  return { inPlace: true, ...(restart && { restart: true }) };
}
