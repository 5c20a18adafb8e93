import { KubeConfig } from '@kubernetes/client-node';
import { X509Certificate } from 'node:crypto';
import { createCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { CLUSTER_NAME_LABEL, CLUSTER_SECRET_TYPE } from './cluster-certificates.js';
import { PkiError } from './errors.js';
import { expiresWithin } from './expiry.js';
import {
  issueAdminKubeconfig,
  kubeconfigClientCertificate,
  kubeconfigSecret,
  renderKubeconfig,
} from './kubeconfig.js';
import { ONE_DAY_MS } from './validity.js';

describe('renderKubeconfig', () => {
  it('names cluster, user and context as upstream and loads in client-node', () => {
    const yaml = renderKubeconfig({
      clusterName: 'demo',
      server: 'https://10.0.0.1:6443',
      caPem: 'CA PEM\n',
      clientCertPem: 'CERT PEM\n',
      clientKeyPem: 'KEY PEM\n',
    });
    const kc = new KubeConfig();
    kc.loadFromString(yaml);

    expect(kc.getCurrentContext()).toBe('demo-admin@demo');
    expect(kc.getCurrentCluster()).toMatchObject({
      name: 'demo',
      server: 'https://10.0.0.1:6443',
      caData: Buffer.from('CA PEM\n').toString('base64'),
    });
    expect(kc.getCurrentUser()).toMatchObject({
      name: 'demo-admin',
      certData: Buffer.from('CERT PEM\n').toString('base64'),
      keyData: Buffer.from('KEY PEM\n').toString('base64'),
    });
    expect(yaml.startsWith('apiVersion: v1\n')).toBe(true);
  });

  it('is deterministic', () => {
    const input = {
      clusterName: 'c',
      server: 'https://h:1',
      caPem: 'a',
      clientCertPem: 'b',
      clientKeyPem: 'c',
    };
    expect(renderKubeconfig(input)).toBe(renderKubeconfig({ ...input }));
  });
});

describe('issueAdminKubeconfig', () => {
  let serverCA: CertificateAuthority;
  let clientCA: CertificateAuthority;

  beforeAll(async () => {
    [serverCA, clientCA] = await Promise.all([
      createCertificateAuthority({ commonName: 'k3s-server-ca' }),
      createCertificateAuthority({ commonName: 'k3s-client-ca' }),
    ]);
  });

  it('exposes the client certificate for the renewal check', async () => {
    const now = new Date('2032-03-01T00:00:00Z');
    const { kubeconfig, notAfter } = await issueAdminKubeconfig(
      { serverCaPem: serverCA.certPem, clientCA },
      'demo',
      { host: 'demo.example', port: 6443 },
      { now, validityMs: 365 * ONE_DAY_MS },
    );
    const certPem = kubeconfigClientCertificate(kubeconfig);

    expect(new X509Certificate(certPem).subject).toBe('O=system:masters\nCN=kubernetes-admin');
    expect(new Date(new X509Certificate(certPem).validTo).getTime()).toBe(notAfter.getTime());
    expect(expiresWithin(certPem, 180 * ONE_DAY_MS, now)).toBe(false);
    expect(expiresWithin(certPem, 180 * ONE_DAY_MS, new Date(now.getTime() + 200 * ONE_DAY_MS))).toBe(true);
    expect(expiresWithin(certPem, 0, new Date(now.getTime() + 400 * ONE_DAY_MS))).toBe(true);
  });

  it('renders an IPv6 endpoint in brackets', async () => {
    const { kubeconfig } = await issueAdminKubeconfig(clientCA, 'v6', { host: '::1', port: 6443 });
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    expect(kc.getCurrentCluster()?.server).toBe('https://[::1]:6443');
  });
});

describe('kubeconfigClientCertificate', () => {
  it('says what is missing without echoing the document', () => {
    const secretish = 'client-key-data: c2VjcmV0LWtleQ==';
    const attempt = () =>
      kubeconfigClientCertificate(
        `apiVersion: v1\ncontexts: []\nusers:\n  - name: x\n    user:\n      ${secretish}\n`,
      );
    expect(attempt).toThrow(PkiError);
    expect(attempt).toThrow(/no user with client-certificate-data/);
    expect(attempt).not.toThrow(/c2VjcmV0/);
    expect(() => kubeconfigClientCertificate('a: [')).toThrow('kubeconfig is not valid YAML');
  });
});

describe('kubeconfigSecret', () => {
  it('has the upstream name, type, label and key', () => {
    expect(kubeconfigSecret('demo', 'KUBECONFIG')).toEqual({
      name: 'demo-kubeconfig',
      type: CLUSTER_SECRET_TYPE,
      labels: { [CLUSTER_NAME_LABEL]: 'demo' },
      stringData: { value: 'KUBECONFIG' },
    });
  });
});
