import type { ReportedCondition } from '../conditions/conditions.js';
import type { APIEndpoint, FailureDomain } from '../types/common.js';
import type { ContractVersion } from './contract-version.js';
import { readConditions, readEndpoint, readFailureDomains } from './shared-fields.js';
import { booleanAt } from './unstructured.js';

/** What the core reads from an InfraCluster (e.g. SimCluster). */
export interface InfrastructureClusterContract {
  /** v1beta2 `status.initialization.provisioned`; v1beta1 `status.ready`. */
  provisioned: boolean;
  /** `spec.controlPlaneEndpoint`, only when host and port are both set. */
  controlPlaneEndpoint?: APIEndpoint;
  /** Failure domains in the v1beta2 list shape, whichever shape the provider wrote. */
  failureDomains?: FailureDomain[];
  conditions: ReportedCondition[];
}

/**
 * Reads an infrastructure cluster under `contract`; without one, under v1beta2 with the v1beta1 fields as a
 * fallback (for providers whose CRD labels were not consulted).
 */
export function readInfrastructureCluster(
  obj: unknown,
  contract?: ContractVersion,
): InfrastructureClusterContract {
  const v1beta2 = booleanAt(obj, ['status', 'initialization', 'provisioned']);
  const v1beta1 = booleanAt(obj, ['status', 'ready']);
  const provisioned =
    contract === 'v1beta2' ? v1beta2 : contract === 'v1beta1' ? v1beta1 : (v1beta2 ?? v1beta1);
  const endpoint = readEndpoint(obj);
  const failureDomains = readFailureDomains(obj, contract);
  return {
    provisioned: provisioned === true,
    ...(endpoint ? { controlPlaneEndpoint: endpoint } : {}),
    ...(failureDomains ? { failureDomains } : {}),
    conditions: readConditions(obj, contract),
  };
}
