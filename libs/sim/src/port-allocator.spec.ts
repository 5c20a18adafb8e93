import { createServer, type Server } from 'node:net';
import { isSimError } from './errors.js';
import { isLocalHost, PortAllocator, portIsFree } from './port-allocator.js';

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
    while (!(await Promise.all([0, 1].map((i) => portIsFree('127.0.0.1', base + i)))).every(Boolean))
      base += 2;
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

  it("allocates on a Service's address without binding there: the endpoints are served by another pod", async () => {
    // 192.0.2.10 (TEST-NET-1) is on no interface of this machine: before, every port counted as taken (NoFreePort).
    const serviceAddress = '192.0.2.10';
    expect(isLocalHost(serviceAddress)).toBe(false);
    const allocator = new PortAllocator({ min: 16443, max: 16445 }, serviceAddress);
    const inUse = new Set([16444]);
    const first = await allocator.allocate(inUse);
    const second = await allocator.allocate(inUse);
    expect([first, second].sort()).toEqual([16443, 16445]);
    let refused: unknown;
    await allocator.allocate(inUse).catch((error: unknown) => (refused = error));
    expect(isSimError(refused, 'NoFreePort')).toBe(true);
  });

  it('treats its own interface addresses, the wildcard and names as this host', () => {
    const interfaces = {
      eth0: [
        {
          address: '10.213.64.6',
          netmask: '255.255.192.0',
          family: 'IPv4' as const,
          mac: '00:00:00:00:00:00',
          internal: false,
          cidr: '10.213.64.6/18',
        },
      ],
    };
    expect(isLocalHost('10.213.64.6', interfaces)).toBe(true);
    expect(isLocalHost('10.96.182.95', interfaces)).toBe(false);
    expect(isLocalHost('0.0.0.0', interfaces)).toBe(true);
    expect(isLocalHost('sim.example', interfaces)).toBe(true);
  });
});
