import { KubeConfig } from '@kubernetes/client-node';
import { getControllerOf } from '@capstan/kube';
import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { FakeSecrets } from '../testing/fake-secrets.js';
import { TestScope, testCluster, testKcp } from '../testing/control-plane-scope.js';
import { controlPlaneEndpointOf, reconcileKubeconfig } from './k3scontrolplane.kubeconfig.js';

const serverOf = (kubeconfig: string | undefined) => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig ?? '');
  return kc.getCurrentCluster()?.server;
};

describe('controlPlaneEndpointOf', () => {
  const endpoint = { host: '10.0.0.1', port: 6443 };

  it('is known once the infrastructure is provisioned and has set the endpoint', () => {
    const provisioned = { initialization: { infrastructureProvisioned: true } };
    expect(
      controlPlaneEndpointOf(testCluster({ spec: { controlPlaneEndpoint: endpoint }, status: provisioned })),
    ).toEqual({
      endpoint,
    });
    const waiting = { blockedBy: 'Waiting for the cluster infrastructure and its endpoint' };
    expect(controlPlaneEndpointOf(testCluster({ spec: { controlPlaneEndpoint: endpoint } }))).toEqual(
      waiting,
    );
    expect(controlPlaneEndpointOf(testCluster({ status: provisioned }))).toEqual(waiting);
    expect(
      controlPlaneEndpointOf(
        testCluster({ spec: { controlPlaneEndpoint: { host: '', port: 0 } }, status: provisioned }),
      ),
    ).toEqual(waiting);
  });
});

describe('the kubeconfig phase', () => {
  let certificates: ClusterCertificates;

  beforeAll(async () => {
    certificates = await generateClusterCertificates('demo');
  });

  it('issues the kubeconfig once, owned by the control plane, and again through a guarded patch when the endpoint moves', async () => {
    const secrets = new FakeSecrets();
    const first = new TestScope(testKcp());
    const issued = await reconcileKubeconfig(
      first.scope,
      { host: '10.0.0.1', port: 6443 },
      certificates,
      secrets.access(),
    );
    expect(serverOf(issued)).toBe('https://10.0.0.1:6443');
    expect(secrets.text('ns', 'demo-kubeconfig', 'value')).toBe(issued);
    expect(getControllerOf(secrets.objects.get('ns/demo-kubeconfig')!)).toMatchObject({ uid: 'kcp-uid' });
    expect(first.recorded).toEqual(['KubeconfigIssued: Issued demo-kubeconfig (missing)']);

    const kept = new TestScope(testKcp());
    const cached = secrets.access({ cached: true });
    expect(
      await reconcileKubeconfig(kept.scope, { host: '10.0.0.1', port: 6443 }, certificates, cached),
    ).toBe(issued);
    expect(kept.recorded).toEqual([]);

    const moved = new TestScope(testKcp());
    const renewed = await reconcileKubeconfig(
      moved.scope,
      { host: '10.0.0.2', port: 6443 },
      certificates,
      cached,
    );
    expect(serverOf(secrets.text('ns', 'demo-kubeconfig', 'value'))).toBe('https://10.0.0.2:6443');
    expect(renewed).toBe(secrets.text('ns', 'demo-kubeconfig', 'value'));
    expect(secrets.writes).toEqual(['create demo-kubeconfig', 'patch demo-kubeconfig']);
    expect(moved.recorded).toEqual(['KubeconfigIssued: Issued demo-kubeconfig (endpoint changed)']);
  });

  it('does not overwrite a kubeconfig replaced since the cache showed it', async () => {
    const secrets = new FakeSecrets();
    await reconcileKubeconfig(
      new TestScope(testKcp()).scope,
      { host: '10.0.0.1', port: 6443 },
      certificates,
      secrets.access(),
    );
    const stale = structuredClone(secrets.objects.get('ns/demo-kubeconfig')!);
    secrets.put({ ...stale, metadata: { ...stale.metadata } });
    const behind = { ...secrets.access(), cache: { getByName: () => stale } };
    await expect(
      reconcileKubeconfig(
        new TestScope(testKcp()).scope,
        { host: '10.0.0.2', port: 6443 },
        certificates,
        behind,
      ),
    ).rejects.toMatchObject({ code: 409 });
  });
});
