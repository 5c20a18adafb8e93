import type { Unstructured } from '../contract/unstructured.js';
import { storeConversionData } from './conversion-data.js';
import { compact, explicitZero, nonEmpty, record, stringOrUndefined } from './fields.js';
import { machineSpecDown, machineSpecUp } from './machine-spec.js';
import type { ApiVersionLookup } from './references.js';
import { statusBucketsDown, statusBucketsUp } from './status-buckets.js';

const COPIED_STATUS = [
  'nodeInfo',
  'addresses',
  'observedGeneration',
  'lastUpdated',
  'certificatesExpiryDate',
  'deletion',
] as const;

const copied = (status: Unstructured) => Object.fromEntries(COPIED_STATUS.map((f) => [f, status[f]]));

export function machineUp(m1: Unstructured, restored: Unstructured | undefined): Unstructured {
  const spec = record(m1['spec']);
  const status = record(m1['status']);
  const kept = record(restored?.['status']);
  const keptInit = record(kept['initialization']);
  const { current, deprecated } = statusBucketsUp(status, ['failureReason', 'failureMessage'], { alwaysDeprecated: false });
  const nodeName = stringOrUndefined(record(status['nodeRef'])['name']);
  return compact({
    ...m1,
    spec: compact({ ...machineSpecUp(spec, 'spec'), minReadySeconds: record(restored?.['spec'])['minReadySeconds'] }),
    status: nonEmpty({
      conditions: current['conditions'],
      deprecated,
      initialization: nonEmpty({
        bootstrapDataSecretCreated: explicitZero<boolean>(status['bootstrapReady'], keptInit['bootstrapDataSecretCreated']),
        infrastructureProvisioned: explicitZero<boolean>(status['infrastructureReady'], keptInit['infrastructureProvisioned']),
      }),
      nodeRef: nodeName ? { name: nodeName } : undefined,
      ...copied(status),
      // The annotation's phase wins: v1beta1 has no Updating and says Running instead.
      phase: kept['phase'] ?? status['phase'],
      failureDomain: kept['failureDomain'],
    }),
  });
}

export function machineDown(m2: Unstructured, lookup: ApiVersionLookup): Unstructured {
  const namespace = stringOrUndefined(record(m2['metadata'])['namespace']);
  const status = record(m2['status']);
  const init = record(status['initialization']);
  const { old, v1beta2 } = statusBucketsDown(status, []);
  const nodeName = stringOrUndefined(record(status['nodeRef'])['name']);
  const m1 = compact({
    ...m2,
    spec: machineSpecDown(m2['spec'], namespace, lookup),
    status: compact({
      conditions: old['conditions'],
      failureReason: old['failureReason'],
      failureMessage: old['failureMessage'],
      v1beta2,
      bootstrapReady: init['bootstrapDataSecretCreated'] === true,
      infrastructureReady: init['infrastructureProvisioned'] === true,
      nodeRef: nodeName ? { apiVersion: 'v1', kind: 'Node', name: nodeName } : undefined,
      ...copied(status),
      phase: status['phase'] === 'Updating' ? 'Running' : status['phase'],
    }),
  });
  storeConversionData(m2, m1);
  return m1;
}
