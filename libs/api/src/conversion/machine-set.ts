import type { Unstructured } from '../contract/unstructured.js';
import { compact, nonEmpty, numberOrUndefined, record, stringOrUndefined } from './fields.js';
import { machineTemplateDown, machineTemplateUp } from './machine-spec.js';
import type { ApiVersionLookup } from './references.js';
import { statusBucketsDown, statusBucketsUp } from './status-buckets.js';

const NEW_COUNTERS = ['readyReplicas', 'availableReplicas', 'upToDateReplicas'] as const;
const OLD_FIELDS = ['readyReplicas', 'availableReplicas', 'fullyLabeledReplicas', 'failureReason', 'failureMessage'];

/** MachineSet, up. It writes and reads no conversion-data annotation: v1beta1 can say all v1beta2 can. */
export function machineSetUp(ms1: Unstructured): Unstructured {
  const spec = record(ms1['spec']);
  const status = record(ms1['status']);
  const minReady = numberOrUndefined(spec['minReadySeconds']);
  const { current, deprecated } = statusBucketsUp(status, OLD_FIELDS, { alwaysDeprecated: true });
  return compact({
    ...ms1,
    spec: compact({
      clusterName: spec['clusterName'],
      replicas: spec['replicas'],
      selector: spec['selector'],
      template: machineTemplateUp(spec['template'], minReady === 0 ? undefined : minReady, 'spec.template'),
      deletion: nonEmpty({ order: stringOrUndefined(spec['deletePolicy']) }),
      machineNaming: nonEmpty({ template: record(spec['machineNamingStrategy'])['template'] }),
    }),
    status: ms1['status'] === undefined
      ? undefined
      : compact({
          replicas: numberOrUndefined(status['replicas']) ?? 0,
          selector: status['selector'],
          observedGeneration: status['observedGeneration'],
          versions: status['versions'],
          conditions: current['conditions'],
          ...Object.fromEntries(NEW_COUNTERS.map((f) => [f, current[f]])),
          deprecated,
        }),
  });
}

export function machineSetDown(ms2: Unstructured, lookup: ApiVersionLookup): Unstructured {
  const namespace = stringOrUndefined(record(ms2['metadata'])['namespace']);
  const spec = record(ms2['spec']);
  const status = record(ms2['status']);
  const minReady = numberOrUndefined(record(record(spec['template'])['spec'])['minReadySeconds']);
  const { old, v1beta2 } = statusBucketsDown(status, NEW_COUNTERS);
  return compact({
    ...ms2,
    spec: compact({
      clusterName: spec['clusterName'],
      replicas: spec['replicas'],
      selector: spec['selector'],
      template: machineTemplateDown(spec['template'], namespace, lookup),
      minReadySeconds: minReady === 0 ? undefined : minReady,
      deletePolicy: stringOrUndefined(record(spec['deletion'])['order']),
      machineNamingStrategy: nonEmpty({ template: stringOrUndefined(record(spec['machineNaming'])['template']) }),
    }),
    status: ms2['status'] === undefined
      ? undefined
      : compact({
          replicas: numberOrUndefined(status['replicas']) ?? 0,
          selector: status['selector'],
          observedGeneration: status['observedGeneration'],
          versions: status['versions'],
          ...old,
          v1beta2,
        }),
  });
}
