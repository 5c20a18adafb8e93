import { since } from '@capstan/describe';

/** What `get` prints where a field is not set: an empty cell would shift the columns of `awk '{print $3}'`. */
export const NONE = '<none>';

export function cell(value: string | number | undefined | null): string {
  return value === undefined || value === null || value === '' ? NONE : String(value);
}

/** `namespace/name`: the sort and lookup key of a namespaced object. */
export const key = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`;

/** AGE as kubectl prints it; the client types say Date, the custom objects API gives the JSON string. */
export function creationAge(created: Date | string | undefined, now: Date): string {
  return created === undefined ? '' : since(new Date(created).toISOString(), now);
}

/** Left-aligned columns three spaces apart, as kubectl's tab writer prints them. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows]
    .map((row) => row.map((value, i) => (i === row.length - 1 ? value : value.padEnd(widths[i]! + 3))).join(''))
    .join('\n');
}

interface Listed {
  metadata?: { managedFields?: unknown };
}

/** `-o json|yaml` output: a v1 List as kubectl prints it, without managedFields (kubectl's default too). */
export function asList<T extends Listed>(items: readonly T[]): { apiVersion: 'v1'; kind: 'List'; metadata: { resourceVersion: '' }; items: T[] } {
  return {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: items.map((item) => {
      if (!item.metadata?.managedFields) return item;
      const { managedFields: _managedFields, ...metadata } = item.metadata;
      // The same object less one optional field: still a T.
      return { ...item, metadata } as T;
    }),
  };
}
