import { canonicalJson } from '@capstan/kube';
import { createHash } from 'node:crypto';
import type { K3sControlPlane } from '@capstan/api';
import { desiredVersionOf } from './upgrade-hold.js';

/**
 * What a control plane machine is built from and cannot change in place: the version, the infrastructure
 * template and the K3s config (bootstrap data is rendered once per machine). A change of any of them rolls
 * the machines out.
 */
export function machineSpecHash(kcp: Pick<K3sControlPlane, 'spec' | 'status'>): string {
  const spec = kcp.spec;
  return createHash('sha256')
    .update(
      canonicalJson({
        version: desiredVersionOf(kcp),
        infrastructureRef: spec.machineTemplate.spec.infrastructureRef,
        k3sConfigSpec: spec.k3sConfigSpec ?? {},
      }),
    )
    .digest('hex')
    .slice(0, 32);
}
