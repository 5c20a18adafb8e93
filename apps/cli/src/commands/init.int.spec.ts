import { jest } from '@jest/globals';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { CORE_VALIDATING_WEBHOOK, removeStaleCoreWebhookConfiguration, testKubeConfig } from '@capstan/testing';
import { run } from '../main.js';

describe('capstan init', () => {
  const kubeconfig = process.env['CAPSTAN_TEST_KUBECONFIG']!;

  // A local core's configuration (a URL) left on the shared API server would merge with deploy/'s (a Service).
  beforeAll(() => removeStaleCoreWebhookConfiguration(testKubeConfig()));
  // deploy/'s configuration sends ClusterClass writes to a Service no pod backs here (the test API server runs no
  // kubelet): left behind, it would refuse every ClusterClass that later test files create.
  afterAll(() =>
    testKubeConfig()
      .makeApiClient(AdmissionregistrationV1Api)
      .deleteValidatingWebhookConfiguration({ name: CORE_VALIDATING_WEBHOOK })
      .catch(() => undefined),
  );

  it('installs CRDs, RBAC and the Deployments idempotently, and says which services are not ready', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      // The test API server runs no controller-manager, so Deployments never get pods: init must time out.
      expect(await run(['node', 'capstan', 'init', '--kubeconfig', kubeconfig, '--wait-timeout', '1s'])).toBe(1);
      expect(await run(['node', 'capstan', 'init', '--kubeconfig', kubeconfig, '--wait-timeout', '1s'])).toBe(1);
      const written = stderr.mock.calls.map((c) => String(c[0])).join('');
      expect(written).toMatch(/not ready after 1s: capstan-core 0\/2/);
    } finally {
      stderr.mockRestore();
    }
    const kc = testKubeConfig();
    const deployments = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: 'capstan-system' });
    expect(deployments.items.map((d) => d.metadata?.name).sort()).toEqual([
      'capstan-bootstrap-provider',
      'capstan-cluster-provider',
      'capstan-control-plane-provider',
      'capstan-core',
      'capstan-dashboard',
      'capstan-machine-provider',
    ]);
    const accounts = await kc.makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: 'capstan-system' });
    expect(accounts.items.map((a) => a.metadata?.name)).toContain('capstan-machine-provider');
    expect(accounts.items.map((a) => a.metadata?.name)).toContain('capstan-dashboard');
  });

  it('refuses --all-in-one without --local, before installing anything', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await run(['node', 'capstan', 'init', '--kubeconfig', kubeconfig, '--all-in-one'])).toBe(2);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toContain('--all-in-one needs --local');
    } finally {
      stderr.mockRestore();
    }
  });

  it('reports an unreadable kubeconfig in one line instead of a stack trace', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const saved = process.env['KUBECONFIG'];
    delete process.env['KUBECONFIG'];
    try {
      const code = await run(['node', 'capstan', 'init', '--local', '--kubeconfig', '/nonexistent/kubeconfig']);
      expect(code).toBe(1);
      expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(/Error: .*nonexistent/);
    } finally {
      if (saved !== undefined) process.env['KUBECONFIG'] = saved;
      stderr.mockRestore();
    }
  });
});
