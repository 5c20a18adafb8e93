import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { IsArray, IsEmail, IsOptional, IsString } from 'class-validator';
import { parse } from 'yaml';
import { Description, Nested, NestedMap } from '../schema/decorators.js';
import { IsFreeFormJson, IsFreeFormObject, IsIntOrString } from '../schema/validators.js';
import type { CustomResourceDefinition } from './crd-builder.js';
import { REGENERATE_COMMAND, buildCrds, defaultCrdDirectory, generateCrds } from './generate.js';
import type { JsonSchema } from './json-schema.js';
import { SchemaDefinitionError, objectSchema } from './schema-builder.js';

describe('checked-in CRDs', () => {
  const dir = defaultCrdDirectory();
  const generated = generateCrds();

  it('match what the classes generate', () => {
    const stale = Object.entries(generated).filter(
      ([name, content]) => !existsSync(join(dir, name)) || readFileSync(join(dir, name), 'utf8') !== content,
    );
    if (stale.length > 0) {
      throw new Error(
        `deploy/crds is out of date with libs/api/src/types (${stale.map(([name]) => name).join(', ')}): run ${REGENERATE_COMMAND}`,
      );
    }
  });

  it('contain no manifest the generator no longer produces', () => {
    const extra = readdirSync(dir).filter((name) => name.endsWith('.yaml') && !(name in generated));
    if (extra.length > 0)
      throw new Error(
        `deploy/crds has files no class generates (${extra.join(', ')}): run ${REGENERATE_COMMAND}`,
      );
  });

  it('list every CRD in the kustomization', () => {
    const kustomization = parse(generated['kustomization.yaml']!) as { resources: string[] };
    expect(kustomization.resources).toEqual(
      Object.keys(generated)
        .filter((n) => n !== 'kustomization.yaml')
        .sort(),
    );
  });
});

/**
 * Every problem that makes a schema non-structural or unhelpful, with its path. `freeForm` are the paths declared
 * free-form JSON (IsFreeFormJson): there, and only there, a node is untyped and preserves what it holds.
 */
function structuralProblems(
  node: JsonSchema,
  path: string,
  freeForm: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  if ('$ref' in node) problems.push(`${path}: $ref`);
  if (freeForm.has(path)) {
    const { description: _description, ...rest } = node;
    if (JSON.stringify(rest) !== JSON.stringify({ 'x-kubernetes-preserve-unknown-fields': true }))
      problems.push(`${path}: declared free-form JSON but not just x-kubernetes-preserve-unknown-fields`);
    return problems;
  }
  if (!node.type && !node['x-kubernetes-int-or-string']) problems.push(`${path}: no type`);
  for (const branch of node.anyOf ?? []) {
    if (branch.description || branch.properties)
      problems.push(`${path}: anyOf branch with description or properties`);
  }
  if (node['x-kubernetes-preserve-unknown-fields'] && path !== '.metadata')
    problems.push(`${path}: preserves unknown fields`);
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const childPath = `${path}.${name}`;
    if (!child.description && childPath !== '.metadata') problems.push(`${childPath}: no description`);
    problems.push(...structuralProblems(child, childPath, freeForm));
  }
  if (node.items) problems.push(...structuralProblems(node.items, `${path}[]`, freeForm));
  if (node.additionalProperties)
    problems.push(...structuralProblems(node.additionalProperties, `${path}{}`, freeForm));
  return problems;
}

/** The paths of every node that keeps unknown fields. */
function preservingPaths(node: JsonSchema, path: string): string[] {
  return [
    ...(node['x-kubernetes-preserve-unknown-fields'] ? [path] : []),
    ...Object.entries(node.properties ?? {}).flatMap(([name, child]) =>
      preservingPaths(child, `${path}.${name}`),
    ),
    ...(node.items ? preservingPaths(node.items, `${path}[]`) : []),
    ...(node.additionalProperties ? preservingPaths(node.additionalProperties, `${path}{}`) : []),
  ];
}

/** A variable schema's fields upstream's CRD leaves free-form: the recursive ones and the JSON values. */
const VARIABLE_SCHEMA_FREE_FORM = [
  'additionalProperties',
  'allOf',
  'anyOf',
  'default',
  'enum[]',
  'example',
  'items',
  'not',
  'oneOf',
  'properties',
];

/** Per kind, the fields declared free-form JSON, as upstream's CRDs render them; every other node is typed. */
const DECLARED_FREE_FORM: Record<string, readonly string[]> = {
  Cluster: [
    '.spec.topology.variables[].value',
    '.spec.topology.controlPlane.variables.overrides[].value',
    '.spec.topology.workers.machineDeployments[].variables.overrides[].value',
    '.spec.topology.workers.machinePools[].variables.overrides[].value',
  ],
  ClusterClass: [
    '.spec.patches[].definitions[].jsonPatches[].value',
    ...VARIABLE_SCHEMA_FREE_FORM.map((f) => `.spec.variables[].schema.openAPIV3Schema.${f}`),
    ...VARIABLE_SCHEMA_FREE_FORM.map((f) => `.status.variables[].definitions[].schema.openAPIV3Schema.${f}`),
  ],
};

/** Kinds upstream declares without short names. */
const UPSTREAM_KINDS_WITHOUT_SHORT_NAMES = [
  'MachineDrainRule',
  'ClusterResourceSet',
  'ClusterResourceSetBinding',
  'IPAddressClaim',
  'IPAddress',
];

describe('generated CRDs', () => {
  const crds: CustomResourceDefinition[] = buildCrds();
  const byKind = (kind: string) => crds.find((c) => c.spec.names.kind === kind)!;

  it('have structural, fully described schemas', () => {
    const problems = crds.flatMap((crd) =>
      structuralProblems(
        crd.spec.versions[0]!.schema.openAPIV3Schema,
        '',
        new Set(DECLARED_FREE_FORM[crd.spec.names.kind] ?? []),
      ).map((p) => `${crd.spec.names.kind}${p}`),
    );
    expect(problems).toEqual([]);
  });

  it('keep unknown fields only in the declared free-form fields', () => {
    for (const crd of crds) {
      const preserving = preservingPaths(crd.spec.versions[0]!.schema.openAPIV3Schema, '');
      expect([crd.spec.names.kind, preserving.sort()]).toEqual([
        crd.spec.names.kind,
        [...(DECLARED_FREE_FORM[crd.spec.names.kind] ?? [])].sort(),
      ]);
    }
  });

  it('render ClusterClass as upstream: free-form JSON untyped, variable schemas schemaless below their root', () => {
    const cc = byKind('ClusterClass');
    expect(cc.spec.scope).toBe('Namespaced');
    expect(cc.spec.names).toMatchObject({
      plural: 'clusterclasses',
      singular: 'clusterclass',
      shortNames: ['cc'],
    });
    const spec = cc.spec.versions[0]!.schema.openAPIV3Schema.properties!['spec']!;
    const value =
      spec.properties!['patches']!.items!.properties!['definitions']!.items!.properties!['jsonPatches']!
        .items!.properties!['value']!;
    expect(value).toEqual({ description: expect.any(String), 'x-kubernetes-preserve-unknown-fields': true });
    const schema =
      spec.properties!['variables']!.items!.properties!['schema']!.properties!['openAPIV3Schema']!;
    expect(schema).toMatchObject({ type: 'object', minProperties: 1 });
    expect(schema.properties!['enum']).toMatchObject({ type: 'array', maxItems: 100 });
    expect(schema.properties!['enum']!.items).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(schema.properties!['x-kubernetes-validations']).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['rule'],
    });
    expect(schema.properties!['x-kubernetes-validations']!.items!.properties!['reason']!.default).toBe(
      'FieldValueInvalid',
    );
    expect(cc.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Paused',
      'Variables Ready',
      'Age',
    ]);
  });

  it('carry the contract label, the cluster-api category, a status subresource and short names', () => {
    for (const crd of crds) {
      // Upstream's core groups (cluster, addons, ipam, runtime) speak v1beta2; Capstan's providers v1alpha1.
      const provider = !crd.spec.group.endsWith('cluster.x-k8s.io');
      expect(crd.metadata.labels['cluster.x-k8s.io/v1beta2']).toBe(provider ? 'v1alpha1' : 'v1beta2');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${crd.spec.group}`);
      expect(crd.spec.names.categories).toEqual(['cluster-api']);
      if (!UPSTREAM_KINDS_WITHOUT_SHORT_NAMES.includes(crd.spec.names.kind))
        expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
      expect(crd.spec.versions[0]!.subresources.status).toEqual({});
    }
    expect(byKind('Cluster').spec.names.shortNames).toEqual(['cl']);
    expect(byKind('MachineHealthCheck').spec.names.shortNames).toContain('mhc');
    expect(byKind('K3sControlPlane').spec.names.shortNames).toContain('kcp');
    expect(byKind('MachinePool').spec.names.shortNames).toEqual(['mp']);
    expect(byKind('ExtensionConfig').spec.names.shortNames).toEqual(['ext']);
    expect(byKind('ClusterClass').spec.names.shortNames).toEqual(['cc']);
    for (const kind of UPSTREAM_KINDS_WITHOUT_SHORT_NAMES)
      expect(byKind(kind).spec.names.shortNames).toEqual([]);
  });

  it('are namespaced except ExtensionConfig, as upstream', () => {
    const clusterScoped = crds.filter((c) => c.spec.scope === 'Cluster').map((c) => c.spec.names.kind);
    expect(clusterScoped).toEqual(['ExtensionConfig']);
  });

  it('have the scale subresource exactly where upstream has one', () => {
    const scaled = crds.filter((c) => c.spec.versions[0]!.subresources.scale).map((c) => c.spec.names.kind);
    expect(scaled.sort()).toEqual(['K3sControlPlane', 'MachineDeployment', 'MachinePool', 'MachineSet']);
    expect(byKind('MachineSet').spec.versions[0]!.subresources.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.selector',
    });
  });

  it('render conditions as metav1.Condition, a map keyed by type', () => {
    const status = byKind('Machine').spec.versions[0]!.schema.openAPIV3Schema.properties!['status']!;
    const conditions = status.properties!['conditions']!;
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(conditions.items!.required).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
    expect(conditions.items!.properties!['lastTransitionTime']).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    expect(conditions.items!.properties!['status']!.enum).toEqual(['True', 'False', 'Unknown']);
  });

  it('render int-or-string fields the way the API server expects', () => {
    const spec = byKind('MachineDeployment').spec.versions[0]!.schema.openAPIV3Schema.properties!['spec']!;
    const rollingUpdate = spec.properties!['rollout']!.properties!['strategy']!.properties!['rollingUpdate']!;
    expect(rollingUpdate.properties!['maxSurge']).toMatchObject({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      default: 1,
    });
  });
});

describe('schema builder', () => {
  it('refuses a property without a description', () => {
    class Undocumented {
      @IsString()
      name!: string;
    }
    expect(() => objectSchema(Undocumented)).toThrow(SchemaDefinitionError);
    expect(() => objectSchema(Undocumented)).toThrow('Undocumented.name: missing @Description');
  });

  it('refuses a validator it cannot express in a CRD schema', () => {
    class Contact {
      @Description('email address')
      @IsEmail()
      email!: string;
    }
    expect(() => objectSchema(Contact)).toThrow('Contact.email: no CRD schema mapping for validator isEmail');
  });

  it('inlines nested classes, marks optional fields and keeps int-or-string untyped', () => {
    class Inner {
      @Description('a value')
      @IsIntOrString()
      value!: number | string;
    }
    class Outer {
      @Description('the inner object')
      @IsOptional()
      @Nested(() => Inner)
      inner?: Inner;

      @Description('a name')
      @IsString()
      name!: string;
    }
    const schema = objectSchema(Outer);
    expect(schema.required).toEqual(['name']);
    expect(schema.properties!['inner']).toEqual({
      type: 'object',
      description: 'the inner object',
      required: ['value'],
      properties: {
        value: {
          description: 'a value',
          'x-kubernetes-int-or-string': true,
          anyOf: [{ type: 'integer' }, { type: 'string' }],
        },
      },
    });
  });

  it('renders a map of objects as additionalProperties, its keys checked by a CEL rule, and refuses other checks', () => {
    class Value {
      @Description('a count')
      @IsString()
      count!: string;
    }
    const limits = {
      maxProperties: 4,
      keyMaxLength: 10,
      keyPattern: /^[a-z]+\.io$/,
      keyMessage: "keys must be like 'x.io'",
    };
    class Holder {
      @Description('values by host')
      @IsOptional()
      @NestedMap(() => Value, limits)
      byHost?: Record<string, Value>;
    }
    expect(objectSchema(Holder).properties!['byHost']).toEqual({
      type: 'object',
      description: 'values by host',
      maxProperties: 4,
      additionalProperties: {
        type: 'object',
        properties: { count: { type: 'string', description: 'a count' } },
        required: ['count'],
      },
      'x-kubernetes-validations': [
        // The pattern's backslash is escaped in the CEL string literal, so CEL reads the pattern as written.
        {
          rule: "self.all(key, size(key) <= 10 && key.matches('^[a-z]+\\\\.io$'))",
          message: "keys must be like 'x.io'",
        },
      ],
    });
    class Typed {
      @Description('values by host')
      @IsString()
      @NestedMap(() => Value, limits)
      byHost!: Record<string, Value>;
    }
    expect(() => objectSchema(Typed)).toThrow('Typed.byHost: a map of objects takes no other value check');
  });

  it('renders free-form JSON without a type, items included, and refuses it with a type check', () => {
    class Patch {
      @Description('any JSON value')
      @IsFreeFormJson()
      value!: unknown;

      @Description('any JSON values')
      @IsOptional()
      @IsArray()
      @IsFreeFormJson({ each: true })
      values?: unknown[];
    }
    const schema = objectSchema(Patch);
    expect(schema.properties!['value']).toEqual({
      description: 'any JSON value',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(schema.properties!['values']!.items).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    class Typed {
      @Description('a string or anything?')
      @IsString()
      @IsFreeFormJson()
      value!: unknown;
    }
    expect(() => objectSchema(Typed)).toThrow(
      'Typed.value: a free-form JSON value takes no other type check',
    );
  });

  it('lets the structural check pass untyped and preserving nodes only where free-form JSON is declared', () => {
    class Patch {
      @Description('any JSON value')
      @IsFreeFormJson()
      value!: unknown;

      @Description('an object nobody declared free-form')
      @IsFreeFormObject()
      extra!: object;
    }
    const schema = objectSchema(Patch);
    expect(structuralProblems(schema, '')).toEqual([
      '.value: no type',
      '.value: preserves unknown fields',
      '.extra: preserves unknown fields',
    ]);
    expect(structuralProblems(schema, '', new Set(['.value']))).toEqual(['.extra: preserves unknown fields']);
    // Declaring a typed node free-form does not hide it either.
    expect(structuralProblems(schema, '', new Set(['.value', '.extra']))).toEqual([
      '.extra: declared free-form JSON but not just x-kubernetes-preserve-unknown-fields',
    ]);
  });
});
