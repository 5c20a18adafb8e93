import { KubeConfig } from '@kubernetes/client-node';
import type { K3sControlPlane } from '@capstan/api';
import { getControllerOf } from '@capstan/kube';
import { generateClusterCertificates, type ClusterCertificates } from '@capstan/pki';
import { installCapstanDefinitions, testKubeConfig } from '@capstan/testing';
import { ServerSecrets } from '../testing/server-secrets.js';
import { TestScope } from '../testing/control-plane-scope.js';
import { reconcileKubeconfig } from './k3scontrolplane.kubeconfig.js';

// The kubeconfig phase against the real API server: each test has a namespace of its own.

const serverOf = (kubeconfig: string | undefined) => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig ?? '');
  return kc.getCurrentCluster()?.server;
};

describe('the kubeconfig phase', () => {
  let certificates: ClusterCertificates;
  let secrets: ServerSecrets;
  let kcp: K3sControlPlane;

  beforeAll(async () => {
    await installCapstanDefinitions(testKubeConfig());
    certificates = await generateClusterCertificates('demo');
  });
  beforeEach(async () => {
    secrets = await ServerSecrets.create('kcp-kubeconfig');
    kcp = await secrets.controlPlane();
  });
  afterEach(async () => {
    await secrets?.close();
  });

  it('issues the kubeconfig once, owned by the control plane, and again through a guarded patch when the endpoint moves', async () => {
    const first = new TestScope(kcp);
    const issued = await reconcileKubeconfig(
      first.scope,
      { host: '10.0.0.1', port: 6443 },
      certificates,
      secrets.uncached(),
    );
    expect(serverOf(issued)).toBe('https://10.0.0.1:6443');
    expect(await secrets.text('demo-kubeconfig', 'value')).toBe(issued);
    expect(getControllerOf((await secrets.get('demo-kubeconfig'))!)).toMatchObject({ uid: kcp.metadata.uid });
    expect(first.recorded).toEqual(['KubeconfigIssued: Issued demo-kubeconfig (missing)']);

    const kept = new TestScope(kcp);
    const cached = await secrets.cached();
    expect(
      await reconcileKubeconfig(kept.scope, { host: '10.0.0.1', port: 6443 }, certificates, cached),
    ).toBe(issued);
    expect(kept.recorded).toEqual([]);

    const moved = new TestScope(kcp);
    const renewed = await reconcileKubeconfig(
      moved.scope,
      { host: '10.0.0.2', port: 6443 },
      certificates,
      cached,
    );
    expect(serverOf(await secrets.text('demo-kubeconfig', 'value'))).toBe('https://10.0.0.2:6443');
    expect(renewed).toBe(await secrets.text('demo-kubeconfig', 'value'));
    expect(secrets.writes).toEqual(['create demo-kubeconfig', 'patch demo-kubeconfig']);
    expect(moved.recorded).toEqual(['KubeconfigIssued: Issued demo-kubeconfig (endpoint changed)']);
  });

  it('creates it without reading it first when the synced cache has none, and keeps one the cache does not select', async () => {
    const cached = await secrets.cached();
    const issued = await reconcileKubeconfig(new TestScope(kcp).scope, { host: '10.0.0.1', port: 6443 }, certificates, cached);
    expect(secrets.requests).toEqual(['POST demo-kubeconfig']);
    // Someone takes the cluster-name label off: the cache lets it go, the server still has it.
    await secrets.secrets.mergePatch({ namespace: secrets.namespace, name: 'demo-kubeconfig' }, { metadata: { labels: null } });
    const recached = await secrets.cached();
    const kept = new TestScope(kcp);
    expect(await reconcileKubeconfig(kept.scope, { host: '10.0.0.1', port: 6443 }, certificates, recached)).toBe(issued);
    // Its create found it; read once, current, kept.
    expect(secrets.requests).toEqual(['POST demo-kubeconfig', 'POST demo-kubeconfig', 'GET demo-kubeconfig']);
    expect(secrets.writes).toEqual(['create demo-kubeconfig']);
    expect(kept.recorded).toEqual([]);
  });

  it('does not overwrite a kubeconfig replaced since the cache showed it', async () => {
    const issued = await reconcileKubeconfig(
      new TestScope(kcp).scope,
      { host: '10.0.0.1', port: 6443 },
      certificates,
      secrets.uncached(),
    );
    const stale = (await secrets.get('demo-kubeconfig'))!;
    // Someone replaces it after the cache showed `stale`.
    const replaced = await secrets.secrets.replace({
      ...stale,
      metadata: { ...stale.metadata, annotations: { 'example.com/replaced-by': 'someone' } },
    });
    const behind = { ...secrets.uncached(), cache: { getByName: () => stale, hasSynced: () => true } };
    await expect(
      reconcileKubeconfig(new TestScope(kcp).scope, { host: '10.0.0.2', port: 6443 }, certificates, behind),
    ).rejects.toMatchObject({ code: 409 });
    expect((await secrets.get('demo-kubeconfig'))?.metadata?.resourceVersion).toBe(
      replaced.metadata?.resourceVersion,
    );
    expect(await secrets.text('demo-kubeconfig', 'value')).toBe(issued);
    expect(secrets.writes).toEqual(['create demo-kubeconfig']);
  });
});
