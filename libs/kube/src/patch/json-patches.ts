// The two patch formats a client sends besides apply: RFC 7386 merge patch and RFC 6902 JSON patch.

import { deepEqual, isPlainObject as isObject } from './json-diff.js';
import type { JsonPatchOperation } from '../resource-client.js';

type Json = unknown;

/** A JSON patch that cannot be applied (a failed `test`, a path that is not there): the server answers 422. */
export class JsonPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPatchError';
  }
}

/** RFC 7386: objects merge member by member, `null` removes, anything else replaces. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: Json, path: string): { parent: Record<string, Json> | Json[]; key: string } {
  const parts = pointer(path);
  if (parts.length === 0) throw new JsonPatchError('the whole document cannot be patched');
  let node = doc;
  for (const part of parts.slice(0, -1)) {
    node = Array.isArray(node) ? node[Number(part)] : isObject(node) ? node[part] : undefined;
    if (node === undefined) throw new JsonPatchError(`path ${path}: no such parent`);
  }
  if (!Array.isArray(node) && !isObject(node))
    throw new JsonPatchError(`path ${path}: parent is not a container`);
  return { parent: node, key: parts[parts.length - 1]! };
}

function read(doc: Json, path: string): Json {
  let node = doc;
  for (const part of pointer(path)) {
    node = Array.isArray(node) ? node[Number(part)] : isObject(node) ? node[part] : undefined;
    if (node === undefined) throw new JsonPatchError(`path ${path}: not found`);
  }
  return node;
}

function index(list: Json[], key: string, adding: boolean): number {
  if (adding && key === '-') return list.length;
  const i = Number(key);
  if (!/^\d+$/.test(key) || i > list.length || (!adding && i === list.length)) {
    throw new JsonPatchError(`array index ${key} out of range`);
  }
  return i;
}

function add(doc: Json, path: string, value: Json): void {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, key, true), 0, structuredClone(value));
  else parent[key] = structuredClone(value);
}

function remove(doc: Json, path: string): Json {
  const { parent, key } = parentOf(doc, path);
  if (Array.isArray(parent)) return parent.splice(index(parent, key, false), 1)[0];
  if (!(key in parent)) throw new JsonPatchError(`path ${path}: not found`);
  const value = parent[key];
  delete parent[key];
  return value;
}

/** RFC 6902, all or nothing: the document is patched on a copy and returned only when every operation applied. */
export function applyJsonPatch(target: Json, operations: readonly JsonPatchOperation[]): Json {
  const doc = structuredClone(target);
  for (const op of operations) {
    switch (op.op) {
      case 'add':
        add(doc, op.path, op.value);
        break;
      case 'remove':
        remove(doc, op.path);
        break;
      case 'replace':
        remove(doc, op.path);
        add(doc, op.path, op.value);
        break;
      case 'move':
        add(doc, op.path, remove(doc, op.from));
        break;
      case 'copy':
        add(doc, op.path, read(doc, op.from));
        break;
      case 'test': {
        const actual = read(doc, op.path);
        if (!deepEqual(actual, op.value)) {
          throw new JsonPatchError(`test operation on ${op.path} failed`);
        }
        break;
      }
    }
  }
  return doc;
}
