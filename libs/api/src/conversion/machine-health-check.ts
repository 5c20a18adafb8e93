import type { Unstructured } from '../contract/unstructured.js';
import { storeConversionData } from './conversion-data.js';
import { durationToSeconds, secondsToDuration } from './durations.js';
import { compact, explicitZero, nonEmpty, numberOrUndefined, record, stringOrUndefined } from './fields.js';
import { withNamespace, withoutNamespace } from './references.js';
import { statusBucketsDown, statusBucketsUp } from './status-buckets.js';

const COUNTERS = ['expectedMachines', 'currentHealthy', 'remediationsAllowed'] as const;

const conditionsUp = (list: unknown, field: string) =>
  Array.isArray(list)
    ? list.map((c: unknown, i) => {
        const condition = record(c);
        return compact({
          type: condition['type'],
          status: condition['status'],
          timeoutSeconds: durationToSeconds(stringOrUndefined(condition['timeout']) ?? '0s', `${field}[${i}].timeout`),
        });
      })
    : undefined;

const conditionsDown = (list: unknown) =>
  Array.isArray(list)
    ? list.map((c: unknown) => {
        const condition = record(c);
        return compact({
          type: condition['type'],
          status: condition['status'],
          timeout: secondsToDuration(numberOrUndefined(condition['timeoutSeconds']) ?? 0),
        });
      })
    : undefined;

/** The health-check part both MachineHealthCheck and a Cluster topology's `machineHealthCheck` have, up. */
export function healthCheckUp(check1: Unstructured, field: string): Pick<Unstructured, 'checks' | 'remediation'> {
  return {
    checks: nonEmpty({
      nodeStartupTimeoutSeconds: durationToSeconds(stringOrUndefined(check1['nodeStartupTimeout']), `${field}.nodeStartupTimeout`),
      unhealthyNodeConditions: conditionsUp(check1['unhealthyConditions'], `${field}.unhealthyConditions`),
      unhealthyMachineConditions: conditionsUp(check1['unhealthyMachineConditions'], `${field}.unhealthyMachineConditions`),
    }),
    remediation: nonEmpty({
      triggerIf: nonEmpty({
        unhealthyLessThanOrEqualTo: check1['maxUnhealthy'],
        unhealthyInRange: stringOrUndefined(check1['unhealthyRange']),
      }),
      templateRef: nonEmpty(withoutNamespace(check1['remediationTemplate']) ?? {}),
    }),
  };
}

export function healthCheckDown(check2: Unstructured, namespace: string | undefined): Unstructured {
  const checks = record(check2['checks']);
  const remediation = record(check2['remediation']);
  const triggerIf = record(remediation['triggerIf']);
  return compact({
    nodeStartupTimeout: secondsToDuration(numberOrUndefined(checks['nodeStartupTimeoutSeconds'])),
    unhealthyConditions: conditionsDown(checks['unhealthyNodeConditions']),
    unhealthyMachineConditions: conditionsDown(checks['unhealthyMachineConditions']),
    maxUnhealthy: triggerIf['unhealthyLessThanOrEqualTo'],
    unhealthyRange: stringOrUndefined(triggerIf['unhealthyInRange']),
    remediationTemplate: withNamespace(remediation['templateRef'], namespace),
  });
}

export function machineHealthCheckUp(mhc1: Unstructured, restored: Unstructured | undefined): Unstructured {
  const spec = record(mhc1['spec']);
  const status = record(mhc1['status']);
  const kept = record(restored?.['status']);
  const { current, deprecated } = statusBucketsUp(status, [], { alwaysDeprecated: false });
  return compact({
    ...mhc1,
    spec: compact({ clusterName: spec['clusterName'], selector: spec['selector'], ...healthCheckUp(spec, 'spec') }),
    status: mhc1['status'] === undefined
      ? undefined
      : compact({
          ...Object.fromEntries(COUNTERS.map((f) => [f, explicitZero<number>(status[f], kept[f])])),
          targets: status['targets'],
          observedGeneration: status['observedGeneration'],
          conditions: current['conditions'],
          deprecated,
        }),
  });
}

export function machineHealthCheckDown(mhc2: Unstructured): Unstructured {
  const namespace = stringOrUndefined(record(mhc2['metadata'])['namespace']);
  const spec = record(mhc2['spec']);
  const status = record(mhc2['status']);
  const { old, v1beta2 } = statusBucketsDown(status, []);
  const mhc1 = compact({
    ...mhc2,
    spec: compact({ clusterName: spec['clusterName'], selector: spec['selector'], ...healthCheckDown(spec, namespace) }),
    status: mhc2['status'] === undefined
      ? undefined
      : compact({
          ...Object.fromEntries(COUNTERS.map((f) => [f, numberOrUndefined(status[f]) ?? 0])),
          targets: status['targets'],
          observedGeneration: status['observedGeneration'],
          conditions: old['conditions'],
          v1beta2,
        }),
  });
  storeConversionData(mhc2, mhc1);
  return mhc1;
}
