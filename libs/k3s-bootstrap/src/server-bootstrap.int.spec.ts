import {
  generateClusterCertificates,
  issueAdminKubeconfig,
  issueClientCertificate,
  issueServerCertificate,
  loadCertificateAuthority,
  type ClusterCertificates,
} from '@capstan/pki';
import {
  freePort,
  resolveControlPlaneBinaries,
  startLocalEnvironment,
  startProcess,
  stopPid,
  waitUntilReady,
  type LocalEnvironment,
  type ManagedProcess,
} from '@capstan/testing';
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderK3sCloudConfig } from './cloud-config.js';
import { parseK3sCloudConfig, requireServerTls } from './parse-cloud-config.js';

// What the sim's server machines do with bootstrap data, done with a real kube-apiserver: read the server
// TLS files from the rendered cloud-config, issue the serving and front-proxy certificates from those CAs
// (as K3s does on start), and serve. The admin kubeconfig of `<cluster>-kubeconfig` must then work, and the
// `<cluster>-sa` key must sign service account tokens.

function httpsStatus(url: string, tls: { ca: string; cert: string; key: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...tls, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a server machine serving the cluster API from its bootstrap data', () => {
  const clusterName = 'bootstrap-int';
  let workDir: string;
  let certificates: ClusterCertificates;
  let kubeconfig: string;
  let port: number;
  let apiserver: ManagedProcess | undefined;
  let privateEnvironment: LocalEnvironment | undefined;

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'capstan-bootstrap-int-'));
    const binaries = resolveControlPlaneBinaries();
    certificates = await generateClusterCertificates(clusterName);
    port = await freePort();
    const endpoint = { host: '127.0.0.1', port };

    const parsed = parseK3sCloudConfig(
      renderK3sCloudConfig({
        role: 'init-server',
        spec: { version: 'v1.34.1+k3s1', serverConfig: { serviceCIDR: '10.43.0.0/16' } },
        endpoint,
        token: randomBytes(16).toString('hex'),
        certificates,
      }),
    );
    const tls = requireServerTls(parsed);
    const [serverCA, requestHeaderCA] = await Promise.all([
      loadCertificateAuthority(tls.serverCA, 'server CA'),
      loadCertificateAuthority(tls.requestHeaderCA, 'request-header CA'),
    ]);
    const serving = await issueServerCertificate(serverCA, {
      commonName: 'kube-apiserver',
      dnsNames: [
        'localhost',
        'kubernetes',
        'kubernetes.default.svc',
        ...parsed.tlsSANs.filter((s) => s !== '127.0.0.1'),
      ],
      ipAddresses: ['127.0.0.1', '10.43.0.1'],
    });
    const proxyClient = await issueClientCertificate(requestHeaderCA, { commonName: 'system:auth-proxy' });

    const dir = join(workDir, 'tls');
    mkdirSync(dir);
    const files: Record<string, string> = {
      'client-ca.crt': tls.clientCA.certPem,
      'request-header-ca.crt': tls.requestHeaderCA.certPem,
      'service.key': tls.serviceAccountKeyPem,
      'serving.crt': serving.certPem + tls.serverCA.certPem,
      'serving.key': serving.keyPem,
      'proxy-client.crt': proxyClient.certPem,
      'proxy-client.key': proxyClient.keyPem,
    };
    for (const [name, content] of Object.entries(files))
      writeFileSync(join(dir, name), content, { mode: 0o600 });

    // The shared test etcd when the run has one (local processes); otherwise a private local environment.
    let etcdUrl = process.env['CAPSTAN_TEST_ETCD_URL'];
    if (!etcdUrl) {
      privateEnvironment = await startLocalEnvironment();
      etcdUrl = privateEnvironment.etcdUrl;
    }
    apiserver = startProcess({
      name: 'kube-apiserver',
      command: binaries.kubeApiserver,
      args: [
        `--etcd-servers=${etcdUrl}`,
        `--etcd-prefix=/capstan-bootstrap-int-${randomBytes(4).toString('hex')}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${port}`,
        `--cert-dir=${dir}`,
        `--tls-cert-file=${join(dir, 'serving.crt')}`,
        `--tls-private-key-file=${join(dir, 'serving.key')}`,
        `--client-ca-file=${join(dir, 'client-ca.crt')}`,
        `--service-account-key-file=${join(dir, 'service.key')}`,
        `--service-account-signing-key-file=${join(dir, 'service.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc',
        `--requestheader-client-ca-file=${join(dir, 'request-header-ca.crt')}`,
        '--requestheader-allowed-names=system:auth-proxy',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${join(dir, 'proxy-client.crt')}`,
        `--proxy-client-key-file=${join(dir, 'proxy-client.key')}`,
        '--authorization-mode=RBAC',
        '--service-cluster-ip-range=10.43.0.0/16',
        '--disable-admission-plugins=ServiceAccount',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
      ],
      logFile: join(workDir, 'kube-apiserver.log'),
    });

    const admin = await issueAdminKubeconfig(
      { serverCaPem: certificates.ca.certPem, clientCA: await loadCertificateAuthority(certificates.cca) },
      clusterName,
      endpoint,
    );
    kubeconfig = admin.kubeconfig;
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    const user = kc.getCurrentUser()!;
    const clientTls = {
      ca: certificates.ca.certPem,
      cert: Buffer.from(user.certData!, 'base64').toString(),
      key: Buffer.from(user.keyData!, 'base64').toString(),
    };
    await waitUntilReady(
      apiserver,
      'kube-apiserver',
      async () => (await httpsStatus(`https://127.0.0.1:${port}/readyz`, clientTls)) === 200,
      90_000,
    );
  });

  afterAll(async () => {
    if (apiserver) await stopPid(apiserver.pid);
    await privateEnvironment?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const client = () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    return kc;
  };

  it('authenticates the <cluster>-kubeconfig admin as kubernetes-admin in system:masters', async () => {
    const review = await client()
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      });
    expect(review.status?.userInfo?.username).toBe('kubernetes-admin');
    expect(review.status?.userInfo?.groups).toContain('system:masters');
    const namespaces = await client().makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain('default');
  });

  it('signs service account tokens with the <cluster>-sa key', async () => {
    const core = client().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({
      namespace: 'default',
      body: { metadata: { name: 'robot' } },
    });
    const tokenRequest = await core.createNamespacedServiceAccountToken({
      name: 'robot',
      namespace: 'default',
      body: { spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 600 } },
    });
    const token = tokenRequest.status?.token ?? '';
    expect(token).not.toBe('');
    const [header, payload, signature] = token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'RS256' });
    expect(
      verify(
        'sha256',
        Buffer.from(`${header}.${payload}`),
        createPublicKey(certificates.sa.certPem),
        Buffer.from(signature, 'base64url'),
      ),
    ).toBe(true);

    const asRobot = new KubeConfig();
    asRobot.loadFromOptions({
      clusters: [
        {
          name: clusterName,
          server: `https://127.0.0.1:${port}`,
          caData: Buffer.from(certificates.ca.certPem).toString('base64'),
        },
      ],
      users: [{ name: 'robot', token }],
      contexts: [{ name: 'robot', cluster: clusterName, user: 'robot' }],
      currentContext: 'robot',
    });
    const review = await asRobot.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(review.status?.userInfo?.username).toBe('system:serviceaccount:default:robot');
  });

  it('does not accept a client certificate signed by the server CA', async () => {
    const impostor = await issueAdminKubeconfig(
      await loadCertificateAuthority(certificates.ca),
      clusterName,
      {
        host: '127.0.0.1',
        port,
      },
    );
    const kc = new KubeConfig();
    kc.loadFromString(impostor.kubeconfig);
    await expect(kc.makeApiClient(CoreV1Api).listNamespace()).rejects.toMatchObject({ code: 401 });
  });
});
