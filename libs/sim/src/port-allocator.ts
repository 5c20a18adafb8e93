import { randomInt } from 'node:crypto';
import { isIP, createServer } from 'node:net';
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

/**
 * Allocates control plane endpoint ports from a range: never one another SimCluster records, never one
 * something on this host listens on. Allocations are recorded in the SimCluster itself
 * (`spec.controlPlaneEndpoint`), so a restart does not change them; the reservations here only cover the
 * moment between choosing a port and the cache showing it.
 */
export class PortAllocator {
  private readonly reserved = new Set<number>();

  constructor(
    private readonly range: { min: number; max: number },
    private readonly host: string,
  ) {}

  async allocate(inUse: ReadonlySet<number>): Promise<number> {
    const size = this.range.max - this.range.min + 1;
    const start = randomInt(size);
    const bindHost = isIP(this.host) !== 0 ? this.host : '0.0.0.0';
    for (let i = 0; i < size; i++) {
      const port = this.range.min + ((start + i) % size);
      if (inUse.has(port) || this.reserved.has(port)) continue;
      if (!(await portIsFree(bindHost, port))) continue;
      this.reserved.add(port);
      return port;
    }
    throw new SimError(
      `no free port left in ${this.range.min}-${this.range.max} on ${this.host}`,
      'NoFreePort',
      { min: this.range.min, max: this.range.max },
    );
  }

  release(port: number): void {
    this.reserved.delete(port);
  }
}
