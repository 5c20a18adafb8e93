import {
  valueProblems,
  type ClusterClass,
  type ClusterVariable,
  type Topology,
  type ValidationIssue,
} from '@capstan/api';
import { GoRegexp } from './go-template-functions.js';
import { TopologyError } from './topology-errors.js';

// A topology's variable values, defaulted and checked against the ClusterClass's variable schemas before any patch
// sees them (upstream's internal/topology/variables: DefaultClusterVariables, ValidateClusterVariables). Top-level
// defaults create a missing Cluster variable; per-worker overrides are defaulted only where they are given.

type Schema = Record<string, unknown>;
export type VariableValues = Record<string, unknown>;

export interface VariableDefinition {
  name: string;
  required: boolean;
  schema: Schema;
}

export interface ResolvedVariables {
  /** The Cluster's variables, by name, defaults applied. */
  cluster: VariableValues;
  /** The control plane's values: the Cluster's, with its overrides. */
  controlPlane: VariableValues;
  /** Each MachineDeployment topology's values (by topology name): the Cluster's, with its overrides. */
  machineDeployments: Map<string, VariableValues>;
}

/**
 * Schema patterns are the class author's, values the cluster owner's: matched by a linear-time (RE2) engine, so no
 * value can make a pattern backtrack for long. A pattern that engine cannot parse matches nothing.
 */
const PATTERN_BUDGET = { maxBytes: 1 << 20, charge: () => undefined };
function linearMatch(pattern: string, value: string): boolean {
  try {
    return new GoRegexp(pattern).exec(value, 0, PATTERN_BUDGET) !== null;
  } catch {
    return false;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The class's effective definitions: from its status (inline and discovered, written by the ClusterClass
 * controller) when it has them, else from its spec.
 */
export function variableDefinitions(clusterClass: ClusterClass): VariableDefinition[] {
  const fromStatus = clusterClass.status?.variables;
  if (fromStatus && fromStatus.length > 0)
    return fromStatus.flatMap((variable) => {
      const definition = variable.definitions.find((d) => d.from === 'inline') ?? variable.definitions[0];
      return definition
        ? [{ name: variable.name, required: definition.required, schema: schemaOf(definition.schema) }]
        : [];
    });
  return (clusterClass.spec.variables ?? []).map((variable) => ({
    name: variable.name,
    required: variable.required,
    schema: schemaOf(variable.schema),
  }));
}

const schemaOf = (schema: { openAPIV3Schema?: unknown } | undefined): Schema =>
  isObject(schema?.openAPIV3Schema) ? schema.openAPIV3Schema : {};

/** Defaults from `schema` filled into a copy of `value`: properties of objects, items of arrays. */
export function withDefaults(value: unknown, schema: Schema, depth = 0): unknown {
  if (depth > 64) return value;
  if (Array.isArray(value)) {
    const items = schema['items'];
    return isObject(items) ? value.map((item) => withDefaults(item, items, depth + 1)) : value;
  }
  if (!isObject(value)) return value;
  const result: Record<string, unknown> = { ...value };
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  for (const [name, property] of Object.entries(properties)) {
    if (!isObject(property)) continue;
    if (result[name] === undefined && property['default'] !== undefined)
      result[name] = structuredClone(property['default']);
    if (result[name] !== undefined) result[name] = withDefaults(result[name], property, depth + 1);
  }
  const additional = schema['additionalProperties'];
  if (isObject(additional))
    for (const name of Object.keys(result))
      if (!(name in properties)) result[name] = withDefaults(result[name], additional, depth + 1);
  return result;
}

/** Values of a list, defaulted and checked; `path` names the list in messages. */
function resolveList(
  values: readonly ClusterVariable[],
  definitions: ReadonlyMap<string, VariableDefinition>,
  path: string,
  issues: ValidationIssue[],
): VariableValues {
  const resolved: VariableValues = {};
  for (const variable of values) {
    const definition = definitions.get(variable.name);
    const at = `${path}[name=${variable.name}].value`;
    if (!definition) {
      issues.push({ path: at, message: `variable "${variable.name}" is not defined in the ClusterClass` });
      continue;
    }
    const value = withDefaults(variable.value, definition.schema);
    valueProblems(value, definition.schema, at, issues, { pruning: true, depth: 0, matches: linearMatch });
    resolved[variable.name] = value;
  }
  return resolved;
}

/**
 * The topology's values, defaulted and checked against the definitions. Problems name the variable and the rule,
 * never the value (a variable may hold a credential).
 */
export function resolveVariables(
  definitions: readonly VariableDefinition[],
  topology: Topology,
): ResolvedVariables {
  const { resolved, issues } = checkVariables(definitions, topology);
  if (issues.length > 0) throw new TopologyError(`variables: ${describeIssues(issues)}`);
  return resolved;
}

/** resolveVariables without the throw: the values and every problem found (the admission webhook lists them all). */
export function checkVariables(
  definitions: readonly VariableDefinition[],
  topology: Topology,
): { resolved: ResolvedVariables; issues: ValidationIssue[] } {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const issues: ValidationIssue[] = [];
  const cluster = resolveList(topology.variables ?? [], byName, 'spec.topology.variables', issues);
  for (const definition of definitions) {
    if (cluster[definition.name] !== undefined) continue;
    const fallback = definition.schema['default'];
    if (fallback !== undefined)
      cluster[definition.name] = withDefaults(structuredClone(fallback), definition.schema);
    else if (definition.required)
      issues.push({
        path: 'spec.topology.variables',
        message: `required variable "${definition.name}" is not set`,
      });
  }
  const overridden = (overrides: readonly ClusterVariable[] | undefined, path: string): VariableValues => ({
    ...cluster,
    ...resolveList(overrides ?? [], byName, path, issues),
  });
  const controlPlane = overridden(
    topology.controlPlane?.variables?.overrides,
    'spec.topology.controlPlane.variables.overrides',
  );
  const machineDeployments = new Map<string, VariableValues>();
  for (const md of topology.workers?.machineDeployments ?? [])
    machineDeployments.set(
      md.name,
      overridden(
        md.variables?.overrides,
        `spec.topology.workers.machineDeployments[name=${md.name}].variables.overrides`,
      ),
    );
  return { resolved: { cluster, controlPlane, machineDeployments }, issues };
}

const LISTED = 5;

function describeIssues(issues: readonly ValidationIssue[]): string {
  const listed = issues.slice(0, LISTED).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > LISTED ? `; and ${issues.length - LISTED} more` : '';
  return listed.join('; ') + more;
}
