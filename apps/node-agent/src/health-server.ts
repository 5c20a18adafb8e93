import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** `/healthz` and `/metrics` on localhost only: the agent serves nothing to the network. */
export async function startHealthServer(port: number, registry: Registry, healthy: () => boolean): Promise<Server & { port: number }> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'stopping');
    } else if (req.url === '/metrics') {
      void registry.metrics().then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}
