import { request } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

/** How long one probe of the workload API may take. */
export const PROBE_TIMEOUT_MS = 3000;

/**
 * Whether the workload cluster's API server answers `GET /readyz` with 200 through the admin kubeconfig
 * (its CA, its client certificate): the control plane counts as initialized from then on.
 */
export function probeWorkloadApi(kubeconfig: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster || !user?.certData || !user.keyData) return Promise.resolve(false);
  const decode = (data: string | undefined) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
  return new Promise((resolve) => {
    const req = request(
      new URL('/readyz', cluster.server),
      {
        method: 'GET',
        ca: decode(cluster.caData),
        cert: decode(user.certData),
        key: decode(user.keyData),
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
