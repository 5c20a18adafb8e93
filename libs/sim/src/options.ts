import { homedir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { SimError } from './errors.js';

/** How the machine-provider runs simulated hosts. */
export interface SimMachineOptions {
  /** Pid files, certificates, logs and per-machine state; the only place the sim writes to. */
  stateDir: string;
  /** An etcd to keep workload clusters in (a key prefix each); unset: the provider starts its own. */
  etcdUrl?: string;
  /** Where workload API servers listen; unset: the endpoint host when it is an IP address, else 0.0.0.0. */
  bindAddress?: string;
  /** How often a node renews its Lease in kube-node-lease (the kubelet's 10 s). */
  heartbeatSeconds: number;
  /** How often a node posts its status (Ready's lastHeartbeatTime) when nothing changed. */
  nodeStatusSeconds: number;
  /** Boot delays are stretched by up to this fraction at random. */
  provisioningJitter: number;
  /** GOMEMLIMIT of each workload kube-apiserver, in MiB (0: none); trades CPU for a smaller footprint. */
  apiServerMemoryLimitMiB: number;
  /** API servers found running from an earlier provider that no machine claims are stopped after this. */
  orphanGraceSeconds: number;
  apiServerStartTimeoutSeconds: number;
  /**
   * How a machine whose bootstrap data starts a node agent gets it: `process` (default: one agent process per
   * machine, rooted in the machine's directory), `in-process` (all agents in the provider's process, for scale
   * runs), `off` (none).
   */
  nodeAgentMode: NodeAgentMode;
  /** The node agent's compiled main (`apps/node-agent/dist/main.js` of this checkout by default). */
  nodeAgentMain?: string;
  /**
   * Dedicated clusters run workloads (default): a kube-controller-manager and kube-scheduler next to their API
   * server, and the nodes run the pods bound to them. Off: the API server alone, as shared clusters always are.
   */
  workloads: boolean;
  /**
   * Where dedicated clusters keep their data: `per-cluster` (default) an etcd of their own, as K3s's embedded etcd
   * (snapshots and restores act on it); `shared` one store for all, a key prefix each (cheaper, for scale runs).
   */
  clusterEtcd: ClusterEtcdMode;
  /**
   * A new server's leaf certificates (and its cluster API server's) are issued as if this many days had passed since
   * (0: now). K3s's certificates last 365 days, so 350 leaves 15: rotation before expiry can be exercised and measured
   * without waiting a year. Certificates rotated later are new.
   */
  certificateAgeDays: number;
}

export const CLUSTER_ETCD_MODES = ['per-cluster', 'shared'] as const;
export type ClusterEtcdMode = (typeof CLUSTER_ETCD_MODES)[number];

export const NODE_AGENT_MODES = ['process', 'in-process', 'off'] as const;
export type NodeAgentMode = (typeof NODE_AGENT_MODES)[number];

/** How the cluster-provider allocates control plane endpoints. */
export interface SimClusterOptions {
  /** Host of every allocated endpoint: where the machine-provider's API servers are reachable. */
  endpointHost: string;
  /** Ports are allocated from this range (inclusive), below Linux's ephemeral range by default. */
  portRange: { min: number; max: number };
}

export const SIM_ENV_PREFIX = 'CAPSTAN_SIM_';

export function defaultSimStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_STATE_HOME'] || join(env['HOME'] || homedir(), '.local', 'state');
  return join(base, 'capstan', 'sim');
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[`${SIM_ENV_PREFIX}${name}`];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new SimError(`${SIM_ENV_PREFIX}${name} must be a number >= ${min}`, 'InvalidOption', {
      option: name,
    });
  }
  return value;
}

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[`${SIM_ENV_PREFIX}${name}`];
  return raw === undefined || raw === '' ? undefined : raw;
}

export function simMachineOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): SimMachineOptions {
  const bindAddress = text(env, 'BIND_ADDRESS');
  if (bindAddress !== undefined && isIP(bindAddress) === 0) {
    throw new SimError(`${SIM_ENV_PREFIX}BIND_ADDRESS must be an IP address`, 'InvalidOption', {
      option: 'BIND_ADDRESS',
    });
  }
  return {
    stateDir: text(env, 'STATE_DIR') ?? defaultSimStateDir(env),
    etcdUrl: text(env, 'ETCD_URL'),
    bindAddress,
    heartbeatSeconds: number(env, 'HEARTBEAT_SECONDS', 10, 0.1),
    nodeStatusSeconds: number(env, 'NODE_STATUS_SECONDS', 60, 0.1),
    provisioningJitter: number(env, 'PROVISIONING_JITTER', 0.2),
    apiServerMemoryLimitMiB: number(env, 'APISERVER_MEMORY_LIMIT_MIB', 160),
    orphanGraceSeconds: number(env, 'ORPHAN_GRACE_SECONDS', 120),
    apiServerStartTimeoutSeconds: number(env, 'APISERVER_START_TIMEOUT_SECONDS', 120, 1),
    nodeAgentMode: nodeAgentMode(env),
    nodeAgentMain: text(env, 'NODE_AGENT_MAIN'),
    workloads: onOff(env, 'WORKLOADS', true),
    clusterEtcd: oneOf(env, 'CLUSTER_ETCD', CLUSTER_ETCD_MODES, 'per-cluster'),
    certificateAgeDays: certificateAgeDays(env),
  };
}

/** Below K3s's one-year lifetime: an older certificate would be issued already expired. */
function certificateAgeDays(env: NodeJS.ProcessEnv): number {
  const days = number(env, 'CERTIFICATE_AGE_DAYS', 0);
  if (days >= 365)
    throw new SimError(
      `${SIM_ENV_PREFIX}CERTIFICATE_AGE_DAYS must be below 365 (a leaf certificate's lifetime)`,
      'InvalidOption',
      {
        option: 'CERTIFICATE_AGE_DAYS',
      },
    );
  return days;
}

function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  throw new SimError(`${SIM_ENV_PREFIX}${name} must be on or off`, 'InvalidOption', { option: name });
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = text(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new SimError(`${SIM_ENV_PREFIX}${name} must be one of ${values.join(', ')}`, 'InvalidOption', {
      option: name,
    });
  }
  return raw as T;
}

const nodeAgentMode = (env: NodeJS.ProcessEnv): NodeAgentMode =>
  oneOf(env, 'NODE_AGENT', NODE_AGENT_MODES, 'process');

export function parsePortRange(value: string): { min: number; max: number } {
  const match = /^(\d+)-(\d+)$/.exec(value.trim());
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < 1 || max > 65535 || min > max) {
    throw new SimError(`port range "${value}" is not <min>-<max> within 1-65535`, 'InvalidOption', {
      option: 'PORT_RANGE',
    });
  }
  return { min, max };
}

export function simClusterOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): SimClusterOptions {
  return {
    endpointHost: text(env, 'ENDPOINT_HOST') ?? '127.0.0.1',
    portRange: parsePortRange(text(env, 'PORT_RANGE') ?? '20000-29999'),
  };
}

/**
 * Takes the sim's own flags off a command line: `--sim-etcd-url=<url>` or `--sim-etcd-url <url>` stands for
 * CAPSTAN_SIM_ETCD_URL, and so on. Returns the environment with them applied and the flags the service
 * options parser reads.
 */
export function extractSimFlags(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): { env: NodeJS.ProcessEnv; rest: string[] } {
  const merged: NodeJS.ProcessEnv = { ...env };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--sim-([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (!match) {
      rest.push(arg);
      continue;
    }
    const value = match[2] ?? argv[++i];
    if (value === undefined) {
      throw new SimError(`${arg} needs a value`, 'InvalidOption', { option: match[1] });
    }
    merged[`${SIM_ENV_PREFIX}${match[1]!.toUpperCase().replaceAll('-', '_')}`] = value;
  }
  return { env: merged, rest };
}

/**
 * A sim provider's command line: its `--sim-*` flags and CAPSTAN_SIM_* variables read by `read`, the rest left
 * for the service options. A setting it cannot use is printed once (exit code 2) and undefined returned.
 */
export function simCommandLine<T>(
  service: string,
  argv: readonly string[],
  read: (env: NodeJS.ProcessEnv) => T,
): { options: T; rest: string[] } | undefined {
  try {
    const { env, rest } = extractSimFlags(argv);
    return { options: read(env), rest };
  } catch (error) {
    if (!(error instanceof SimError)) throw error;
    process.stderr.write(`capstan-${service}: ${error.message}\n`);
    process.exitCode = 2;
    return undefined;
  }
}
