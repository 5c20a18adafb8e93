import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@capstan/testing/local-host';
import { SimError } from './errors.js';
import { OwnedProcess } from './owned-process.js';
import { waitFor } from './wait.js';

/** The one etcd every workload API server of this provider keeps its cluster in, under a key prefix each. */
export interface SimEtcd {
  readonly url: string;
  /** True when the provider started it (and stops it on shutdown). */
  readonly owned: boolean;
  stop(): Promise<void>;
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
  return { url: url.replace(/\/+$/, ''), owned: false, stop: async () => undefined };
}

interface EtcdPorts {
  client: number;
  peer: number;
}

/**
 * Starts (or adopts, after a provider restart) the provider's own etcd in `dir`, on the ports it used
 * before when it can, so that API servers left running keep their etcd URL. Data stays in `dir` across
 * restarts.
 */
export async function startOwnedEtcd(binary: string, dir: string, timeoutMs = 60_000): Promise<SimEtcd> {
  const portsFile = join(dir, 'ports.json');
  let ports = readPorts(portsFile);
  for (let attempt = 0; attempt < 3; attempt++) {
    ports ??= { client: await freePort(), peer: await freePort() };
    writeFileSync(portsFile, JSON.stringify(ports));
    const url = `http://127.0.0.1:${ports.client}`;
    const peer = `http://127.0.0.1:${ports.peer}`;
    const etcd = new OwnedProcess({
      name: 'etcd',
      dir,
      command: binary,
      args: [
        '--name=capstan-sim',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=capstan-sim=${peer}`,
        // A simulation: losing the last writes on a host crash is acceptable, fsync latency is not.
        '--unsafe-no-fsync=true',
        '--quota-backend-bytes=8589934592',
        '--log-level=warn',
      ],
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
      return { url, owned: true, stop: () => etcd.stop() };
    } catch (error) {
      await etcd.stop();
      if (!/address already in use/i.test(etcd.tailLog())) throw error;
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
  let response: Response;
  try {
    response = await fetch(`${url}/v3/kv/deleterange`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new SimError(`etcd deleterange failed: ${(error as Error).message}`, 'EtcdRequestFailed', {
      prefix,
    });
  }
  if (!response.ok) {
    throw new SimError(`etcd deleterange answered ${response.status}`, 'EtcdRequestFailed', { prefix });
  }
  const result = (await response.json()) as { deleted?: string };
  return Number(result.deleted ?? 0);
}
