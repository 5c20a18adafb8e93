import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where freePort chooses: above well-known and configured services, below the sim's endpoint range (20000-29999 by
 * default, libs/sim's options) and the kernel's ephemeral range (32768-60999 by default).
 */
const CHOSEN_PORTS = { min: 10_000, max: 19_999 };

/** The range the kernel takes the local ports of outgoing connections from (Linux; its default elsewhere). */
export function ephemeralPortRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low: low!, high: high! };
  } catch {
    // not Linux
  }
  return { low: 32_768, high: 60_999 };
}

/**
 * A TCP port free on `host` right now, chosen below the kernel's ephemeral range (CHOSEN_PORTS): a port the kernel
 * picks for listen(0) comes from that range, so between choosing it and binding it an outgoing connection can take it
 * as its local port (bench:upstream saw a service fail with EADDRINUSE that way while thousands of connections came
 * and went). The kernel's choice is the fallback when the ephemeral range starts that low or no port there is free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  if (ephemeralPortRange().low > CHOSEN_PORTS.max) {
    for (let attempt = 0; attempt < 32; attempt++) {
      const port = randomInt(CHOSEN_PORTS.min, CHOSEN_PORTS.max + 1);
      if (await isPortFree(port, host)) return port;
    }
  }
  return kernelChosenPort(host);
}

function kernelChosenPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a TCP port can be bound right now on `host` (every interface when not given). */
export function isPortFree(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host }, () => server.close(() => resolve(true)));
  });
}

/** Starts made of one thing whose chosen ports can be taken between choosing and binding them. */
export const PORT_START_ATTEMPTS = 3;

/**
 * Runs `start` (which chooses its ports anew each time) again while it fails because a port it chose was taken
 * before it bound it (`portTaken` says so of the error), PORT_START_ATTEMPTS times in all.
 */
export async function retryWhilePortTaken<T>(start: () => Promise<T>, portTaken: (error: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= PORT_START_ATTEMPTS || !portTaken(error)) throw error;
    }
  }
}
