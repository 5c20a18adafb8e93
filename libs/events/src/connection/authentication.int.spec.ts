import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/transport-node';
import { createCertificateAuthority, issueClientCertificate, issueServerCertificate } from '@capstan/pki';
import { PrivateNatsServer } from '../testing/private-nats-server.js';
import { EventBusConnection } from './event-bus-connection.js';
import { type NatsConnectionOptions } from './connection-options.js';

/** Connects, checks JetStream answers, closes; rejects when the server refuses. */
async function connectAndUse(options: NatsConnectionOptions): Promise<string> {
  // A refusal comes from the server at once; the timeouts only bound a connect and the first JetStream API request on
  // a loaded machine (the connect's 1 s, then the JetStream request's default 5 s, timed out under the full suite).
  const connection = await EventBusConnection.connect({
    ...options,
    connectTimeoutMs: 10_000,
    jetStreamTimeoutMs: 15_000,
  });
  try {
    await (await connection.jsm()).getAccountInfo();
    return connection.state;
  } finally {
    await connection.close();
  }
}

describe('NATS authentication and TLS against a real server', () => {
  const servers: PrivateNatsServer[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'capstan-nats-tls-'));
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.remove()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates with user/password and with an nkey seed', async () => {
    const user = nkeys.createUser();
    const seed = new TextDecoder().decode(user.getSeed());
    const server = await PrivateNatsServer.start({
      config: `authorization { users = [ { user: alice, password: "s3cret" }, { nkey: ${user.getPublicKey()} } ] }`,
      probe: { user: 'alice', pass: 's3cret' },
    });
    servers.push(server);
    await expect(connectAndUse({ servers: server.url, user: 'alice', password: 's3cret' })).resolves.toBe(
      'connected',
    );
    await expect(connectAndUse({ servers: server.url, nkeySeed: seed })).resolves.toBe('connected');
    await expect(connectAndUse({ servers: server.url, user: 'alice', password: 'wrong' })).rejects.toThrow();
    await expect(
      connectAndUse({
        servers: server.url,
        nkeySeed: new TextDecoder().decode(nkeys.createUser().getSeed()),
      }),
    ).rejects.toThrow();
    await expect(connectAndUse({ servers: server.url })).rejects.toThrow();
  });

  it('authenticates with a token', async () => {
    const server = await PrivateNatsServer.start({
      config: 'authorization { token: "t0ken" }',
      probe: { token: 't0ken' },
    });
    servers.push(server);
    await expect(connectAndUse({ servers: server.url, token: 't0ken' })).resolves.toBe('connected');
    await expect(connectAndUse({ servers: server.url, token: 'other' })).rejects.toThrow();
  });

  it('connects over mutual TLS with a CA file and a client certificate', async () => {
    const ca = await createCertificateAuthority({ commonName: 'nats-test-ca' });
    const serverCert = await issueServerCertificate(ca, {
      commonName: 'nats',
      ipAddresses: ['127.0.0.1'],
      dnsNames: ['localhost'],
    });
    const clientCert = await issueClientCertificate(ca, { commonName: 'capstan-test' });
    const stranger = await issueClientCertificate(
      await createCertificateAuthority({ commonName: 'other-ca' }),
      {
        commonName: 'stranger',
      },
    );
    const file = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      return path;
    };
    const paths = {
      ca: file('ca.pem', ca.certPem),
      serverCert: file('server.pem', serverCert.certPem),
      serverKey: file('server-key.pem', serverCert.keyPem),
      clientCert: file('client.pem', clientCert.certPem),
      clientKey: file('client-key.pem', clientCert.keyPem),
      strangerCert: file('stranger.pem', stranger.certPem),
      strangerKey: file('stranger-key.pem', stranger.keyPem),
    };
    const tlsServer = await PrivateNatsServer.start({
      config: `tls { cert_file: "${paths.serverCert}", key_file: "${paths.serverKey}", ca_file: "${paths.ca}", verify: true }`,
      probe: { tls: { caFile: paths.ca, certFile: paths.clientCert, keyFile: paths.clientKey } },
    });
    servers.push(tlsServer);
    await expect(
      connectAndUse({
        servers: tlsServer.url,
        tls: { caFile: paths.ca, certFile: paths.clientCert, keyFile: paths.clientKey },
      }),
    ).resolves.toBe('connected');
    await expect(connectAndUse({ servers: tlsServer.url, tls: { caFile: paths.ca } })).rejects.toThrow();
    await expect(
      connectAndUse({
        servers: tlsServer.url,
        tls: { caFile: paths.ca, certFile: paths.strangerCert, keyFile: paths.strangerKey },
      }),
    ).rejects.toThrow();
  });
});
