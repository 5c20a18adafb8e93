import { createServer } from 'node:net';
import { ephemeralPortRange, freePort } from './ports.js';

describe('freePort', () => {
  it("chooses a port below the ephemeral range, which outgoing connections cannot take before it is bound, and the sim's endpoint range", async () => {
    expect(ephemeralPortRange().low).toBeGreaterThan(20_000);
    const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(20_000);
    }
    // And it is free: something can listen on it.
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(ports[0], '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});
