import type { V1Secret } from '@kubernetes/client-node';
import { getControllerOf } from '@capstan/kube';
import {
  clusterCertificateSecret,
  generateClusterCertificate,
  generateClusterCertificates,
  type ClusterCertificates,
  type KeyPairPem,
} from '@capstan/pki';
import { FakeSecrets } from '../testing/fake-secrets.js';
import { TestScope, testKcp } from '../testing/control-plane-scope.js';
import { reconcileCertificates } from './k3scontrolplane.certificates.js';

const NAMES = ['demo-ca', 'demo-cca', 'demo-proxy', 'demo-etcd', 'demo-sa'];

function secretOf(purpose: 'ca' | 'sa', pair: KeyPairPem): V1Secret {
  const shape = clusterCertificateSecret('demo', purpose, pair);
  return {
    metadata: { name: shape.name, namespace: 'ns', labels: shape.labels },
    type: shape.type,
    stringData: shape.stringData,
  };
}

describe('the certificates phase', () => {
  let existing: ClusterCertificates;

  beforeAll(async () => {
    existing = await generateClusterCertificates('demo');
  });

  it('generates each missing certificate once, owned by the control plane, and says which', async () => {
    const secrets = new FakeSecrets();
    const test = new TestScope(testKcp());
    const certificates = await reconcileCertificates(test.scope, secrets.access());
    expect(secrets.writes).toEqual(NAMES.map((name) => `create ${name}`));
    for (const name of NAMES) {
      const secret = secrets.objects.get(`ns/${name}`)!;
      expect(secret.type).toBe('cluster.x-k8s.io/secret');
      expect(secret.metadata?.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'demo' });
      expect(getControllerOf(secret)).toMatchObject({ kind: 'K3sControlPlane', uid: 'kcp-uid' });
    }
    expect(secrets.text('ns', 'demo-ca', 'tls.crt')).toBe(certificates.ca.certPem);
    expect(test.recorded).toEqual([`CertificatesGenerated: Generated ${NAMES.join(', ')}`]);

    const again = new TestScope(testKcp());
    expect(await reconcileCertificates(again.scope, secrets.access({ cached: true }))).toEqual(certificates);
    expect(secrets.writes).toHaveLength(NAMES.length);
    expect(again.recorded).toEqual([]);
  });

  it('uses certificates that exist, whoever made them, and the winner of a create race', async () => {
    const secrets = new FakeSecrets();
    secrets.put(secretOf('ca', existing.ca));
    const winner = await generateClusterCertificate('demo', 'sa');
    secrets.raceOn(secretOf('sa', winner));
    const test = new TestScope(testKcp());
    const certificates = await reconcileCertificates(test.scope, secrets.access());
    expect(certificates.ca).toEqual(existing.ca);
    expect(certificates.sa).toEqual(winner);
    expect(secrets.writes).toEqual(['create demo-cca', 'create demo-proxy', 'create demo-etcd']);
  });
});
