import type { Unstructured } from '../contract/unstructured.js';
import { storeConversionData } from './conversion-data.js';
import { compact, explicitZero, nonEmpty, numberOrUndefined, record, stringOrUndefined } from './fields.js';
import { machineTemplateDown, machineTemplateUp } from './machine-spec.js';
import type { ApiVersionLookup } from './references.js';
import { statusBucketsDown, statusBucketsUp } from './status-buckets.js';

const NEW_COUNTERS = ['readyReplicas', 'availableReplicas', 'upToDateReplicas'] as const;
const OLD_FIELDS = ['readyReplicas', 'availableReplicas', 'updatedReplicas', 'unavailableReplicas'];
const COPIED_STATUS = ['selector', 'observedGeneration', 'phase', 'versions'] as const;

/**
 * v1beta1 `strategy` split three ways in v1beta2: `rollout.strategy`, `deletion.order` (from deletePolicy) and
 * `remediation.maxInFlight`; `rolloutAfter` becomes `rollout.after`. `revisionHistoryLimit` and
 * `progressDeadlineSeconds` have no v1beta2 field and are dropped, as upstream drops them.
 */
export function rolloutUp(strategy1: unknown, rolloutAfter: unknown): Pick<Unstructured, 'rollout' | 'deletion' | 'remediation'> {
  const strategy = record(strategy1);
  const rolling = record(strategy['rollingUpdate']);
  return {
    rollout: nonEmpty({
      after: stringOrUndefined(rolloutAfter),
      strategy: nonEmpty({
        type: stringOrUndefined(strategy['type']),
        rollingUpdate: nonEmpty({ maxUnavailable: rolling['maxUnavailable'], maxSurge: rolling['maxSurge'] }),
      }),
    }),
    deletion: nonEmpty({ order: stringOrUndefined(rolling['deletePolicy']) }),
    remediation: nonEmpty({ maxInFlight: record(strategy['remediation'])['maxInFlight'] }),
  };
}

/** The v1beta1 `strategy` rebuilt from the three v1beta2 places, with nested structs only where something goes. */
export function strategyDown(spec2: Unstructured): Unstructured | undefined {
  const strategy = record(record(spec2['rollout'])['strategy']);
  const rolling = record(strategy['rollingUpdate']);
  return nonEmpty({
    type: stringOrUndefined(strategy['type']),
    rollingUpdate: nonEmpty({
      maxUnavailable: rolling['maxUnavailable'],
      maxSurge: rolling['maxSurge'],
      deletePolicy: stringOrUndefined(record(spec2['deletion'])['order']),
    }),
    remediation: nonEmpty({ maxInFlight: record(spec2['remediation'])['maxInFlight'] }),
  });
}

export function machineDeploymentUp(md1: Unstructured, restored: Unstructured | undefined): Unstructured {
  const spec = record(md1['spec']);
  const status = record(md1['status']);
  const { current, deprecated } = statusBucketsUp(status, OLD_FIELDS, { alwaysDeprecated: true });
  return compact({
    ...md1,
    spec: compact({
      clusterName: spec['clusterName'],
      replicas: spec['replicas'],
      selector: spec['selector'],
      template: machineTemplateUp(spec['template'], numberOrUndefined(spec['minReadySeconds']), 'spec.template'),
      ...rolloutUp(spec['strategy'], spec['rolloutAfter']),
      machineNaming: nonEmpty({ template: record(spec['machineNamingStrategy'])['template'] }),
      paused: explicitZero<boolean>(spec['paused'], record(restored?.['spec'])['paused']),
    }),
    status: md1['status'] === undefined
      ? undefined
      : compact({
          replicas: numberOrUndefined(status['replicas']) ?? 0,
          ...Object.fromEntries(COPIED_STATUS.map((f) => [f, status[f]])),
          conditions: current['conditions'],
          ...Object.fromEntries(NEW_COUNTERS.map((f) => [f, current[f]])),
          deprecated,
        }),
  });
}

export function machineDeploymentDown(md2: Unstructured, lookup: ApiVersionLookup): Unstructured {
  const namespace = stringOrUndefined(record(md2['metadata'])['namespace']);
  const spec = record(md2['spec']);
  const status = record(md2['status']);
  const { old, v1beta2 } = statusBucketsDown(status, NEW_COUNTERS);
  const md1 = compact({
    ...md2,
    spec: compact({
      clusterName: spec['clusterName'],
      replicas: spec['replicas'],
      selector: spec['selector'],
      template: machineTemplateDown(spec['template'], namespace, lookup),
      minReadySeconds: numberOrUndefined(record(record(spec['template'])['spec'])['minReadySeconds']),
      rolloutAfter: stringOrUndefined(record(spec['rollout'])['after']),
      strategy: strategyDown(spec),
      machineNamingStrategy: nonEmpty({ template: stringOrUndefined(record(spec['machineNaming'])['template']) }),
      paused: spec['paused'] === true,
    }),
    status: md2['status'] === undefined
      ? undefined
      : compact({
          replicas: numberOrUndefined(status['replicas']) ?? 0,
          ...Object.fromEntries(COPIED_STATUS.map((f) => [f, status[f]])),
          ...old,
          v1beta2,
        }),
  });
  storeConversionData(md2, md1);
  return md1;
}
