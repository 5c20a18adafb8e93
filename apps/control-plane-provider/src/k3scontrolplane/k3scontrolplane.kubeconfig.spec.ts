import { testCluster } from '../testing/control-plane-scope.js';
import { controlPlaneEndpointOf } from './k3scontrolplane.kubeconfig.js';

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
