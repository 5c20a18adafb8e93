/** An OpenAPI v3 schema node as a CRD carries it (wire field names, e.g. `x-kubernetes-validations`). */
export interface JsonSchema {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema;
  required?: string[];
  anyOf?: JsonSchema[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: { rule: string; message: string; fieldPath?: string; reason?: string }[];
}

/** Key order of every emitted node, so the YAML reads like controller-gen's and diffs stay small. */
const KEY_ORDER: (keyof JsonSchema)[] = [
  'description',
  'type',
  'format',
  'enum',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'anyOf',
  'items',
  'properties',
  'additionalProperties',
  'required',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
];

/** A copy of `node` with keys in canonical order, recursively. */
export function ordered(node: JsonSchema): JsonSchema {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === 'items' || key === 'additionalProperties') out[key] = ordered(value as JsonSchema);
    else if (key === 'anyOf') out[key] = (value as JsonSchema[]).map(ordered);
    else if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, child]) => [name, ordered(child)]),
      );
    } else out[key] = value;
  }
  return out as JsonSchema;
}
