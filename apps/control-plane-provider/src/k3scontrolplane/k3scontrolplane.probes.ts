import { request } from 'node:https';
import { parseKubeconfig, type KubeconfigSelection } from '@capstan/kube';
import type { ControlPlaneMachine } from '../planning/control-plane-machine.js';
import type { ControlPlaneScope } from './k3scontrolplane.scope.js';

/** How often to probe the workload API while waiting for the first server to answer. */
export const INITIALIZATION_PROBE_INTERVAL_MS = 2_000;

/** Whether the workload API answers through a kubeconfig. */
export type WorkloadProbe = (kubeconfig: string) => Promise<boolean>;

/**
 * Whether to probe the workload API: only until it answered once (initialization is never taken back), and
 * only once some machine exists that could be serving it.
 */
export function needsProbe(initialized: boolean, machines: readonly ControlPlaneMachine[]): boolean {
  return !initialized && machines.length > 0;
}

/** When to probe again: while initialization is awaited, every INITIALIZATION_PROBE_INTERVAL_MS. */
export function probeAgainAfter(
  initialized: boolean,
  machines: readonly ControlPlaneMachine[],
): number | undefined {
  return needsProbe(initialized, machines) ? INITIALIZATION_PROBE_INTERVAL_MS : undefined;
}

/**
 * The probes phase: whether the control plane is initialized, i.e. the status says so already or the
 * workload API answers now through the admin kubeconfig.
 */
export async function reconcileInitialization(
  scope: ControlPlaneScope,
  kubeconfig: string,
  probe: WorkloadProbe,
): Promise<boolean> {
  const initialized = scope.kit.obj.status?.initialization?.controlPlaneInitialized === true;
  if (!needsProbe(initialized, scope.facts)) return initialized;
  return probe(kubeconfig);
}

/** How long one probe of the workload API may take. */
export const PROBE_TIMEOUT_MS = 3000;

/**
 * Whether the workload cluster's API server answers `GET /readyz` with 200 through the admin kubeconfig
 * (its CA, its client certificate): the control plane counts as initialized from then on.
 */
export function probeWorkloadApi(kubeconfig: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  let api: KubeconfigSelection;
  try {
    api = parseKubeconfig(kubeconfig);
  } catch {
    return Promise.resolve(false);
  }
  if (!api.clientCertificatePem || !api.clientKeyPem) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = request(
      new URL('/readyz', api.server),
      {
        method: 'GET',
        ca: api.caPem,
        cert: api.clientCertificatePem,
        key: api.clientKeyPem,
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
