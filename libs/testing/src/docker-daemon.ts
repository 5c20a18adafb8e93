import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { executable, onPath } from './binaries.js';
import { dockerAnswers, dockerSocketPath } from './docker-engine.js';
import { TestEnvironmentError } from './errors.js';
import { isAlive, sleep, startProcess, stopPid, tailLog, waitUntilReady } from './processes.js';
import { forgetProcesses, recordProcesses } from './reaper.js';
import { cacheRoot } from './repo.js';

/**
 * The project owns 10.214.0.0/16: its dockerd's default bridge takes the last /24 and every network it creates
 * (docker-compose's) a /24 from the rest, so neither collides with Docker's 172.17/16 defaults or the host's LAN.
 */
export const PROJECT_DOCKER_BRIDGE_IP = '10.214.255.1/24';
export const PROJECT_DOCKER_ADDRESS_POOL = 'base=10.214.0.0/16,size=24';

/** A unix socket path longer than this cannot be bound (sun_path is 108 bytes, less room for the NUL). */
const MAX_SOCKET_PATH = 107;

/** dockerd may wait up to its --shutdown-timeout (15 s) for containers before it exits. */
const DOCKERD_STOP_GRACE_MS = 20_000;

export interface DockerEngineOptions {
  /**
   * Leave a dockerd this call starts running after this process exits (default true): its image layers and build
   * cache are what make the next build fast, like the binary cache. false: it is recorded with the reaper, so the
   * next test run stops it if this one dies without calling stop().
   */
  keep?: boolean;
  /**
   * The project dockerd's state: images under data/, socket, pidfile and exec root under run/ (default
   * ~/.cache/capstan/docker). One project dockerd per host: two would both configure the docker0 bridge.
   */
  stateDir?: string;
  /** How long a dockerd this call starts may take to answer (default 60 s). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface DockerEngine {
  /** The engine's API socket: DOCKER_HOST=unix://<socketPath>. */
  readonly socketPath: string;
  /**
   * `existing`: an engine already answered on DOCKER_HOST or the default socket; `project`: the project's own dockerd,
   * started earlier; `started`: this call started the project's dockerd.
   */
  readonly origin: 'existing' | 'project' | 'started';
  /** Stops the dockerd when this call started it; otherwise does nothing (the engine is not ours to stop). */
  stop(): Promise<void>;
}

/** Where the project's dockerd keeps its images and its runtime files. */
export function projectDockerPaths(stateDir = join(cacheRoot(), 'docker')): {
  dataRoot: string;
  runDir: string;
  execRoot: string;
  pidFile: string;
  socketPath: string;
  logFile: string;
} {
  const runDir = join(stateDir, 'run');
  return {
    dataRoot: join(stateDir, 'data'),
    runDir,
    execRoot: join(runDir, 'exec'),
    pidFile: join(runDir, 'dockerd.pid'),
    socketPath: join(runDir, 'docker.sock'),
    logFile: join(stateDir, 'dockerd.log'),
  };
}

/**
 * A Docker engine to build and run images with: the one that answers on DOCKER_HOST (or the default socket) when
 * there is one, else the project's own dockerd, started once and reused by later calls and processes.
 */
export async function dockerEngine(options: DockerEngineOptions = {}): Promise<DockerEngine> {
  const log = options.log ?? (() => undefined);
  const existing = dockerSocketPath();
  if (existing && (await dockerAnswers(existing))) {
    return { socketPath: existing, origin: 'existing', stop: async () => undefined };
  }

  const paths = projectDockerPaths(options.stateDir);
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  // Two test files may ask at once: one starts dockerd, the other then finds it running.
  return withStartLock(paths.runDir, timeoutMs, async () => {
    const running = readPid(paths.pidFile);
    if (running !== undefined && isDockerd(running)) {
      // A project dockerd from an earlier call: it may still be starting, so give it the start-up time before failing.
      await waitForSocket(paths.socketPath, timeoutMs, paths.logFile, () => isAlive(running));
      return { socketPath: paths.socketPath, origin: 'project' as const, stop: async () => undefined };
    }
    // A pidfile naming a dead or recycled pid would make dockerd refuse to start.
    rmSync(paths.pidFile, { force: true });
    return startProjectDockerd(paths, options.keep ?? true, timeoutMs, log);
  });
}

/** Runs `start` holding run/start.lock; a lock older than the start-up time was left by a killed process. */
async function withStartLock<T>(runDir: string, timeoutMs: number, start: () => Promise<T>): Promise<T> {
  mkdirSync(runDir, { recursive: true });
  const lock = join(runDir, 'start.lock');
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > timeoutMs + 10_000) rmSync(lock, { force: true });
      else await sleep(100);
    }
  }
  try {
    return await start();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Stops the project's dockerd if one is running (e.g. to free its memory); its image cache stays on disk. */
export async function stopProjectDockerd(stateDir?: string): Promise<boolean> {
  const paths = projectDockerPaths(stateDir);
  const pid = readPid(paths.pidFile);
  if (pid === undefined || !isDockerd(pid)) return false;
  await stopPid(pid, DOCKERD_STOP_GRACE_MS);
  return true;
}

function findDockerd(): string {
  const found = onPath('dockerd') ?? ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find(executable);
  if (!found) {
    throw new TestEnvironmentError(
      'dockerd is not installed, and no Docker engine answers on ' +
        `${process.env['DOCKER_HOST'] ?? 'unix:///var/run/docker.sock'}. Install it (Debian: apt-get install docker.io) ` +
        'or point DOCKER_HOST at a running engine.',
      { dockerHost: process.env['DOCKER_HOST'] },
    );
  }
  return found;
}

async function startProjectDockerd(
  paths: ReturnType<typeof projectDockerPaths>,
  keep: boolean,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<DockerEngine> {
  const dockerd = findDockerd();
  if (process.getuid?.() !== 0) {
    // Rootless Docker needs its own setup (dockerd-rootless.sh, subuid ranges); the project does not do that.
    throw new TestEnvironmentError(
      'the project starts its own dockerd only as root; run as root or point DOCKER_HOST at a running Docker engine',
      { dockerd },
    );
  }
  if (paths.socketPath.length > MAX_SOCKET_PATH) {
    throw new TestEnvironmentError(
      `the project dockerd's socket path is too long for a unix socket (${paths.socketPath.length} > ${MAX_SOCKET_PATH} bytes); ` +
        'set XDG_CACHE_HOME to a shorter folder',
      { socketPath: paths.socketPath },
    );
  }
  mkdirSync(paths.dataRoot, { recursive: true });
  mkdirSync(paths.execRoot, { recursive: true });
  // A socket left by a dockerd that was killed would make the new one fail to bind.
  rmSync(paths.socketPath, { force: true });
  rmSync(paths.logFile, { force: true });
  log(`starting the project's dockerd (images in ${paths.dataRoot})`);
  // dockerd 20.10 starts a containerd of its own under the exec root, unless a containerd already answers on
  // /run/containerd/containerd.sock: then it uses that one (its "moby" namespace) and depends on it staying up.
  const proc = startProcess({
    name: 'dockerd',
    command: dockerd,
    args: [
      `--data-root=${paths.dataRoot}`,
      `--exec-root=${paths.execRoot}`,
      `--pidfile=${paths.pidFile}`,
      `--host=unix://${paths.socketPath}`,
      `--bip=${PROJECT_DOCKER_BRIDGE_IP}`,
      `--default-address-pool=${PROJECT_DOCKER_ADDRESS_POOL}`,
    ],
    logFile: paths.logFile,
    // Kept: its own session, so it outlives this process (and a test worker's process group).
    detached: keep,
  });
  if (!keep) recordProcesses([proc.pid], false);
  try {
    await waitUntilReady(proc, 'dockerd', () => dockerAnswers(paths.socketPath), timeoutMs);
  } catch (error) {
    await stopPid(proc.pid, DOCKERD_STOP_GRACE_MS);
    if (!keep) forgetProcesses([proc.pid]);
    throw error;
  }
  return {
    socketPath: paths.socketPath,
    origin: 'started',
    stop: async () => {
      await stopPid(proc.pid, DOCKERD_STOP_GRACE_MS);
      if (!keep) forgetProcesses([proc.pid]);
    },
  };
}

/** Waits for an already running dockerd's socket; fails with its log when it dies or never answers. */
async function waitForSocket(
  socketPath: string,
  timeoutMs: number,
  logFile: string,
  alive: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    if (existsSync(socketPath) && (await dockerAnswers(socketPath))) return;
    await sleep(200);
  }
  throw new TestEnvironmentError(
    `the project's dockerd (pidfile next to ${socketPath}) is running but does not answer:\n${tailLog(logFile)}`,
    { socketPath },
  );
}

function readPid(pidFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live dockerd (not a recycled pid now running something else). */
function isDockerd(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /(^|\/)dockerd$/.test(argv0);
  } catch {
    return false;
  }
}
