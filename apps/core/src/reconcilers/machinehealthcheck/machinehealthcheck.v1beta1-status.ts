import {
  V1Beta1ConditionType as T,
  V1Beta1Reason as R,
  V1Beta1Severity as S,
  setV1Beta1Condition,
  v1beta1False,
  v1beta1True,
  type MachineHealthCheckV1Beta1DeprecatedStatus,
} from '@capstan/api';
import type { RemediationAllowance } from './remediation-allowance.js';

// The MachineHealthCheck's status.deprecated.v1beta1 as upstream's controller still writes it
// (machinehealthcheck_controller.go): RemediationAllowed, True or False TooManyUnhealthy (Warning) with the same
// message as the v1beta2 condition. Upstream decides it by the unhealthy count alone, so `allowance` is that count's
// verdict (a missing remediation template, which the v1beta2 condition reports, does not enter it).

/** `status.deprecated.v1beta1` of the MachineHealthCheck. */
export function computeMachineHealthCheckV1Beta1Status(
  previous: MachineHealthCheckV1Beta1DeprecatedStatus | undefined,
  allowance: RemediationAllowance,
  now: Date,
): MachineHealthCheckV1Beta1DeprecatedStatus {
  return {
    conditions: setV1Beta1Condition(
      previous?.conditions,
      allowance.allowed
        ? v1beta1True(T.RemediationAllowed)
        : v1beta1False(T.RemediationAllowed, R.TooManyUnhealthy, S.Warning, allowance.message ?? ''),
      now,
    ),
  };
}
