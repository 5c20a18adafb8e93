import { NODE_TAINTS } from '../constants/defaults.js';
import {
  annotationProblems,
  compareVersionsWithBuildTags,
  formatVersion,
  labelProblems,
  parseTolerantVersion,
  qualifiedNameProblems,
  type SemanticVersion,
} from './kubernetes-syntax.js';
import type { ValidationIssue } from './validate.js';
import { variableSchemaProblems } from './variable-schema.js';

// The rules upstream's ClusterClass validating webhook checks (core/webhooks/admission/clusterclass.go,
// patch_validation.go, internal/topology/variables) that the CRD's schema and CEL rules cannot (libs/api/src/types/
// cluster-class.ts says which and why). The object is taken as the API server hands it to admission: already valid
// against the schema and CEL rules, so shapes are read defensively but not reported again. Messages name fields and
// rules, never values (variable and patch names excepted: they are names, not data).

type Obj = Record<string, unknown>;
type Issues = ValidationIssue[];

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: unknown, key: string): Obj | undefined => (isObject(value) && isObject(value[key]) ? value[key] : undefined);
const listAt = (value: unknown, key: string): unknown[] => (isObject(value) && Array.isArray(value[key]) ? value[key] : []);
const stringAt = (value: unknown, key: string): string | undefined =>
  isObject(value) && typeof value[key] === 'string' ? value[key] : undefined;

/** Problems of a ClusterClass (`cluster.x-k8s.io/v1beta2`) for its create or update; none if upstream would accept it. */
export function validateClusterClass(clusterClass: unknown): ValidationIssue[] {
  const spec = objectAt(clusterClass, 'spec');
  if (!spec) return [{ path: 'spec', message: 'Required value' }];
  const issues: Issues = [];
  variableProblems(spec, issues);
  patchProblems(spec, issues);
  kubernetesVersionProblems(listAt(spec, 'kubernetesVersions'), issues);
  metadataAndTaintProblems(spec, issues);
  return issues;
}

/** An entry whose `name` an earlier entry of the same list already has, pointing at the first. */
function duplicateNameProblems(entries: readonly unknown[], listPath: string, rule: string, issues: Issues): void {
  const firstIndex = new Map<string, number>();
  entries.forEach((entry, i) => {
    const name = stringAt(entry, 'name');
    if (name === undefined) return;
    const first = firstIndex.get(name);
    if (first === undefined) firstIndex.set(name, i);
    else
      issues.push({
        path: `${listPath}[${i}].name`,
        message: `${rule}: "${name}" is defined more than once (first at ${listPath}[${first}])`,
      });
  });
}

// Variables

function variableProblems(spec: Obj, issues: Issues): void {
  const variables = listAt(spec, 'variables');
  duplicateNameProblems(variables, 'spec.variables', 'variable name must be unique', issues);
  variables.forEach((variable, i) => {
    const path = `spec.variables[${i}]`;
    const metadata = objectAt(variable, 'deprecatedV1Beta1Metadata');
    issues.push(...labelProblems(metadata?.['labels'], `${path}.deprecatedV1Beta1Metadata.labels`));
    issues.push(...annotationProblems(metadata?.['annotations'], `${path}.deprecatedV1Beta1Metadata.annotations`));
    const schema = objectAt(variable, 'schema');
    if (schema) issues.push(...variableSchemaProblems(schema['openAPIV3Schema'], `${path}.schema.openAPIV3Schema`));
  });
}

// Patches

/** The builtin variables patches may use (upstream's list, core/webhooks/admission/patch_validation.go). */
export const BUILTIN_VARIABLES: ReadonlySet<string> = new Set(
  [
    '',
    '.cluster',
    '.cluster.name',
    '.cluster.namespace',
    '.cluster.uid',
    '.cluster.metadata.labels',
    '.cluster.metadata.annotations',
    '.cluster.topology',
    '.cluster.topology.classRef.name',
    '.cluster.topology.classRef.namespace',
    '.cluster.topology.class',
    '.cluster.topology.classNamespace',
    '.cluster.topology.version',
    '.cluster.network',
    '.cluster.network.serviceDomain',
    '.cluster.network.services',
    '.cluster.network.pods',
    '.controlPlane',
    '.controlPlane.name',
    '.controlPlane.replicas',
    '.controlPlane.version',
    '.controlPlane.metadata.labels',
    '.controlPlane.metadata.annotations',
    '.controlPlane.machineTemplate.infrastructureRef.name',
    ...['machineDeployment', 'machinePool'].flatMap((worker) =>
      [
        '',
        '.class',
        '.name',
        '.replicas',
        '.topologyName',
        '.version',
        '.metadata.labels',
        '.metadata.annotations',
        '.bootstrap.configRef.name',
        '.infrastructureRef.name',
      ].map((field) => `.${worker}${field}`),
    ),
  ].map((name) => `builtin${name}`),
);

function patchProblems(spec: Obj, issues: Issues): void {
  const variables = new Set(listAt(spec, 'variables').map((v) => stringAt(v, 'name')));
  const patches = listAt(spec, 'patches');
  duplicateNameProblems(patches, 'spec.patches', 'patch names must be unique', issues);
  patches.forEach((patch, i) => {
    const path = `spec.patches[${i}]`;
    listAt(patch, 'definitions').forEach((definition, d) => {
      const at = `${path}.definitions[${d}]`;
      listAt(definition, 'jsonPatches').forEach((jsonPatch, j) => {
        if (isObject(jsonPatch)) jsonPatchProblems(jsonPatch, variables, `${at}.jsonPatches[${j}]`, issues);
      });
      const selector = objectAt(definition, 'selector');
      if (selector) selectorProblems(selector, spec, `${at}.selector`, issues);
    });
  });
}

/** strconv.Atoi's idea of a number: an optional sign and digits. */
const INTEGER_SEGMENT = /^[+-]?[0-9]+$/;

function jsonPatchProblems(jsonPatch: Obj, variables: ReadonlySet<string | undefined>, path: string, issues: Issues): void {
  const op = stringAt(jsonPatch, 'op');
  const patchPath = stringAt(jsonPatch, 'path') ?? '';
  if (!patchPath.startsWith('/spec')) issues.push({ path: `${path}.path`, message: 'jsonPatch path must start with "/spec"' });
  for (const segment of patchPath.split('/')) {
    if (!INTEGER_SEGMENT.test(segment)) continue;
    if (op === 'add' && Number(segment) !== 0)
      issues.push({ path: `${path}.path`, message: 'arrays can only be accessed using "0" (prepend) or "-" (append)' });
    if (op === 'replace' || op === 'remove')
      issues.push({ path: `${path}.path`, message: `elements in arrays can not be accessed in a ${op} operation` });
  }
  if (op !== 'add' && op !== 'replace') return;
  const hasValue = jsonPatch['value'] !== undefined && jsonPatch['value'] !== null;
  const valueFrom = objectAt(jsonPatch, 'valueFrom');
  if (!hasValue && !valueFrom) issues.push({ path, message: 'jsonPatch must define one of value or valueFrom' });
  if (hasValue && valueFrom) issues.push({ path, message: 'jsonPatch can not define both value and valueFrom' });
  if (!valueFrom) return;
  const template = stringAt(valueFrom, 'template') ?? '';
  const variable = stringAt(valueFrom, 'variable') ?? '';
  if (template === '' && variable === '') issues.push({ path: `${path}.valueFrom`, message: 'valueFrom must set either template or variable' });
  if (template !== '' && variable !== '') issues.push({ path: `${path}.valueFrom`, message: 'valueFrom can not set both template and variable' });
  if (variable === '') return;
  if (variable.startsWith('builtin.')) {
    if (!BUILTIN_VARIABLES.has(variable)) issues.push({ path: `${path}.valueFrom.variable`, message: 'not a defined builtin variable' });
  } else {
    // Only the variable's name is checked, not the path into it (as upstream).
    const name = variable.split(/[[.]/).find((part) => part !== '') ?? '';
    if (!variables.has(name))
      issues.push({ path: `${path}.valueFrom.variable`, message: `variable with name "${name}" cannot be found in spec.variables` });
  }
}

interface TemplateRef {
  apiVersion?: string;
  kind?: string;
}

const templateRefOf = (holder: unknown): TemplateRef | undefined => {
  const ref = objectAt(holder, 'templateRef');
  return ref && { apiVersion: stringAt(ref, 'apiVersion'), kind: stringAt(ref, 'kind') };
};

function selectorProblems(selector: Obj, spec: Obj, path: string, issues: Issues): void {
  const matches = (ref: TemplateRef | undefined) =>
    ref !== undefined && ref.kind === stringAt(selector, 'kind') && ref.apiVersion === stringAt(selector, 'apiVersion');
  const match = objectAt(selector, 'matchResources') ?? {};
  if (match['infrastructureCluster'] === true && !matches(templateRefOf(objectAt(spec, 'infrastructure'))))
    issues.push({
      path: `${path}.matchResources.infrastructureCluster`,
      message: 'selector is enabled but does not match the infrastructure ref',
    });
  const controlPlane = objectAt(spec, 'controlPlane');
  if (
    match['controlPlane'] === true &&
    !matches(templateRefOf(controlPlane)) &&
    !matches(templateRefOf(objectAt(controlPlane, 'machineInfrastructure')))
  )
    issues.push({
      path: `${path}.matchResources.controlPlane`,
      message: 'selector is enabled but matches neither the controlPlane ref nor the controlPlane machineInfrastructure ref',
    });
  const workers = objectAt(spec, 'workers');
  for (const [field, list, what] of [
    ['machineDeploymentClass', 'machineDeployments', 'MachineDeployment'],
    ['machinePoolClass', 'machinePools', 'MachinePool'],
  ] as const) {
    const names = listAt(objectAt(match, field), 'names');
    const classes = listAt(workers, list);
    for (const [i, name] of names.entries()) {
      if (typeof name !== 'string') continue;
      const at = `${path}.matchResources.${field}.names[${i}]`;
      const nameProblem = selectorNameProblem(name);
      if (nameProblem) {
        // As upstream: the first bad name ends the checks of this list.
        issues.push({ path: at, message: nameProblem });
        break;
      }
      const found = classes.some(
        (workerClass) =>
          classNameMatches(name, stringAt(workerClass, 'class') ?? '') &&
          (matches(templateRefOf(objectAt(workerClass, 'infrastructure'))) || matches(templateRefOf(objectAt(workerClass, 'bootstrap')))),
      );
      if (!found)
        issues.push({
          path: at,
          message: `selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a ${what} class`,
        });
    }
  }
}

function selectorNameProblem(name: string): string | undefined {
  if (!name.includes('*')) return undefined;
  if (name.split('*').length > 2) return 'selector can at most contain a single "*" rune';
  if (!name.startsWith('*') && !name.endsWith('*')) return '"*" rune can only appear at the beginning, or ending of the selector';
  if (qualifiedNameProblems(name.replaceAll('*', 'a')).length > 0) return 'selector does not comply with the Kubernetes naming standards';
  return undefined;
}

/** Whether a patch selector's worker class name (`*`, `prefix*`, `*suffix` or a name) matches `className`. */
export function classNameMatches(selector: string, className: string): boolean {
  if (selector === className || selector === '*') return true;
  if (selector.startsWith('*')) return className.endsWith(selector.slice(1));
  if (selector.endsWith('*')) return className.startsWith(selector.slice(0, -1));
  return false;
}

// Kubernetes versions

function kubernetesVersionProblems(versions: unknown[], issues: Issues): void {
  let previous: SemanticVersion | undefined;
  versions.forEach((text, i) => {
    if (typeof text !== 'string') return;
    const path = `spec.kubernetesVersions[${i}]`;
    const version = parseTolerantVersion(text);
    if (!version) {
      issues.push({ path, message: 'version must be a valid semantic version' });
      return;
    }
    if (previous) {
      // A version equal but for its (non-numeric) build identifiers may follow: they have no order.
      const order = compareVersionsWithBuildTags(version, previous);
      if (order === 0 || order === -1) issues.push({ path, message: `version must be greater than v${formatVersion(previous)}` });
      if (previous.minor !== version.minor && previous.minor + 1 !== version.minor)
        issues.push({
          path,
          message: `expecting a version with minor ${previous.minor} or ${previous.minor + 1}, found version ${formatVersion(version)}`,
        });
    }
    previous = version;
  });
}

// Metadata and taints of the control plane and worker classes

const RESERVED_TAINT_KEYS: ReadonlySet<string> = new Set([NODE_TAINTS.uninitialized.key, NODE_TAINTS.outdatedRevision.key]);

function taintKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (RESERVED_TAINT_KEYS.has(key)) problems.push('taint key is not allowed');
  else if (key.startsWith('node.kubernetes.io/') && key !== 'node.kubernetes.io/out-of-service')
    problems.push('taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service');
  else if (key.startsWith('node.cloudprovider.kubernetes.io/'))
    problems.push('taint key must not have the prefix node.cloudprovider.kubernetes.io/');
  else if (key === 'node-role.kubernetes.io/master') problems.push('taint is deprecated since 1.24 and should not be used anymore');
  return [...problems, ...qualifiedNameProblems(key)];
}

function metadataAndTaintProblems(spec: Obj, issues: Issues): void {
  const holders: [Obj | undefined, string][] = [[objectAt(spec, 'controlPlane'), 'spec.controlPlane']];
  const workers = objectAt(spec, 'workers');
  for (const list of ['machineDeployments', 'machinePools'] as const)
    listAt(workers, list).forEach((workerClass, i) => holders.push([isObject(workerClass) ? workerClass : undefined, `spec.workers.${list}[${i}]`]));
  for (const [holder, path] of holders) {
    const metadata = objectAt(holder, 'metadata');
    issues.push(...labelProblems(metadata?.['labels'], `${path}.metadata.labels`));
    issues.push(...annotationProblems(metadata?.['annotations'], `${path}.metadata.annotations`));
    listAt(holder, 'taints').forEach((taint, t) => {
      const key = stringAt(taint, 'key');
      if (key !== undefined) for (const message of taintKeyProblems(key)) issues.push({ path: `${path}.taints[${t}].key`, message });
    });
  }
}
