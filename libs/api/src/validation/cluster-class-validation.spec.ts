import { clusterClass } from '../../test/examples.js';
import { validateClusterClass } from './cluster-class-validation.js';
import { compareVersionsWithBuildTags, parseTolerantVersion } from './kubernetes-syntax.js';

type Obj = Record<string, unknown>;
type Spec = {
  variables: Obj[];
  patches: { name: string; definitions?: { selector: Obj; jsonPatches: Obj[] }[] }[];
  controlPlane: Obj;
  workers: { machineDeployments: Obj[]; machinePools?: Obj[] };
  kubernetesVersions?: string[];
};

function withSpec(change: (spec: Spec) => void): Obj {
  const copy = structuredClone(clusterClass()) as unknown as Obj & { spec: Spec };
  change(copy.spec);
  return copy;
}
const jsonPatch = (patch: Obj) =>
  withSpec((s) => {
    s.patches[0]!.definitions![0]!.jsonPatches = [patch];
  });
const variableSchema = (openAPIV3Schema: unknown) =>
  withSpec((s) => {
    s.variables = [{ name: 'v', required: false, schema: { openAPIV3Schema } }];
    delete (s as Partial<Spec>).patches;
  });
const paths = (obj: Obj) => validateClusterClass(obj).map((i) => i.path);

describe('ClusterClass validation beyond CEL', () => {
  it('accepts the quick start ClusterClass', () => {
    expect(validateClusterClass(clusterClass())).toEqual([]);
  });

  it('needs a spec', () => {
    expect(validateClusterClass({ kind: 'ClusterClass' })).toEqual([{ path: 'spec', message: 'Required value' }]);
  });

  describe('variables', () => {
    it('refuses a variable name defined twice, at the second', () => {
      const obj = withSpec((s) => s.variables.push(structuredClone(s.variables[0]!)));
      expect(validateClusterClass(obj)).toEqual([
        {
          path: 'spec.variables[2].name',
          message: 'variable name must be unique: "imageRepository" is defined more than once (first at spec.variables[0])',
        },
      ]);
    });

    it('refuses bad label keys and annotation keys in the variable metadata', () => {
      const obj = withSpec((s) => {
        s.variables[0]!['deprecatedV1Beta1Metadata'] = { labels: { 'bad key': 'x' }, annotations: { 'a/b/c': 'x' } };
        (s.variables[0]!['schema'] as { openAPIV3Schema: Obj }).openAPIV3Schema['x-metadata'] = { labels: { ok: '-bad-' } };
      });
      expect(paths(obj)).toEqual([
        'spec.variables[0].deprecatedV1Beta1Metadata.labels',
        'spec.variables[0].deprecatedV1Beta1Metadata.annotations',
        'spec.variables[0].schema.openAPIV3Schema.x-metadata.labels[ok]',
      ]);
    });

    it('needs a type on every schema level, items on arrays, and no type beside x-kubernetes-int-or-string', () => {
      expect(paths(variableSchema({ type: 'object', properties: { a: { description: 'no type' } } }))).toEqual([
        'spec.variables[0].schema.openAPIV3Schema.properties[a].type',
      ]);
      expect(paths(variableSchema({ type: 'array' }))).toEqual(['spec.variables[0].schema.openAPIV3Schema.items']);
      expect(paths(variableSchema({ type: 'string', 'x-kubernetes-int-or-string': true }))).toEqual([
        'spec.variables[0].schema.openAPIV3Schema.type',
      ]);
      expect(paths(variableSchema({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }))).toEqual([]);
      expect(paths(variableSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'date' } } }))).toEqual([
        'spec.variables[0].schema.openAPIV3Schema.properties[a].type',
      ]);
    });

    it('refuses properties with additionalProperties, type or default inside allOf, and a pattern that does not compile', () => {
      expect(validateClusterClass(variableSchema({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }))).toEqual([
        { path: 'spec.variables[0].schema.openAPIV3Schema', message: 'Forbidden: additionalProperties and properties are mutually exclusive' },
      ]);
      expect(paths(variableSchema({ type: 'string', allOf: [{ type: 'string', default: 'x' }] }))).toEqual([
        'spec.variables[0].schema.openAPIV3Schema.allOf[0].type',
        'spec.variables[0].schema.openAPIV3Schema.allOf[0].default',
      ]);
      expect(paths(variableSchema({ type: 'string', pattern: '([a-z' }))).toEqual(['spec.variables[0].schema.openAPIV3Schema.pattern']);
    });

    it('checks defaults, examples and enum values against the schema, defaults for unknown fields too', () => {
      const obj = variableSchema({
        type: 'object',
        properties: {
          port: { type: 'integer', minimum: 1, maximum: 65535, default: 0 },
          name: { type: 'string', maxLength: 3, example: 'toolong', enum: ['a', 7] },
          tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, default: ['a', 'a'] },
        },
        required: ['port'],
        default: { name: 'a', extra: true },
      });
      expect(validateClusterClass(obj)).toEqual([
        { path: 'spec.variables[0].schema.openAPIV3Schema.properties[port].default', message: 'should be greater than or equal to 1' },
        { path: 'spec.variables[0].schema.openAPIV3Schema.properties[name].example', message: 'Unsupported value: must be one of the enum values' },
        { path: 'spec.variables[0].schema.openAPIV3Schema.properties[name].example', message: 'may not be more than 3 characters long' },
        { path: 'spec.variables[0].schema.openAPIV3Schema.properties[name].enum[1]', message: 'Invalid value: must be of type string' },
        { path: 'spec.variables[0].schema.openAPIV3Schema.properties[tags].default', message: 'Duplicate value: items must be unique' },
        { path: 'spec.variables[0].schema.openAPIV3Schema.default.port', message: 'Required value' },
        {
          path: 'spec.variables[0].schema.openAPIV3Schema.default.extra',
          message: 'Unknown field: the schema does not declare it, so it would be pruned',
        },
      ]);
    });

    it('checks the messages and field paths of CEL rules, and oldSelf within items', () => {
      const rules = (r: Obj[]) => ({ type: 'array', items: { type: 'string', 'x-kubernetes-validations': r } });
      expect(
        validateClusterClass(
          variableSchema(
            rules([
              { rule: 'self.size() > 1\n && true' },
              { rule: 'self != oldSelf', message: '  ' },
              { rule: 'true', messageExpression: ' ', fieldPath: '\n' },
              { rule: 'self == oldSelf' },
            ]),
          ),
        ).map((i) => `${i.path}: ${i.message}`),
      ).toEqual([
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[1].message: message must be non-empty if specified',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[1].rule: oldSelf cannot be used on the uncorrelatable portion of the schema (within items)',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[2].messageExpression: Required value: messageExpression must be non-empty if specified',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[2].fieldPath: fieldPath must be non-empty if specified',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[2].fieldPath: fieldPath must not contain line breaks',
        'spec.variables[0].schema.openAPIV3Schema.items.x-kubernetes-validations[3].rule: oldSelf cannot be used on the uncorrelatable portion of the schema (within items)',
      ]);
    });
  });

  describe('patches', () => {
    it('refuses a patch name defined twice', () => {
      const obj = withSpec((s) => s.patches.push(structuredClone(s.patches[1]!)));
      expect(validateClusterClass(obj)).toEqual([
        {
          path: 'spec.patches[2].name',
          message: 'patch names must be unique: "loadBalancer" is defined more than once (first at spec.patches[1])',
        },
      ]);
    });

    it('refuses a JSON patch path outside /spec', () => {
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/metadata/labels', value: {} }))).toEqual([
        { path: 'spec.patches[0].definitions[0].jsonPatches[0].path', message: 'jsonPatch path must start with "/spec"' },
      ]);
    });

    it('allows array indexes only as 0 in an add, and none in a replace or remove', () => {
      const at = 'spec.patches[0].definitions[0].jsonPatches[0].path';
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/list/0', value: 1 }))).toEqual([]);
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/list/-', value: 1 }))).toEqual([]);
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/list/2', value: 1 }))).toEqual([
        { path: at, message: 'arrays can only be accessed using "0" (prepend) or "-" (append)' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'replace', path: '/spec/list/0/a', value: 1 }))).toEqual([
        { path: at, message: 'elements in arrays can not be accessed in a replace operation' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'remove', path: '/spec/list/0' }))).toEqual([
        { path: at, message: 'elements in arrays can not be accessed in a remove operation' },
      ]);
    });

    it('needs exactly one of value and valueFrom for add and replace, and exactly one of template and variable', () => {
      const at = 'spec.patches[0].definitions[0].jsonPatches[0]';
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/a' }))).toEqual([
        { path: at, message: 'jsonPatch must define one of value or valueFrom' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/a', value: 1, valueFrom: { variable: 'imageRepository' } }))).toEqual([
        { path: at, message: 'jsonPatch can not define both value and valueFrom' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/a', valueFrom: {} }))).toEqual([
        { path: `${at}.valueFrom`, message: 'valueFrom must set either template or variable' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'add', path: '/spec/a', valueFrom: { variable: 'imageRepository', template: 'x' } }))).toEqual([
        { path: `${at}.valueFrom`, message: 'valueFrom can not set both template and variable' },
      ]);
      expect(validateClusterClass(jsonPatch({ op: 'remove', path: '/spec/a' }))).toEqual([]);
    });

    it('needs the variables a patch uses to exist, builtin ones among upstream list', () => {
      const at = 'spec.patches[0].definitions[0].jsonPatches[0].valueFrom.variable';
      const from = (variable: string) => jsonPatch({ op: 'add', path: '/spec/a', valueFrom: { variable } });
      expect(validateClusterClass(from('podSecurityStandard.enforce'))).toEqual([]);
      expect(validateClusterClass(from('builtin.machineDeployment.topologyName'))).toEqual([]);
      expect(validateClusterClass(from('builtin.cluster.nope'))).toEqual([{ path: at, message: 'not a defined builtin variable' }]);
      expect(validateClusterClass(from('missing[0]'))).toEqual([
        { path: at, message: 'variable with name "missing" cannot be found in spec.variables' },
      ]);
    });

    it('needs each enabled selector to match a template of the class', () => {
      const selector = (s: Obj) =>
        withSpec((spec) => {
          spec.patches[1]!.definitions![0]!.selector = s;
        });
      const docker = { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'DockerMachineTemplate' };
      expect(paths(selector({ ...docker, matchResources: { infrastructureCluster: true } }))).toEqual([
        'spec.patches[1].definitions[0].selector.matchResources.infrastructureCluster',
      ]);
      // The control plane's machineInfrastructure is a DockerMachineTemplate.
      expect(paths(selector({ ...docker, matchResources: { controlPlane: true } }))).toEqual([]);
      expect(paths(selector({ ...docker, kind: 'Other', matchResources: { controlPlane: true } }))).toEqual([
        'spec.patches[1].definitions[0].selector.matchResources.controlPlane',
      ]);
      expect(paths(selector({ ...docker, matchResources: { machineDeploymentClass: { names: ['default-worker', 'default-*', '*-worker', '*', 'other'] } } }))).toEqual([
        'spec.patches[1].definitions[0].selector.matchResources.machineDeploymentClass.names[4]',
      ]);
      expect(validateClusterClass(selector({ ...docker, matchResources: { machinePoolClass: { names: ['a*b', 'c'] } } }))).toEqual([
        {
          path: 'spec.patches[1].definitions[0].selector.matchResources.machinePoolClass.names[0]',
          message: '"*" rune can only appear at the beginning, or ending of the selector',
        },
      ]);
      expect(validateClusterClass(selector({ ...docker, matchResources: { machineDeploymentClass: { names: ['*a*'] } } }))[0]?.message).toBe(
        'selector can at most contain a single "*" rune',
      );
    });
  });

  describe('kubernetesVersions', () => {
    const versions = (kubernetesVersions: string[]) => validateClusterClass(withSpec((s) => (s.kubernetesVersions = kubernetesVersions)));

    it('accepts ascending versions with minor steps of one, and build identifiers without order', () => {
      expect(versions(['v1.32.0', 'v1.32.3', 'v1.33', '1.34.0-rc.1', 'v1.34.0', 'v1.34.0+abc', 'v1.34.0+def'])).toEqual([]);
    });

    it('refuses versions out of order, repeated, skipping a minor, or not semantic', () => {
      expect(versions(['v1.33.1', 'v1.33.0', 'v1.33.0', 'v1.35.0', 'v1.35.0-01'])).toEqual([
        { path: 'spec.kubernetesVersions[1]', message: 'version must be greater than v1.33.1' },
        { path: 'spec.kubernetesVersions[2]', message: 'version must be greater than v1.33.0' },
        { path: 'spec.kubernetesVersions[3]', message: 'expecting a version with minor 33 or 34, found version 1.35.0' },
        { path: 'spec.kubernetesVersions[4]', message: 'version must be a valid semantic version' },
      ]);
    });

    it('reads versions as blang/semver ParseTolerant does', () => {
      expect(parseTolerantVersion(' v1.031 ')).toEqual({ major: 1, minor: 31, patch: 0, preRelease: [], build: [] });
      expect(parseTolerantVersion('1.31-rc.0')).toBeUndefined();
      const [a, b] = [parseTolerantVersion('v1.31.0+k3s1')!, parseTolerantVersion('v1.31.0+k3s2')!];
      expect(compareVersionsWithBuildTags(a, b)).toBe(2);
      expect(compareVersionsWithBuildTags(parseTolerantVersion('1.31.0+1')!, parseTolerantVersion('1.31.0+2')!)).toBe(-1);
      expect(compareVersionsWithBuildTags(parseTolerantVersion('1.31.0-rc.1')!, parseTolerantVersion('1.31.0')!)).toBe(-1);
    });
  });

  describe('metadata and taints', () => {
    it('refuses label and annotation keys Kubernetes refuses, on the control plane and worker classes', () => {
      const obj = withSpec((s) => {
        s.controlPlane['metadata'] = { labels: { 'x/y/z': 'a' } };
        s.workers.machineDeployments[0]!['metadata'] = { annotations: { '-bad': 'a' } };
      });
      expect(paths(obj)).toEqual(['spec.controlPlane.metadata.labels', 'spec.workers.machineDeployments[0].metadata.annotations']);
    });

    it('refuses reserved and malformed taint keys', () => {
      const taint = (key: string) => ({ key, effect: 'NoSchedule' });
      const obj = withSpec((s) => {
        s.controlPlane['taints'] = [taint('node.cluster.x-k8s.io/uninitialized'), taint('node.kubernetes.io/out-of-service')];
        s.workers.machineDeployments[0]!['taints'] = [
          taint('node.kubernetes.io/unreachable'),
          taint('node.cloudprovider.kubernetes.io/x'),
          taint('node-role.kubernetes.io/master'),
          taint('bad key'),
        ];
      });
      expect(validateClusterClass(obj).map((i) => `${i.path}: ${i.message}`)).toEqual([
        'spec.controlPlane.taints[0].key: taint key is not allowed',
        'spec.workers.machineDeployments[0].taints[0].key: taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service',
        'spec.workers.machineDeployments[0].taints[1].key: taint key must not have the prefix node.cloudprovider.kubernetes.io/',
        'spec.workers.machineDeployments[0].taints[2].key: taint is deprecated since 1.24 and should not be used anymore',
        "spec.workers.machineDeployments[0].taints[3].key: the name part must consist of alphanumeric characters, '-', '_' or '.', and start and end with one alphanumeric",
      ]);
    });
  });
});
