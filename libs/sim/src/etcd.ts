import { execFile } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@capstan/testing/local-host';
import { SimError } from './errors.js';
import { postEtcdGateway } from './etcd-gateway.js';
import { OwnedProcess } from './owned-process.js';
import { waitFor } from './wait.js';

/** The one etcd every workload API server of this provider keeps its cluster in, under a key prefix each. */
export interface SimEtcd {
  readonly url: string;
  /** True when the provider started it (and stops it on shutdown). */
  readonly owned: boolean;
  /** `graceMs`: how long it gets after SIGTERM (a cluster reset kills, as K3s's killall does). */
  stop(graceMs?: number): Promise<void>;
  /** Whether its process still runs (an external etcd is taken to). */
  alive(): boolean;
}

export async function etcdHealthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    return response.ok && ((await response.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

/** An etcd given by URL (the test environment's, an operator's): used as is, never stopped. */
export function externalEtcd(url: string): SimEtcd {
  return { url: url.replace(/\/+$/, ''), owned: false, stop: async () => undefined, alive: () => true };
}

export interface EtcdPorts {
  client: number;
  peer: number;
}

/**
 * How a member that joined a running cluster was started (`cluster.json` next to its data): etcd reads the initial
 * cluster only on the first start of an empty data dir, but the same command line must come back for a member to be
 * adopted after a provider restart. Absent: a cluster of its own (`--initial-cluster-state=new`).
 */
export interface EtcdJoin {
  /** Every member, this one included, as `name=peerURL`. */
  initialCluster: string;
}

const portsFileIn = (dir: string) => join(dir, 'ports.json');
const joinFileIn = (dir: string) => join(dir, 'cluster.json');

export const peerUrlOf = (ports: EtcdPorts) => `http://127.0.0.1:${ports.peer}`;
export const clientUrlOf = (ports: EtcdPorts) => `http://127.0.0.1:${ports.client}`;

/** Records the ports a member will listen on, before it is added to a cluster (its peer URL is its identity). */
export function reservePorts(dir: string, ports: EtcdPorts): void {
  writeFileSync(portsFileIn(dir), JSON.stringify(ports));
}

/** The ports recorded for the member in `dir`. */
export function recordedPorts(dir: string): EtcdPorts | undefined {
  return readPorts(portsFileIn(dir));
}

/** Records how the member in `dir` joins its cluster (undefined: it starts a cluster of its own). */
export function recordJoin(dir: string, join: EtcdJoin | undefined): void {
  if (join) writeFileSync(joinFileIn(dir), JSON.stringify(join));
  else rmSync(joinFileIn(dir), { force: true });
}

function readJoin(dir: string): EtcdJoin | undefined {
  try {
    const parsed = JSON.parse(readFileSync(joinFileIn(dir), 'utf8')) as Partial<EtcdJoin>;
    return typeof parsed.initialCluster === 'string' ? { initialCluster: parsed.initialCluster } : undefined;
  } catch {
    return undefined;
  }
}

export interface OwnedEtcdOptions {
  /** The member's name (K3s names a server's member after its node). */
  name?: string;
  /** The backend quota: etcd refuses writes past it (NOSPACE), as K3s's default 2 GiB does. */
  quotaBackendBytes?: number;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Where an owned etcd in `dir` keeps its data. */
export const etcdDataDir = (dir: string) => join(dir, 'data');

/**
 * Starts (or adopts, after a provider restart) an etcd the provider owns in `dir` (its own, or a dedicated workload
 * cluster's), on the ports it used before when it can, so that API servers left running keep their etcd URL. Data
 * stays in `dir` across restarts.
 */
export async function startOwnedEtcd(
  binary: string,
  dir: string,
  options: OwnedEtcdOptions = {},
): Promise<SimEtcd> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const name = options.name ?? 'capstan-sim';
  const portsFile = portsFileIn(dir);
  let ports = readPorts(portsFile);
  const joined = readJoin(dir);
  for (let attempt = 0; attempt < 3; attempt++) {
    ports ??= { client: await freePort(), peer: await freePort() };
    writeFileSync(portsFile, JSON.stringify(ports));
    const url = clientUrlOf(ports);
    const peer = peerUrlOf(ports);
    const etcd = new OwnedProcess({
      name: 'etcd',
      dir,
      command: binary,
      args: [
        `--name=${name}`,
        `--data-dir=${etcdDataDir(dir)}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        ...(joined
          ? [`--initial-cluster=${joined.initialCluster}`, '--initial-cluster-state=existing']
          : [`--initial-cluster=${name}=${peer}`]),
        // A simulation: losing the last writes on a host crash is acceptable, fsync latency is not.
        '--unsafe-no-fsync=true',
        `--quota-backend-bytes=${options.quotaBackendBytes ?? 8 * 1024 ** 3}`,
        '--log-level=warn',
      ],
      env: options.env,
    });
    await etcd.start();
    try {
      await waitFor(() => etcdHealthy(url), {
        what: 'etcd',
        timeoutMs,
        exited: etcd.exited,
        details: () => etcd.tailLog(),
        reason: 'EtcdStartFailed',
      });
      return { url, owned: true, stop: (graceMs) => etcd.stop(graceMs), alive: () => etcd.alive() };
    } catch (error) {
      await etcd.stop();
      // A member that joined is known to the others by its peer URL: it cannot move to other ports.
      if (joined || !/address already in use/i.test(etcd.tailLog())) throw error;
      ports = undefined;
    }
  }
  throw new SimError('the sim etcd found no free port', 'EtcdStartFailed', { dir });
}

function readPorts(file: string): EtcdPorts | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<EtcdPorts>;
    return typeof parsed.client === 'number' && typeof parsed.peer === 'number'
      ? { client: parsed.client, peer: parsed.peer }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The first key after every key that starts with `prefix` (etcd's range end of a prefix). */
export function prefixRangeEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i]! += 1;
      return end.toString('latin1');
    }
  }
  return '\0';
}

/**
 * Deletes every key below `prefix/` through etcd's JSON gateway: what a workload cluster leaves in the
 * shared etcd once its last server is gone. Returns how many keys were deleted.
 */
export async function deleteEtcdPrefix(url: string, prefix: string): Promise<number> {
  const start = `${prefix.replace(/\/+$/, '')}/`;
  const body = {
    key: Buffer.from(start, 'utf8').toString('base64'),
    range_end: Buffer.from(prefixRangeEnd(start), 'latin1').toString('base64'),
  };
  const result = await postEtcdGateway<{ deleted?: string }>(url, '/v3/kv/deleterange', body, {
    what: 'deleterange',
    timeoutMs: 10_000,
    context: { prefix },
  });
  return Number(result.deleted ?? 0);
}

/**
 * Streams a snapshot of the etcd at `url` into `file` through etcd's JSON gateway (Maintenance.Snapshot: the
 * backend database followed by its SHA-256, which a restore checks). Written to a temporary name first: a snapshot
 * that failed half way never stands under `file`. Returns the size in bytes.
 */
export async function saveEtcdSnapshot(
  url: string,
  file: string,
  maxBytes: number,
  timeoutMs = 120_000,
): Promise<number> {
  let response: Response;
  try {
    response = await fetch(`${url}/v3/maintenance/snapshot`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new SimError(`etcd snapshot failed: ${(error as Error).message}`, 'EtcdRequestFailed', {});
  }
  if (!response.ok || !response.body) {
    throw new SimError(`etcd snapshot answered ${response.status}`, 'EtcdRequestFailed', {});
  }
  const partial = `${file}.partial`;
  const fd = openSync(partial, 'w', 0o600);
  let size = 0;
  let pending = '';
  const writeMessage = (line: string) => {
    if (line.trim() === '') return;
    const message = JSON.parse(line) as { result?: { blob?: string }; error?: { message?: string } };
    if (message.error)
      throw new SimError(
        `etcd snapshot failed: ${message.error.message ?? 'error'}`,
        'EtcdRequestFailed',
        {},
      );
    const blob = Buffer.from(message.result?.blob ?? '', 'base64');
    size += blob.length;
    if (size > maxBytes)
      throw new SimError(`etcd snapshot exceeds ${maxBytes} bytes`, 'EtcdRequestFailed', {});
    writeSync(fd, blob);
  };
  try {
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true });
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) writeMessage(line);
    }
    writeMessage(pending);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(partial, { force: true });
    if (error instanceof SimError) throw error;
    throw new SimError(`etcd snapshot failed: ${(error as Error).message}`, 'EtcdRequestFailed', {});
  }
  closeSync(fd);
  renameSync(partial, file);
  return size;
}

const execFileAsync = promisify(execFile);

/**
 * Replaces the data of the (stopped) owned etcd in `dir` with `snapshot`, as `k3s server --cluster-reset
 * --cluster-reset-restore-path` does: etcdutl checks the snapshot's SHA-256 (a truncated or corrupt file is refused
 * and the data stays as it was), builds a one-member cluster from it, and only then takes the old data's place (kept
 * as `data-old-<time>`, as K3s keeps `etcd-old-<time>`).
 */
export async function restoreEtcdSnapshot(
  etcdutl: string,
  dir: string,
  snapshot: string,
  name: string,
): Promise<void> {
  const staging = join(dir, 'data-restoring');
  rmSync(staging, { recursive: true, force: true });
  const ports = readPorts(portsFileIn(dir));
  const peerUrl = ports ? peerUrlOf(ports) : 'http://127.0.0.1:2380';
  try {
    await execFileAsync(
      etcdutl,
      [
        'snapshot',
        'restore',
        snapshot,
        `--data-dir=${staging}`,
        `--name=${name}`,
        `--initial-cluster=${name}=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
      ],
      { timeout: 120_000, maxBuffer: 1024 * 1024 },
    );
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    const reason = /integrity|hash|checksum|sha256|unexpected EOF|invalid|not a valid|database file/i.test(
      stderr,
    )
      ? 'the snapshot is corrupt or truncated (its checksum does not match)'
      : (stderr.trim().split('\n').pop() ?? (error as Error).message).slice(0, 300);
    throw new SimError(`restoring the etcd snapshot failed: ${reason}`, 'EtcdRestoreFailed', {});
  }
  const data = etcdDataDir(dir);
  // The data before the last restore stays (one copy: the sim's disk is the management host's).
  for (const entry of readdirSync(dir))
    if (entry.startsWith('data-old-')) rmSync(join(dir, entry), { recursive: true, force: true });
  if (existsSync(data)) renameSync(data, join(dir, `data-old-${Date.now()}`));
  renameSync(staging, data);
  // The restored member is a cluster of one: the members it joined are gone from its data.
  recordJoin(dir, undefined);
}
