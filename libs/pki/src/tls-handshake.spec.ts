import { KubeConfig, VersionApi } from '@kubernetes/client-node';
import { once } from 'node:events';
import { createServer, request, type RequestOptions, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { issueClientCertificate, issueServerCertificate, type IssuedCertificate } from './issue.js';
import { issueAdminKubeconfig } from './kubeconfig.js';

// Mutual TLS on loopback with Node's own TLS stack on both ends: proves the issued material is usable, not
// just well-formed. The server trusts only the client CA, clients trust only the server CA (K3s's split).
// It answers like an API server's /version, naming the client identity it saw.
describe('TLS handshake with issued certificates', () => {
  let serverCA: CertificateAuthority;
  let clientCA: CertificateAuthority;
  let admin: IssuedCertificate;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    [serverCA, clientCA] = await Promise.all([
      createCertificateAuthority({ commonName: 'k3s-server-ca' }),
      createCertificateAuthority({ commonName: 'k3s-client-ca' }),
    ]);
    const serving = await issueServerCertificate(serverCA, {
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
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            major: '1',
            minor: '34',
            gitVersion: `${peer.subject.CN}/${String(peer.subject.O)}`,
          }),
        );
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

  const identitySeen = (options: RequestOptions) =>
    new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/version', agent: false, ...options }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve((JSON.parse(body) as { gitVersion: string }).gitVersion));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  it('completes the handshake and the server sees the client identity', async () => {
    await expect(
      identitySeen({ ca: serverCA.certPem, cert: admin.certPem, key: admin.keyPem }),
    ).resolves.toBe('kubernetes-admin/system:masters');
  });

  it('verifies the server by DNS name too', async () => {
    const seen = identitySeen({
      host: 'localhost',
      ca: serverCA.certPem,
      cert: admin.certPem,
      key: admin.keyPem,
    });
    await expect(seen).resolves.toBe('kubernetes-admin/system:masters');
  });

  it('fails when the client does not trust the server CA', async () => {
    await expect(
      identitySeen({ ca: clientCA.certPem, cert: admin.certPem, key: admin.keyPem }),
    ).rejects.toMatchObject({
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('fails when the server name is not in the certificate', async () => {
    const seen = identitySeen({
      ca: serverCA.certPem,
      cert: admin.certPem,
      key: admin.keyPem,
      servername: 'elsewhere.example',
    });
    await expect(seen).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('is refused by the server when the client certificate comes from another CA', async () => {
    const stranger = await issueClientCertificate(serverCA, { commonName: 'intruder' });
    await expect(
      identitySeen({ ca: serverCA.certPem, cert: stranger.certPem, key: stranger.keyPem }),
    ).rejects.toThrow();
  });

  it('is refused by the server without a client certificate', async () => {
    await expect(identitySeen({ ca: serverCA.certPem })).rejects.toThrow();
  });

  it('gives client-node a working connection through an admin kubeconfig', async () => {
    const { kubeconfig } = await issueAdminKubeconfig({ serverCaPem: serverCA.certPem, clientCA }, 'demo', {
      host: '127.0.0.1',
      port,
    });
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);

    expect(kc.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${port}`);
    await expect(kc.makeApiClient(VersionApi).getCode()).resolves.toMatchObject({
      gitVersion: 'kubernetes-admin/system:masters',
    });
  });

  it('refuses an admin kubeconfig whose certificate the server CA signed', async () => {
    const { kubeconfig } = await issueAdminKubeconfig(serverCA, 'demo', `https://127.0.0.1:${port}`);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    await expect(kc.makeApiClient(VersionApi).getCode()).rejects.toThrow();
  });
});
