import { createHash } from 'node:crypto';
import type { ConnectionTls } from './cluster-connection.js';
import { createHttpDispatcher, type HttpDispatcher } from './http-transport.js';

/** A reference to a pool shared by every client of one API server with the same TLS identity. */
export interface PoolLease {
  readonly dispatcher: HttpDispatcher;
  /** Gives the reference back; the last one closes the pool. Idempotent. */
  release(): Promise<void>;
}

interface SharedPool {
  dispatcher: HttpDispatcher;
  leases: number;
}

/**
 * Connection pools shared by clients that reach the same API server with the same TLS material, as client-go shares
 * one transport per TLS configuration (its `tlsTransportCache`): credentials that travel in headers (bearer tokens,
 * basic auth) do not change the connection, so clients that differ only in them use one pool and, over HTTP/2, one
 * connection. A process that hosts many identities of one cluster (the sim's in-process node agents and kubelets)
 * then holds a connection per API server instead of one per identity.
 */
export class SharedPools {
  private readonly pools = new Map<string, SharedPool>();

  lease(server: string, tls: ConnectionTls): PoolLease {
    const key = poolKey(server, tls);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { dispatcher: createHttpDispatcher(tls), leases: 0 };
      this.pools.set(key, pool);
    }
    pool.leases++;
    const leased = pool;
    let released = false;
    return {
      dispatcher: leased.dispatcher,
      release: async () => {
        if (released) return;
        released = true;
        leased.leases--;
        if (leased.leases > 0) return;
        if (this.pools.get(key) === leased) this.pools.delete(key);
        await closeDispatcher(leased.dispatcher);
      },
    };
  }

  /** Pools open now (for tests and admin pages). */
  get size(): number {
    return this.pools.size;
  }
}

/** The process's pools: every KubeClient leases from it. */
export const sharedPools = new SharedPools();

/**
 * Closes a pool: gracefully first, then destroyed after a second. Callers abort their own requests before (see
 * KubeClient.close): destroying a pool with HTTP/2 streams still open makes undici emit an 'error' no one listens to.
 */
async function closeDispatcher(dispatcher: HttpDispatcher): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    dispatcher.close().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1_000))),
  ]);
  clearTimeout(timer);
  if (!closed) await dispatcher.destroy().catch(() => undefined);
}

/** Hashed: the key holds the client's private key otherwise. */
function poolKey(server: string, tls: ConnectionTls): string {
  const origin = new URL(server).origin;
  const hash = createHash('sha256');
  for (const part of [origin, tls.ca, tls.cert, tls.key, String(tls.rejectUnauthorized), tls.servername]) {
    hash.update(part ?? '').update('\0');
  }
  return hash.digest('hex');
}
