import { createServer, Socket, type Server } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/** A TCP relay to the API server that can be frozen: the replica behind it is partitioned, not dead. */
export class FreezableRelay {
  private readonly sockets = new Set<Socket>();
  private frozen = false;
  private refusing = false;
  /** Connections refused while refusing. */
  refused = 0;
  constructor(private readonly server: Server) {}

  static async start(target: URL): Promise<{ relay: FreezableRelay; port: number }> {
    const server = createServer();
    const relay = new FreezableRelay(server);
    server.on('connection', (client) => {
      if (relay.frozen || relay.refusing) {
        if (relay.refusing) relay.refused++;
        client.destroy();
        return;
      }
      const upstream = new Socket();
      upstream.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        relay.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => relay.sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return { relay, port: typeof address === 'object' && address ? address.port : 0 };
  }

  /** Every open connection stops moving bytes and new ones are refused: requests hang, as in a partition. */
  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) s.pause();
  }

  /** The partition heals: the hung connections are cut (their requests fail and are retried) and new ones pass. */
  thaw(): void {
    this.frozen = false;
    for (const s of this.sockets) s.destroy();
  }

  /** Open connections are cut and new ones refused at once: every request fails fast. */
  refuse(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
  }

  /** New connections pass again after `refuse`: the server is back. */
  accept(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A copy of `kc` whose current cluster is reached through the relay on `port`. */
export function relayedKubeConfig(kc: KubeConfig, port: number): KubeConfig {
  const relayed = new KubeConfig();
  relayed.loadFromString(kc.exportConfig());
  const current = relayed.getCurrentCluster()!;
  relayed.clusters = relayed.clusters.map((c) => (c.name === current.name ? { ...c, server: `https://127.0.0.1:${port}` } : c));
  return relayed;
}
