import { once } from 'node:events';
import { createServer, request, type Server, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { issueClientCertificate, issueServerCertificate, type IssuedCertificate } from './issue.js';

// Mutual TLS on loopback between Node's own TLS stack on both ends: proves the issued material is usable,
// not just well-formed. The server trusts only the client CA, the client trusts only the server CA (K3s's split).
describe('TLS handshake with issued certificates', () => {
  let serverCA: CertificateAuthority;
  let clientCA: CertificateAuthority;
  let serving: IssuedCertificate;
  let admin: IssuedCertificate;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    [serverCA, clientCA] = await Promise.all([
      createCertificateAuthority({ commonName: 'k3s-server-ca' }),
      createCertificateAuthority({ commonName: 'k3s-client-ca' }),
    ]);
    serving = await issueServerCertificate(serverCA, {
      commonName: 'kube-apiserver',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
    });
    admin = await issueClientCertificate(clientCA, {
      commonName: 'kubernetes-admin',
      organizations: ['system:masters'],
    });
    server = createServer(
      {
        key: serving.keyPem,
        cert: serving.certPem,
        ca: clientCA.certPem,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(JSON.stringify({ user: peer.subject.CN, groups: peer.subject.O }));
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.close();
    await once(server, 'close');
  });

  const get = (options: RequestOptions) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/', method: 'GET', agent: false, ...options },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(body));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('completes the handshake and the server sees the client identity', async () => {
    const body = await get({ ca: serverCA.certPem, cert: admin.certPem, key: admin.keyPem });
    expect(JSON.parse(body)).toEqual({ user: 'kubernetes-admin', groups: 'system:masters' });
  });

  it('verifies the server by DNS name too', async () => {
    const body = await get({
      host: 'localhost',
      ca: serverCA.certPem,
      cert: admin.certPem,
      key: admin.keyPem,
    });
    expect(JSON.parse(body)).toMatchObject({ user: 'kubernetes-admin' });
  });

  it('fails when the client does not trust the server CA', async () => {
    await expect(get({ ca: clientCA.certPem, cert: admin.certPem, key: admin.keyPem })).rejects.toMatchObject(
      {
        code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      },
    );
  });

  it('fails when the server name is not in the certificate', async () => {
    await expect(
      get({ ca: serverCA.certPem, cert: admin.certPem, key: admin.keyPem, servername: 'elsewhere.example' }),
    ).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('is refused by the server when the client certificate comes from another CA', async () => {
    const stranger = await issueClientCertificate(serverCA, { commonName: 'intruder' });
    await expect(
      get({ ca: serverCA.certPem, cert: stranger.certPem, key: stranger.keyPem }),
    ).rejects.toThrow();
  });

  it('is refused by the server without a client certificate', async () => {
    await expect(get({ ca: serverCA.certPem })).rejects.toThrow();
  });
});
