import { once } from 'node:events';
import { createSecureServer, type Http2SecureServer, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueServerCertificate } from '@capstan/pki';
import { UpstreamSessions } from './upstream-sessions.js';

// UpstreamSessions against a real HTTP/2 server over TLS that allows 3 concurrent streams per connection and keeps
// every stream open (as a watch) until the test ends it.
describe('UpstreamSessions', () => {
  let server: Http2SecureServer;
  let caPem: string;
  let authority: string;
  const held: ServerHttp2Stream[] = [];
  const serverSessions = new Set<ServerHttp2Session>();

  beforeAll(async () => {
    const ca = await createCertificateAuthority({ commonName: 'upstream-ca' });
    caPem = ca.certPem;
    const serving = await issueServerCertificate(ca, { commonName: 'upstream', ipAddresses: ['127.0.0.1'] });
    server = createSecureServer({ cert: serving.certPem, key: serving.keyPem, settings: { maxConcurrentStreams: 3 } });
    server.on('session', (session) => serverSessions.add(session));
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.write('open\n');
      held.push(stream);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    authority = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    for (const session of serverSessions) session.destroy();
    await closed;
  });

  const opened = async (sessions: UpstreamSessions) => {
    const stream = sessions.request({ ':path': '/watch' });
    const [headers] = (await once(stream, 'response')) as [IncomingHttpHeaders];
    expect(headers[':status']).toBe(200);
    return stream;
  };

  it("opens a session per server's stream limit, reuses freed room, and ends everything on close", async () => {
    const errors: Error[] = [];
    const sessions = new UpstreamSessions(authority, { ca: caPem }, (error) => errors.push(error));
    const streams = [await opened(sessions)];
    // The server's settings are in: two more fit the first session, the fourth needs a second.
    streams.push(await opened(sessions), await opened(sessions));
    expect(sessions.size).toBe(1);
    streams.push(await opened(sessions));
    expect(sessions.size).toBe(2);
    // A stream that ends frees room in the first session: the next request goes there.
    streams[0]!.destroy();
    await once(streams[0]!, 'close');
    // (Once the server has let go of it too: a Node server refuses a stream over its limit until then.)
    if (!held[0]!.destroyed) await once(held[0]!, 'close');
    streams.push(await opened(sessions));
    expect(sessions.size).toBe(2);

    sessions.close();
    expect(sessions.size).toBe(0);
    expect(streams.every((s) => s.destroyed)).toBe(true);
    expect(() => sessions.request({ ':path': '/after' })).toThrow('closed');
    expect(errors).toEqual([]);
  });

  it('takes no new stream on a session the server told to go away', async () => {
    const sessions = new UpstreamSessions(authority, { ca: caPem }, () => undefined);
    const first = await opened(sessions);
    const serverSession = held.at(-1)!.session!;
    serverSession.goaway();
    await once(first.session!, 'goaway');
    const second = await opened(sessions);
    expect(second.session).not.toBe(first.session);
    sessions.close();
  });
});
