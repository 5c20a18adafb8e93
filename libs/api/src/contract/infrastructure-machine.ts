import type { ReportedCondition } from '../conditions/conditions.js';
import type { MachineAddress } from '../types/common.js';
import type { ContractVersion } from './contract-version.js';
import { readAddresses, readConditions } from './shared-fields.js';
import { booleanAt, stringAt } from './unstructured.js';

/** What the core reads from an InfraMachine (e.g. SimMachine). */
export interface InfrastructureMachineContract {
  /** v1beta2 `status.initialization.provisioned`; v1beta1 `status.ready`. */
  provisioned: boolean;
  /** `spec.providerID` (mandatory once provisioned, in both contracts). */
  providerID?: string;
  /** `status.addresses`. */
  addresses: MachineAddress[];
  /** `status.failureDomain`, else the deprecated `spec.failureDomain`. */
  failureDomain?: string;
  conditions: ReportedCondition[];
}

export function readInfrastructureMachine(
  obj: unknown,
  contract?: ContractVersion,
): InfrastructureMachineContract {
  const v1beta2 = booleanAt(obj, ['status', 'initialization', 'provisioned']);
  const v1beta1 = booleanAt(obj, ['status', 'ready']);
  const provisioned =
    contract === 'v1beta2' ? v1beta2 : contract === 'v1beta1' ? v1beta1 : (v1beta2 ?? v1beta1);
  const providerID = stringAt(obj, ['spec', 'providerID']) || undefined;
  const failureDomain =
    stringAt(obj, ['status', 'failureDomain']) || stringAt(obj, ['spec', 'failureDomain']) || undefined;
  return {
    provisioned: provisioned === true,
    ...(providerID ? { providerID } : {}),
    addresses: readAddresses(obj),
    ...(failureDomain ? { failureDomain } : {}),
    conditions: readConditions(obj, contract),
  };
}
