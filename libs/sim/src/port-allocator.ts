import { randomInt } from 'node:crypto';
import { isIP, createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { SimError } from './errors.js';

/** Whether a TCP port can be bound on `host` right now. */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Binds the port and keeps it bound: the host-wide reservation of a port; undefined when it is taken. */
function holdPort(host: string, port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

/**
 * Whether `host` names this machine: an address of one of its interfaces, the wildcard or a name (bound as the
 * wildcard). A Service's address is not: the endpoints are served elsewhere (deploy/'s machine-provider pod).
 */
export function isLocalHost(host: string, interfaces = networkInterfaces()): boolean {
  if (isIP(host) === 0 || host === '0.0.0.0' || host === '::') return true;
  return Object.values(interfaces).some((addresses) => addresses?.some((a) => a.address === host));
}

/**
 * Allocates control plane endpoint ports from a range: never one another SimCluster records, never one
 * something on this host listens on. Allocations are recorded in the SimCluster itself
 * (`spec.controlPlaneEndpoint`), so a restart does not change them. Between choosing a port and every cache
 * showing it, the port is held bound: replicas of the provider on one host (sharded, allocating for different
 * clusters at once) then never choose the same one, as the second finds it taken. When the endpoint host is not this
 * machine (a Service in front of the machine-provider's pod), there is nothing to bind here and one leader-elected
 * allocator is the only one: its reservations and the recorded allocations suffice.
 */
export class PortAllocator {
  private readonly reserved = new Set<number>();
  private readonly holds = new Map<number, Server>();

  private readonly holdsOnHost: boolean;

  constructor(
    private readonly range: { min: number; max: number },
    private readonly host: string,
    interfaces = networkInterfaces(),
  ) {
    this.holdsOnHost = isLocalHost(host, interfaces);
  }

  async allocate(inUse: ReadonlySet<number>): Promise<number> {
    const size = this.range.max - this.range.min + 1;
    const start = randomInt(size);
    const bindHost = isIP(this.host) !== 0 ? this.host : '0.0.0.0';
    for (let i = 0; i < size; i++) {
      const port = this.range.min + ((start + i) % size);
      if (inUse.has(port) || this.reserved.has(port)) continue;
      if (this.holdsOnHost) {
        const hold = await holdPort(bindHost, port);
        if (!hold) continue;
        this.holds.set(port, hold);
      }
      this.reserved.add(port);
      return port;
    }
    throw new SimError(
      `no free port left in ${this.range.min}-${this.range.max} on ${this.host}`,
      'NoFreePort',
      { min: this.range.min, max: this.range.max },
    );
  }

  /**
   * The allocation is written: the port stays held a little longer (other replicas' caches lag the write by
   * milliseconds), then it is free for the API server that will serve it.
   */
  recorded(port: number, graceMs = 300): void {
    const hold = this.holds.get(port);
    if (!hold) return;
    this.holds.delete(port);
    setTimeout(() => hold.close(), graceMs).unref();
  }

  /** The port is not used after all (the write failed) or its SimCluster is gone. */
  release(port: number): void {
    this.reserved.delete(port);
    this.holds.get(port)?.close();
    this.holds.delete(port);
  }
}
