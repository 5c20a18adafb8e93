import { ANNOTATIONS } from '../constants/annotations.js';
import type { ReportedCondition } from '../conditions/conditions.js';
import type { ContractVersion } from './contract-version.js';
import { readConditions } from './shared-fields.js';
import { booleanAt, stringAt } from './unstructured.js';

/** What the core reads from a BootstrapConfig (e.g. K3sConfig). */
export interface BootstrapConfigContract {
  /** v1beta2 `status.initialization.dataSecretCreated`; v1beta1 `status.ready`. */
  dataSecretCreated: boolean;
  /** `status.dataSecretName` (same path in both contracts). */
  dataSecretName?: string;
  conditions: ReportedCondition[];
  /** Capstan's in-place update contract (docs/in-place-updates.md): `status.inPlaceUpdate`. */
  inPlaceUpdate?: { target: string; state: string; message?: string };
  /**
   * `machine.cluster.x-k8s.io/certificates-expiry` on the config (RFC 3339): when the machine's certificates expire, as
   * the control plane provider read them. The Machine controller copies it to `status.certificatesExpiryDate`.
   */
  certificatesExpiry?: string;
}

export function readBootstrapConfig(obj: unknown, contract?: ContractVersion): BootstrapConfigContract {
  const v1beta2 = booleanAt(obj, ['status', 'initialization', 'dataSecretCreated']);
  const v1beta1 = booleanAt(obj, ['status', 'ready']);
  const created = contract === 'v1beta2' ? v1beta2 : contract === 'v1beta1' ? v1beta1 : (v1beta2 ?? v1beta1);
  const dataSecretName = stringAt(obj, ['status', 'dataSecretName']) || undefined;
  const target = stringAt(obj, ['status', 'inPlaceUpdate', 'target']);
  const state = stringAt(obj, ['status', 'inPlaceUpdate', 'state']);
  const message = stringAt(obj, ['status', 'inPlaceUpdate', 'message']);
  const certificatesExpiry = stringAt(obj, ['metadata', 'annotations', ANNOTATIONS.certificatesExpiry]);
  return {
    dataSecretCreated: created === true,
    ...(dataSecretName ? { dataSecretName } : {}),
    conditions: readConditions(obj, contract),
    ...(target && state && { inPlaceUpdate: { target, state, ...(message && { message }) } }),
    ...(certificatesExpiry && { certificatesExpiry }),
  };
}
