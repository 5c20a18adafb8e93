import { KubeConfig } from '@kubernetes/client-node';
import { renderKubeconfig } from './kubeconfig.js';

describe('renderKubeconfig', () => {
  it('renders a kubeconfig that client-node loads, with the CA and the token', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      renderKubeconfig({
        clusterName: 'demo',
        server: 'https://127.0.0.1:6443',
        caData: Buffer.from('ca').toString('base64'),
        user: { token: 'secret-token' },
        namespace: 'dev',
      }),
    );
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'demo', server: 'https://127.0.0.1:6443', caData: 'Y2E=' });
    expect(kc.getCurrentUser()?.token).toBe('secret-token');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('dev');
  });
});
