import { deepEqual, isPlainObject as isObject } from '../../patch/json-diff.js';

// Which field manager owns which fields of one object (the API server's managedFields), as far as server-side apply
// needs it: a manager's next apply removes the fields it applied before and no longer applies, unless another manager
// owns them too. Lists are atomic (one field) here; the real server merges lists its schema marks as maps.

type Json = unknown;
type Obj = Record<string, Json>;


/** metadata the server sets itself: no manager owns it. */
const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'generateName',
  'selfLink',
]);

/** The part of an object a write to the main resource (`main`) or to the status subresource (`status`) may set. */
export type WriteScope = 'main' | 'status';

const SEPARATOR = '\u0001';
const join = (path: readonly string[]) => path.join(SEPARATOR);
const split = (key: string) => key.split(SEPARATOR);

/** The leaf fields of `obj` in `scope`: scalars, lists and empty objects, as joined paths. */
export function leafFields(obj: Json, scope: WriteScope): Set<string> {
  const fields = new Set<string>();
  const walk = (value: Json, path: string[]) => {
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) {
        if (child !== undefined) walk(child, [...path, key]);
      }
    } else fields.add(join(path));
  };
  if (!isObject(obj)) return fields;
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion' || key === 'kind' || value === undefined) continue;
    if ((key === 'status') !== (scope === 'status')) continue;
    if (key === 'metadata' && isObject(value)) {
      for (const [field, child] of Object.entries(value)) {
        if (!SERVER_METADATA.has(field) && child !== undefined) walk(child, ['metadata', field]);
      }
    } else walk(value, [key]);
  }
  return fields;
}

function valueAt(obj: Json, key: string): Json {
  let node = obj;
  for (const part of split(key)) node = isObject(node) ? node[part] : undefined;
  return node;
}

/** Removes the field at `key` from `obj` (in place); its parents stay. */
export function removeField(obj: Json, key: string): void {
  const path = split(key);
  let node = obj;
  for (const part of path.slice(0, -1)) {
    node = isObject(node) ? node[part] : undefined;
    if (!isObject(node)) return;
  }
  if (isObject(node)) delete node[path[path.length - 1]!];
}

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  subresource?: 'status';
  apiVersion: string;
  time: string;
  fields: Set<string>;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

export interface FieldWrite {
  manager: string;
  scope: WriteScope;
  apiVersion: string;
  time: string;
}

export class FieldOwnership {
  private entries: Entry[] = [];

  /** An update (create, replace, patch) takes the fields it changed or added; removed fields are no one's. */
  update(write: FieldWrite, before: Json, after: Json): void {
    const previous = leafFields(before, write.scope);
    const now = leafFields(after, write.scope);
    const changed = new Set<string>();
    for (const key of now) {
      if (!previous.has(key) || !deepEqual(valueAt(before, key), valueAt(after, key))) {
        changed.add(key);
      }
    }
    for (const entry of this.entries) {
      if (scopeOf(entry) !== write.scope) continue;
      for (const key of entry.fields) if (!now.has(key)) entry.fields.delete(key);
    }
    if (changed.size > 0) this.take(write, 'Update', changed, false);
    this.prune();
  }

  /**
   * A forced apply of `applied` over `merged` (the object with the applied fields merged in, changed in place): the
   * fields this manager applied last time and not now are removed unless another manager owns them; every applied
   * field becomes this manager's alone.
   */
  apply(write: FieldWrite, applied: Json, merged: Json): void {
    const fields = leafFields(applied, write.scope);
    const mine = this.find(write.manager, 'Apply', write.scope);
    for (const key of mine?.fields ?? []) {
      if (fields.has(key)) continue;
      const sharedWith = this.entries.some((e) => e !== mine && scopeOf(e) === write.scope && e.fields.has(key));
      if (!sharedWith) removeField(merged, key);
    }
    this.take(write, 'Apply', fields, true);
    this.prune();
  }

  /** An independent copy (a dry run changes it and throws it away). */
  copy(): FieldOwnership {
    const copy = new FieldOwnership();
    copy.entries = this.entries.map((e) => ({ ...e, fields: new Set(e.fields) }));
    return copy;
  }

  /** The entries in the form of `metadata.managedFields`. */
  managedFields(): ManagedFieldsEntry[] {
    return this.entries.map((e) => ({
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1(e.fields),
      ...(e.subresource ? { subresource: e.subresource } : {}),
    }));
  }

  private find(manager: string, operation: Entry['operation'], scope: WriteScope): Entry | undefined {
    return this.entries.find((e) => e.manager === manager && e.operation === operation && scopeOf(e) === scope);
  }

  private take(write: FieldWrite, operation: Entry['operation'], fields: Set<string>, replace: boolean): void {
    let entry = this.find(write.manager, operation, write.scope);
    if (!entry) {
      entry = {
        manager: write.manager,
        operation,
        apiVersion: write.apiVersion,
        time: write.time,
        fields: new Set(),
        ...(write.scope === 'status' ? { subresource: 'status' as const } : {}),
      };
      this.entries.push(entry);
    }
    for (const other of this.entries) {
      if (other === entry || scopeOf(other) !== write.scope) continue;
      for (const key of fields) other.fields.delete(key);
    }
    entry.fields = replace ? new Set(fields) : new Set([...entry.fields, ...fields]);
    entry.time = write.time;
  }

  private prune(): void {
    this.entries = this.entries.filter((e) => e.fields.size > 0);
  }
}

const scopeOf = (entry: Entry): WriteScope => (entry.subresource === 'status' ? 'status' : 'main');

function fieldsV1(fields: Set<string>): Obj {
  const root: Obj = {};
  for (const key of fields) {
    let node = root;
    for (const part of split(key)) node = (node[`f:${part}`] ??= {}) as Obj;
  }
  return root;
}
