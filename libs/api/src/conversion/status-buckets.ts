import type { Unstructured } from '../contract/unstructured.js';
import { compact, nonEmpty, record } from './fields.js';

// Conditions and counters changed meaning between the versions; each kind's old ones live on in v1beta2 under
// status.deprecated.v1beta1, and v1beta1 carries the new ones under status.v1beta2. Never mixed.

/** v1beta1 status.v1beta2 (new-style fields) and the old fields that go to deprecated.v1beta1, up. */
export function statusBucketsUp(
  status1: Unstructured,
  deprecatedFields: readonly string[],
  { alwaysDeprecated }: { alwaysDeprecated: boolean },
): { current: Unstructured; deprecated: Unstructured | undefined } {
  const v1beta2 = record(status1['v1beta2']);
  const old = compact(Object.fromEntries(['conditions', ...deprecatedFields].map((f) => [f, status1[f]])));
  const deprecated = alwaysDeprecated || Object.keys(old).length > 0 ? { v1beta1: old } : undefined;
  return { current: v1beta2, deprecated };
}

/** v1beta2 status.deprecated.v1beta1 back to the old fields, and the new-style fields into status.v1beta2, down. */
export function statusBucketsDown(
  status2: Unstructured,
  currentFields: readonly string[],
): { old: Unstructured; v1beta2: Unstructured | undefined } {
  const old = record(record(status2['deprecated'])['v1beta1']);
  const v1beta2 = nonEmpty(Object.fromEntries(['conditions', ...currentFields].map((f) => [f, status2[f]])));
  return { old, v1beta2 };
}
