import type { V1Secret } from '@kubernetes/client-node';
import type { K3sControlPlane } from '@capstan/api';
import { getControllerOf } from '@capstan/kube';
import {
  clusterCertificateSecret,
  generateClusterCertificate,
  generateClusterCertificates,
  type ClusterCertificates,
  type KeyPairPem,
} from '@capstan/pki';
import { installCapstanDefinitions, testKubeConfig } from '@capstan/testing';
import { ServerSecrets } from '../testing/server-secrets.js';
import { TestScope } from '../testing/control-plane-scope.js';
import { reconcileCertificates } from './k3scontrolplane.certificates.js';

// The certificates phase against the real API server: each test has a namespace of its own.

const NAMES = ['demo-ca', 'demo-cca', 'demo-proxy', 'demo-etcd', 'demo-sa'];

function secretOf(namespace: string, purpose: 'ca' | 'sa', pair: KeyPairPem): V1Secret {
  const shape = clusterCertificateSecret('demo', purpose, pair);
  return {
    metadata: { name: shape.name, namespace, labels: shape.labels },
    type: shape.type,
    stringData: shape.stringData,
  };
}

describe('the certificates phase', () => {
  let existing: ClusterCertificates;
  let secrets: ServerSecrets;
  let kcp: K3sControlPlane;

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
    existing = await generateClusterCertificates('demo');
  });
  beforeEach(async () => {
    secrets = await ServerSecrets.create('kcp-certs');
    kcp = await secrets.controlPlane();
  });
  afterEach(async () => {
    await secrets?.close();
  });

  it('generates each missing certificate once, owned by the control plane, and says which', async () => {
    const test = new TestScope(kcp);
    const certificates = await reconcileCertificates(test.scope, secrets.uncached());
    expect(secrets.writes).toEqual(NAMES.map((name) => `create ${name}`));
    for (const name of NAMES) {
      const secret = (await secrets.get(name))!;
      expect(secret.type).toBe('cluster.x-k8s.io/secret');
      expect(secret.metadata?.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'demo' });
      expect(getControllerOf(secret)).toMatchObject({ kind: 'K3sControlPlane', uid: kcp.metadata.uid });
    }
    expect(await secrets.text('demo-ca', 'tls.crt')).toBe(certificates.ca.certPem);
    expect(test.recorded).toEqual([`CertificatesGenerated: Generated ${NAMES.join(', ')}`]);

    // Once the cache shows them, they are read from it: no request at all.
    const cached = await secrets.cached();
    const requests = secrets.requests.length;
    const again = new TestScope(kcp);
    expect(await reconcileCertificates(again.scope, cached)).toEqual(certificates);
    expect(secrets.writes).toHaveLength(NAMES.length);
    expect(secrets.requests).toHaveLength(requests);
    expect(again.recorded).toEqual([]);
  });

  it('creates what the synced cache does not hold without reading it first, and uses one the cache does not select', async () => {
    // A user's CA without the cluster-name label: the cache (label-selected) never shows it.
    const unlabelled = secretOf(secrets.namespace, 'ca', existing.ca);
    delete unlabelled.metadata!.labels;
    await secrets.secrets.create(unlabelled);
    const cached = await secrets.cached();
    const test = new TestScope(kcp);
    const certificates = await reconcileCertificates(test.scope, cached);
    expect(certificates.ca).toEqual(existing.ca);
    expect(secrets.requests).toEqual([
      'POST demo-ca',
      'GET demo-ca',
      ...NAMES.filter((n) => n !== 'demo-ca').map((n) => `POST ${n}`),
    ]);
    expect(test.recorded).toEqual(['CertificatesGenerated: Generated demo-cca, demo-proxy, demo-etcd, demo-sa']);
  });

  it('uses certificates that exist, whoever made them, and the winner of a create race', async () => {
    const ca = await secrets.secrets.create(secretOf(secrets.namespace, 'ca', existing.ca));
    const winner = await generateClusterCertificate('demo', 'sa');
    // Another reconcile creates demo-sa after this one found none, just before this one creates it.
    secrets.beforeWrite('create', 'demo-sa', () =>
      secrets.secrets.create(secretOf(secrets.namespace, 'sa', winner)),
    );
    const test = new TestScope(kcp);
    const certificates = await reconcileCertificates(test.scope, secrets.uncached());
    expect(certificates.ca).toEqual(existing.ca);
    expect(certificates.sa).toEqual(winner);
    expect(secrets.writes).toEqual(['create demo-cca', 'create demo-proxy', 'create demo-etcd']);
    // The refused create was sent, and the winner read back.
    expect(secrets.requests.filter((r) => r.endsWith(' demo-sa'))).toEqual([
      'GET demo-sa',
      'POST demo-sa',
      'GET demo-sa',
    ]);
    expect((await secrets.get('demo-ca'))?.metadata?.resourceVersion).toBe(ca.metadata?.resourceVersion);
    expect(getControllerOf((await secrets.get('demo-sa'))!)).toBeUndefined();
    expect(await secrets.text('demo-sa', 'tls.crt')).toBe(winner.certPem);
    // Only what this reconcile created is reported as generated: not the winner's demo-sa.
    expect(test.recorded).toEqual(['CertificatesGenerated: Generated demo-cca, demo-proxy, demo-etcd']);
  });
});
