import { kubeApiContract } from './testing/kube-api-contract.js';
import { useWidgetNamespace } from './testing/widget-namespace.js';

describe('the Kubernetes API contract, on the real API server', () => {
  const env = useWidgetNamespace('kube-rc');
  kubeApiContract(() => ({ client: env.client, namespace: env.ns.name }));
});
