import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onPath } from './binaries.js';
import { TestEnvironmentError } from './errors.js';
import { writeCniConfig } from './node-network.js';
import { startProcess, stopPid, waitUntilReady, type ManagedProcess } from './processes.js';

const execFileAsync = promisify(execFile);

/** The pod sandbox image: built here (tools/pause), since registry.k8s.io cannot be reached. */
export const PAUSE_IMAGE = 'capstan.dev/pause:1';

export interface Containerd {
  /** The CRI endpoint for the kubelet (`unix://...`). */
  endpoint: string;
  socketPath: string;
  process: ManagedProcess;
  /** Imports a `docker save` (or OCI) archive into the namespace the CRI plugin uses, unpacked for overlayfs. */
  importImages(archivePath: string): Promise<void>;
  stop(): Promise<void>;
}

export interface StartContainerdOptions {
  /** The node's folder: containerd's root, state, socket and the CNI configuration go under it. */
  dir: string;
  track: (process: ManagedProcess) => ManagedProcess;
  /** It outlives this process (`npm run env:up -- --node`). */
  detached?: boolean;
}

function containerdBinary(name: 'containerd' | 'ctr'): string {
  const found = onPath(name) ?? (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined);
  if (!found) {
    throw new TestEnvironmentError(
      `${name} was not found. The real node needs Debian's containerd, runc and containernetworking-plugins ` +
        '(`bash scripts/setup.sh --for-tests` installs them as root, with the Docker engine: apt-get install containerd runc containernetworking-plugins docker.io).',
      { binary: name },
    );
  }
  return found;
}

/**
 * The config of the node's own containerd: its own root, state and socket (nothing shared with a Docker engine's
 * containerd), the CRI plugin with runc under cgroupfs, the pod CNI network, and the sandbox image built here.
 * `restrict_oom_score_adj`: the sandbox this runs in lacks CAP_SYS_RESOURCE, so containers may not lower their OOM score.
 */
function containerdConfig(dir: string): string {
  const quote = (value: string) => JSON.stringify(value);
  return [
    'version = 2',
    `root = ${quote(join(dir, 'root'))}`,
    `state = ${quote(join(dir, 'state'))}`,
    'disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
    '[grpc]',
    `  address = ${quote(join(dir, 'containerd.sock'))}`,
    '[ttrpc]',
    `  address = ${quote(join(dir, 'containerd.sock.ttrpc'))}`,
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${quote(join(dir, 'opt'))}`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = ${quote(PAUSE_IMAGE)}`,
    '  restrict_oom_score_adj = true',
    '  disable_apparmor = true',
    '  stream_server_address = "127.0.0.1"',
    '  [plugins."io.containerd.grpc.v1.cri".containerd]',
    '    snapshotter = "overlayfs"',
    '    default_runtime_name = "runc"',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '      runtime_type = "io.containerd.runc.v2"',
    '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '        SystemdCgroup = false',
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    '    bin_dir = "/usr/lib/cni"',
    `    conf_dir = ${quote(join(dir, 'cni'))}`,
    '',
  ].join('\n');
}

export async function startContainerd(options: StartContainerdOptions): Promise<Containerd> {
  const containerd = containerdBinary('containerd');
  const ctr = containerdBinary('ctr');
  const dir = options.dir;
  for (const sub of ['root', 'state', 'cni', 'opt', 'cni-ipam'])
    mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
  writeCniConfig(join(dir, 'cni'), join(dir, 'cni-ipam'));
  const configPath = join(dir, 'containerd.toml');
  writeFileSync(configPath, containerdConfig(dir));
  const socketPath = join(dir, 'containerd.sock');
  const proc = options.track(
    startProcess({
      name: 'containerd',
      command: containerd,
      args: ['--config', configPath, '--log-level', 'warn'],
      logFile: join(dir, 'containerd.log'),
      detached: options.detached,
    }),
  );
  const run = (args: string[]) =>
    execFileAsync(ctr, ['--address', socketPath, '--namespace', 'k8s.io', '--timeout', '120s', ...args], {
      maxBuffer: 16 * 1024 * 1024,
      timeout: 300_000,
    });
  await waitUntilReady(
    proc,
    'containerd',
    async () => (await run(['version'])).stdout.includes('Server'),
    30_000,
  );
  return {
    endpoint: `unix://${socketPath}`,
    socketPath,
    process: proc,
    importImages: async (archivePath) => {
      try {
        await run(['images', 'import', '--snapshotter', 'overlayfs', archivePath]);
      } catch (error) {
        throw new TestEnvironmentError(
          `containerd could not import ${archivePath}: ${(error as { stderr?: string }).stderr ?? String(error)}`,
          {
            archivePath,
          },
        );
      }
    },
    stop: () => stopPid(proc.pid, 10_000),
  };
}

/**
 * The container shims a node's containerd started (they outlive containerd by design, and a killed run leaves them):
 * each names its containerd's socket on its command line, so only the shims of `socketPath` are found.
 */
export function containerShimPids(socketPath: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine = '';
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (commandLine.startsWith('/usr/bin/containerd-shim') && commandLine.includes(socketPath))
      pids.push(Number(entry));
  }
  return pids;
}

/** Stops the container shims of `socketPath`'s containerd. */
export async function stopContainerShims(socketPath: string): Promise<void> {
  await Promise.all(containerShimPids(socketPath).map((pid) => stopPid(pid, 2000)));
}
