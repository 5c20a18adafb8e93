import type { ReportedCondition } from '../conditions/conditions.js';
import {
  MACHINE_ADDRESS_TYPES,
  type APIEndpoint,
  type FailureDomain,
  type MachineAddress,
} from '../types/common.js';
import type { ContractVersion } from './contract-version.js';
import { arrayAt, integerAt, isRecord, recordAt, stringAt } from './unstructured.js';

// Fields several provider contracts share. `contract` undefined means: the v1beta2 field, else the v1beta1 one.

/**
 * The conditions a provider object reports, ready for `mirrorCondition`. A v1beta1-contract provider that already
 * reports metav1 conditions keeps them under `status.v1beta2.conditions`; those win over its v1beta1 ones.
 */
export function readConditions(obj: unknown, contract?: ContractVersion): ReportedCondition[] {
  const v1beta2Shaped =
    contract === 'v1beta2' ? undefined : arrayAt(obj, ['status', 'v1beta2', 'conditions']);
  const raw = v1beta2Shaped ?? arrayAt(obj, ['status', 'conditions']) ?? [];
  const conditions: ReportedCondition[] = [];
  for (const item of raw) {
    if (!isRecord(item) || typeof item['type'] !== 'string' || typeof item['status'] !== 'string') continue;
    conditions.push({
      type: item['type'],
      status: item['status'],
      ...(typeof item['reason'] === 'string' ? { reason: item['reason'] } : {}),
      ...(typeof item['message'] === 'string' ? { message: item['message'] } : {}),
      ...(typeof item['lastTransitionTime'] === 'string'
        ? { lastTransitionTime: item['lastTransitionTime'] }
        : {}),
      ...(Number.isInteger(item['observedGeneration'])
        ? { observedGeneration: item['observedGeneration'] as number }
        : {}),
    });
  }
  return conditions;
}

/** `spec.controlPlaneEndpoint` when both host and port are set (upstream APIEndpoint.IsValid). */
export function readEndpoint(obj: unknown): APIEndpoint | undefined {
  const host = stringAt(obj, ['spec', 'controlPlaneEndpoint', 'host']);
  const port = integerAt(obj, ['spec', 'controlPlaneEndpoint', 'port']);
  return host && port ? { host, port } : undefined;
}

function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function failureDomain(name: string, value: Record<string, unknown>): FailureDomain {
  const attributes = stringMap(value['attributes']);
  return {
    name,
    ...(typeof value['controlPlane'] === 'boolean' ? { controlPlane: value['controlPlane'] } : {}),
    ...(attributes ? { attributes } : {}),
  };
}

/**
 * `status.failureDomains` in the v1beta2 shape `[{name, controlPlane, attributes}]`; a v1beta1 map
 * `{name: {controlPlane, attributes}}` is converted (sorted by name). Undefined when the provider reports none.
 */
export function readFailureDomains(obj: unknown, contract?: ContractVersion): FailureDomain[] | undefined {
  const list = contract === 'v1beta1' ? undefined : arrayAt(obj, ['status', 'failureDomains']);
  if (list)
    return list
      .filter(isRecord)
      .filter((fd) => typeof fd['name'] === 'string')
      .map((fd) => failureDomain(fd['name'] as string, fd));
  const map = contract === 'v1beta2' ? undefined : recordAt(obj, ['status', 'failureDomains']);
  if (!map) return undefined;
  return Object.keys(map)
    .sort()
    .filter((name) => isRecord(map[name]))
    .map((name) => failureDomain(name, map[name] as Record<string, unknown>));
}

const ADDRESS_TYPES: readonly string[] = MACHINE_ADDRESS_TYPES;

/** `status.addresses` (same path in both contracts), keeping only well-formed entries. */
export function readAddresses(obj: unknown): MachineAddress[] {
  return (arrayAt(obj, ['status', 'addresses']) ?? [])
    .filter(isRecord)
    .filter(
      (a) =>
        typeof a['address'] === 'string' &&
        a['address'] !== '' &&
        ADDRESS_TYPES.includes(a['type'] as string),
    )
    .map((a) => ({ type: a['type'] as MachineAddress['type'], address: a['address'] as string }));
}
