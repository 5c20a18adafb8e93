import { createServer, type Server } from 'node:net';
import { isSimError } from './errors.js';
import { PortAllocator, portIsFree } from './port-allocator.js';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('PortAllocator', () => {
  it('never hands out a port another SimCluster records, one it reserved, or one in use on the host', async () => {
    let base = 15000 + Math.floor(Math.random() * 1000) * 4;
    // Four consecutive ports nothing listens on, below the ephemeral range.
    while (!(await Promise.all([0, 1, 2, 3].map((i) => portIsFree('127.0.0.1', base + i)))).every(Boolean))
      base += 4;
    const range = { min: base, max: base + 3 };
    const occupied = await listen(base + 2);
    try {
      const allocator = new PortAllocator(range, '127.0.0.1');
      const first = await allocator.allocate(new Set([base]));
      const second = await allocator.allocate(new Set([base]));
      expect([first, second].sort()).toEqual([base + 1, base + 3]);
      let refused: unknown;
      await allocator.allocate(new Set([base])).catch((error: unknown) => (refused = error));
      expect(isSimError(refused, 'NoFreePort')).toBe(true);
      allocator.release(first);
      expect(await allocator.allocate(new Set([base]))).toBe(first);
      expect(await portIsFree('127.0.0.1', base + 2)).toBe(false);
    } finally {
      occupied.close();
    }
  });

  it('holds an allocated port on the host until it is recorded, so another replica never picks it meanwhile', async () => {
    let base = 16000 + Math.floor(Math.random() * 1000) * 2;
    while (!(await Promise.all([0, 1].map((i) => portIsFree('127.0.0.1', base + i)))).every(Boolean)) base += 2;
    const range = { min: base, max: base + 1 };
    // Two replicas: neither sees the other's allocation in its cache yet (both pass an empty in-use set).
    const first = new PortAllocator(range, '127.0.0.1');
    const second = new PortAllocator(range, '127.0.0.1');
    const a = await first.allocate(new Set());
    const b = await second.allocate(new Set());
    expect(a).not.toBe(b);
    expect(await portIsFree('127.0.0.1', a)).toBe(false);
    first.recorded(a, 50);
    second.release(b);
    expect(await portIsFree('127.0.0.1', b)).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    // Recorded and the grace over: free for the API server that serves the endpoint.
    expect(await portIsFree('127.0.0.1', a)).toBe(true);
  });
});
