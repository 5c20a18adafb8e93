import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { IsEmail, IsOptional, IsString } from 'class-validator';
import { parse } from 'yaml';
import { Description, Nested } from '../schema/decorators.js';
import { IsIntOrString } from '../schema/validators.js';
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

/** Every problem that makes a schema non-structural or unhelpful, with its path. */
function structuralProblems(node: JsonSchema, path: string): string[] {
  const problems: string[] = [];
  if ('$ref' in node) problems.push(`${path}: $ref`);
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
    problems.push(...structuralProblems(child, childPath));
  }
  if (node.items) problems.push(...structuralProblems(node.items, `${path}[]`));
  if (node.additionalProperties) problems.push(...structuralProblems(node.additionalProperties, `${path}{}`));
  return problems;
}

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
      structuralProblems(crd.spec.versions[0]!.schema.openAPIV3Schema, '').map(
        (p) => `${crd.spec.names.kind}${p}`,
      ),
    );
    expect(problems).toEqual([]);
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
});
