import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BootstrapDataError, K3S_CONFIG_PATH, type ParsedFile } from '@capstan/k3s-bootstrap';
import { HostRoot, readBeneath, writeBeneath } from '@capstan/node-agent';

/** Where the sim writes the `at` of the install it applied (K3s restarted with it); install.sh waits for it. */
export const SIM_INSTALL_APPLIED_PATH = '/var/lib/capstan/sim/install-applied';
/** How long the stand-in install.sh waits for the sim to restart K3s, as the real one waits for systemd. */
export const SIM_INSTALL_RESTART_TIMEOUT_SECONDS = 120;

/** Where the sim's stand-in for K3s's install.sh records what it installed (a machine path). */
export const SIM_INSTALL_RECORD_PATH = '/var/lib/capstan/sim/install.json';
/** The Kubernetes minors the sim can run (one pinned kube-apiserver each), one per line (a machine path). */
export const SIM_AVAILABLE_MINORS_PATH = '/var/lib/capstan/sim/available-minors';
/** K3s reads these after config.yaml, in name order. */
export const K3S_CONFIG_DROP_IN_DIR = '/etc/rancher/k3s/config.yaml.d';

/** What the sim's install.sh recorded: the K3s release and role the machine now runs. */
export interface InstalledK3s {
  version: string;
  exec: string;
  /** When it was installed: a change restarts the machine's K3s even with the same version. */
  at: string;
}

/** The largest K3s config file or install record the sim reads from a machine (the tenant controls them). */
const MAX_MACHINE_CONFIG_BYTES = 1024 * 1024;

/**
 * A machine file the sim reads on the management host: never through a symbolic link (a machine's instructions can
 * plant one pointing at a host file), never more than the limit.
 */
const readMachineFile = (root: string, machinePath: string) =>
  readBeneath(new HostRoot(root), machinePath, MAX_MACHINE_CONFIG_BYTES).toString('utf8');

/**
 * Runs the `write_files` of a machine's bootstrap data on the sim host: each file below the machine's own directory
 * (its filesystem root), with its mode (owners are root's on the sim, as they are on a real host), never through a
 * symbolic link the machine holds (a reboot finds what its instructions left).
 */
export function writeMachineFiles(root: string, files: readonly ParsedFile[]): void {
  const host = new HostRoot(root);
  for (const file of files) {
    if (file.path.split('/').includes('..')) continue; // never outside the machine's root
    writeBeneath(host, file.path, file.content, file.permissions ? parseInt(file.permissions, 8) : 0o644);
  }
}

/**
 * The sim's stand-in for get.k3s.io's install.sh, written where the bootstrap data and plans run it: it checks the
 * wanted release against the minors the sim can run, records `INSTALL_K3S_VERSION` / `INSTALL_K3S_EXEC` in
 * `install.json`, and the sim runtime restarts the machine's K3s with it (the API server binary of that minor and
 * the arguments of config.yaml and config.yaml.d/*.yaml), as the real script restarts the k3s service.
 */
export function writeSimInstaller(
  root: string,
  scriptPath: string,
  booted: { version: string; exec: string },
  availableMinors: readonly string[],
): void {
  const script = `#!/bin/sh
# Capstan sim: stands in for get.k3s.io's install.sh on a simulated host (docs/sim.md).
set -eu
version="\${INSTALL_K3S_VERSION:?INSTALL_K3S_VERSION is required}"
exec_role="\${INSTALL_K3S_EXEC:-${booted.exec}}"
minor=$(printf '%s' "$version" | sed -n 's/^v\\([0-9]*\\.[0-9]*\\)\\..*/\\1/p')
if ! grep -qx "$minor" "$CAPSTAN_HOST_ROOT${SIM_AVAILABLE_MINORS_PATH}"; then
  echo "k3s $version is not available on this host (minors: $(tr '\\n' ' ' < "$CAPSTAN_HOST_ROOT${SIM_AVAILABLE_MINORS_PATH}"))" >&2
  exit 1
fi
record="$CAPSTAN_HOST_ROOT${SIM_INSTALL_RECORD_PATH}"
mkdir -p "$(dirname "$record")"
at="$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)"
printf '{"version":"%s","exec":"%s","at":"%s"}\\n' "$version" "$exec_role" "$at" > "$record.tmp"
mv "$record.tmp" "$record"
echo "k3s $version installed; restarting k3s-$exec_role"
# The real script returns once systemd restarted k3s; the sim acknowledges the restart in install-applied.
applied="$CAPSTAN_HOST_ROOT${SIM_INSTALL_APPLIED_PATH}"
waited=0
while [ "$(cat "$applied" 2>/dev/null)" != "$at" ]; do
  if [ "$waited" -ge ${SIM_INSTALL_RESTART_TIMEOUT_SECONDS * 10} ]; then
    echo "k3s-$exec_role did not restart within ${SIM_INSTALL_RESTART_TIMEOUT_SECONDS}s" >&2
    exit 1
  fi
  sleep 0.1
  waited=$((waited + 1))
done
echo "k3s-$exec_role restarted"
`;
  const host = new HostRoot(root);
  writeBeneath(host, scriptPath, script, 0o755);
  writeBeneath(host, SIM_AVAILABLE_MINORS_PATH, `${availableMinors.join('\n')}\n`, 0o644);
  if (readInstalledK3s(root) === undefined) {
    writeBeneath(host, SIM_INSTALL_RECORD_PATH, JSON.stringify({ ...booted, at: 'boot' }), 0o644);
  }
}

export function readInstalledK3s(root: string): InstalledK3s | undefined {
  try {
    const parsed = JSON.parse(readMachineFile(root, SIM_INSTALL_RECORD_PATH)) as Partial<InstalledK3s>;
    if (typeof parsed.version !== 'string' || typeof parsed.exec !== 'string' || typeof parsed.at !== 'string') {
      return undefined;
    }
    return parsed as InstalledK3s;
  } catch {
    return undefined;
  }
}

/**
 * The machine's K3s configuration as K3s reads it: config.yaml, then every config.yaml.d/*.yaml in name order;
 * a later file's key replaces an earlier one, and a key ending in `+` appends to the list (K3s's merge rules).
 * Unreadable drop-ins are skipped, as K3s would fail on them and keep the old process.
 */
export function readMachineK3sConfig(root: string): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  const apply = (text: string) => {
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch {
      return;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return;
    for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
      if (key.endsWith('+')) {
        const base = key.slice(0, -1);
        const existing = merged[base];
        const list = Array.isArray(existing) ? existing : existing === undefined ? [] : [existing];
        merged[base] = [...list, ...(Array.isArray(value) ? value : [value])];
      } else {
        merged[key] = value;
      }
    }
  };
  try {
    apply(readMachineFile(root, K3S_CONFIG_PATH));
  } catch {
    /* no config: K3s runs with its defaults */
  }
  let dropIns: string[] = [];
  try {
    dropIns = readdirSync(new HostRoot(root).resolve(K3S_CONFIG_DROP_IN_DIR)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'));
  } catch {
    /* none */
  }
  for (const file of dropIns.sort()) {
    try {
      apply(readMachineFile(root, join(K3S_CONFIG_DROP_IN_DIR, file)));
    } catch {
      /* unreadable: skipped */
    }
  }
  return merged;
}

/**
 * The kube-apiserver flags a machine's K3s config may pass to the workload API server the sim runs for it. That
 * process runs on the management host: a flag naming files, storage, listeners, authentication, authorization or
 * admission would reach the host or the management etcd (issue 32, finding 4). These only tune the server itself.
 */
export const SIM_KUBE_APISERVER_FLAGS: ReadonlySet<string> = new Set([
  'allow-privileged',
  'audit-log-maxage',
  'audit-log-maxbackup',
  'audit-log-maxsize',
  'default-not-ready-toleration-seconds',
  'default-unreachable-toleration-seconds',
  'delete-collection-workers',
  'enable-priority-and-fairness',
  'event-ttl',
  'goaway-chance',
  'max-mutating-requests-inflight',
  'max-requests-inflight',
  'min-request-timeout',
  'profiling',
  'request-timeout',
  'service-node-port-range',
  'shutdown-delay-duration',
  'v',
  'watch-cache',
  'watch-cache-sizes',
]);

/**
 * `kube-apiserver-arg` of a merged K3s config, as `--name=value` arguments. A flag outside SIM_KUBE_APISERVER_FLAGS
 * is refused with a BootstrapDataError naming it (never its value): the server is not started with it.
 */
export function kubeApiserverArgsOf(config: Record<string, unknown>): string[] {
  const raw = config['kube-apiserver-arg'];
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list.map((arg: unknown, index) => {
    const field = `${K3S_CONFIG_PATH}:kube-apiserver-arg[${index}]`;
    const match = typeof arg === 'string' ? /^-{0,2}([A-Za-z0-9][-A-Za-z0-9]*)(=.*)?$/.exec(arg) : null;
    if (!match) throw new BootstrapDataError(`bootstrap data: ${field} is not name[=value]`, 'InvalidField', field);
    if (!SIM_KUBE_APISERVER_FLAGS.has(match[1]!)) {
      throw new BootstrapDataError(
        `bootstrap data: ${field} sets --${match[1]}, which the sim does not pass to the kube-apiserver it runs on the management host (allowed: ${[...SIM_KUBE_APISERVER_FLAGS].join(', ')})`,
        'InvalidField',
        field,
      );
    }
    return `--${match[1]}${match[2] ?? ''}`;
  });
}

/** The sim restarted the machine's K3s with the install recorded at `at`: the waiting install.sh returns. */
export function acknowledgeInstall(root: string, at: string): void {
  writeBeneath(new HostRoot(root), SIM_INSTALL_APPLIED_PATH, at, 0o644);
}
