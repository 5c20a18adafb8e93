import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { loadCertificateAuthority } from './certificate-authority.js';
import {
  CLUSTER_CERTIFICATE_PURPOSES,
  clusterCertificateSecrets,
  generateClusterCertificates,
  keyPairFromSecretData,
  type ClusterCertificates,
} from './cluster-certificates.js';
import { PkiError } from './errors.js';

describe('cluster certificates', () => {
  let certificates: ClusterCertificates;

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('holds four distinct CAs that load and a service account key pair', async () => {
    const cas = await Promise.all(
      (['ca', 'cca', 'proxy', 'etcd'] as const).map((purpose) =>
        loadCertificateAuthority(certificates[purpose], purpose),
      ),
    );
    const subjects = cas.map((ca) => new X509Certificate(ca.certPem).subject);
    expect(subjects).toEqual([
      'O=demo\nCN=k3s-server-ca',
      'O=demo\nCN=k3s-client-ca',
      'O=demo\nCN=k3s-request-header-ca',
      'O=demo\nCN=etcd-ca',
    ]);
    expect(new Set(cas.map((ca) => ca.keyPem)).size).toBe(4);

    const sa = certificates.sa;
    expect(sa.certPem).toContain('BEGIN PUBLIC KEY');
    const privateKey = createPrivateKey(sa.keyPem);
    expect(privateKey.asymmetricKeyType).toBe('rsa');
    const signature = sign('sha256', Buffer.from('token'), privateKey);
    expect(verify('sha256', Buffer.from('token'), createPublicKey(sa.certPem), signature)).toBe(true);
  });

  it('are stored in secrets named <cluster>-<purpose> as upstream', () => {
    const secrets = clusterCertificateSecrets('demo', certificates);
    expect(secrets.map((s) => s.name)).toEqual(['demo-ca', 'demo-cca', 'demo-proxy', 'demo-etcd', 'demo-sa']);
    for (const secret of secrets) {
      expect(secret.type).toBe('cluster.x-k8s.io/secret');
      expect(secret.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'demo' });
      expect(Object.keys(secret.stringData).sort()).toEqual(['tls.crt', 'tls.key']);
    }
    expect(CLUSTER_CERTIFICATE_PURPOSES).toHaveLength(secrets.length);
  });

  it('read back from the base64 data the API returns', () => {
    const [secret] = clusterCertificateSecrets('demo', certificates);
    const data = Object.fromEntries(
      Object.entries(secret!.stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    );
    expect(keyPairFromSecretData('demo-ca', data)).toEqual(certificates.ca);
  });

  it('name the secret and the missing key when one is absent', () => {
    const attempt = () =>
      keyPairFromSecretData('demo-ca', { 'tls.crt': Buffer.from('x').toString('base64') });
    expect(attempt).toThrow(PkiError);
    expect(attempt).toThrow('secret demo-ca has no tls.key');
    expect(() => keyPairFromSecretData('demo-ca', undefined)).toThrow('secret demo-ca has no tls.crt');
  });
});
