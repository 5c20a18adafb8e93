import { parse as parseYaml } from 'yaml';
import { classNameMatches, type ClusterClassPatch, type JSONPatch, type Unstructured } from '@capstan/api';
import { applyJsonPatch, isPlainObject, type JsonPatchOperation } from '@capstan/kube';
import { GoTemplateError, renderGoTemplate } from './go-template.js';
import type { HookTarget } from '../../runtime/runtime-client.js';
import type { HolderReference } from '../../runtime/runtime-hooks.js';
import { applyExternalPatch, validateTopology, type ExternalPatchCaller } from './external-patches.js';
import { TopologyError } from './topology-errors.js';
import type { VariableValues } from './topology-variables.js';

// ClusterClass patches (upstream's patches/engine.go and inline/json_patch_generator.go): each enabled patch, in the
// class's order, applies its JSON patches to the templates its selectors match (inline), or what its extension
// answers (external, external-patches.ts), each patch seeing what the ones before it wrote; then the extensions that
// validate the topology see the result. A patch that fails fails the whole desired state: nothing is applied.

export type PatchTargetRole =
  | { kind: 'infrastructureCluster' }
  | { kind: 'controlPlane' }
  | { kind: 'machineDeployment'; className: string };

export interface PatchTarget {
  role: PatchTargetRole;
  /** The template patches see (apiVersion, kind, spec.template.spec); patched in place. */
  template: Unstructured;
  /** What the patches of this target see: its variable values and `builtin`. */
  variables: VariableValues;
  /** Names the target in messages, e.g. `the control plane template`. */
  describe: string;
  /** What uses the template, and where (external patches are told). */
  holder: HolderReference;
}

/** Bounds on what a cluster owner's template may render. */
const TEMPLATE_LIMITS = { maxOutputBytes: 256 * 1024 };

function selects(
  selector: NonNullable<ClusterClassPatch['definitions']>[number]['selector'],
  target: PatchTarget,
): boolean {
  if (selector.apiVersion !== target.template['apiVersion'] || selector.kind !== target.template['kind'])
    return false;
  const match = selector.matchResources;
  switch (target.role.kind) {
    case 'infrastructureCluster':
      return match.infrastructureCluster === true;
    case 'controlPlane':
      return match.controlPlane === true;
    case 'machineDeployment': {
      const className = target.role.className;
      return (match.machineDeploymentClass?.names ?? []).some((name) => classNameMatches(name, className));
    }
  }
}

/** Whether a patch applies: no `enabledIf`, or one rendering exactly `true`. */
function enabled(patch: ClusterClassPatch, variables: VariableValues): boolean {
  if (patch.enabledIf === undefined) return true;
  try {
    return renderGoTemplate(patch.enabledIf, variables, TEMPLATE_LIMITS) === 'true';
  } catch (error) {
    throw new TopologyError(`patch "${patch.name}": enabledIf: ${reasonOf(error)}`);
  }
}

const reasonOf = (error: unknown): string =>
  error instanceof GoTemplateError || error instanceof TopologyError
    ? error.message
    : error instanceof Error
      ? error.message
      : String(error);

/** `name`, `name.field`, `name[0].field`: upstream's variable paths into the values. */
export function variableAt(variables: VariableValues, path: string): unknown {
  const parts = path.split('.');
  let current: unknown = variables;
  for (const part of parts) {
    const indexed = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part);
    if (!indexed) throw new TopologyError(`variable path "${path}" is not valid`);
    current = isPlainObject(current) ? current[indexed[1]!] : undefined;
    for (const index of indexed[2]!.match(/\d+/g) ?? [])
      current = Array.isArray(current) ? current[Number(index)] : undefined;
    if (current === undefined) throw new TopologyError(`variable "${path}" is not set`);
  }
  return structuredClone(current);
}

function valueOf(jsonPatch: JSONPatch, variables: VariableValues): unknown {
  const from = jsonPatch.valueFrom;
  if (from?.variable !== undefined) return variableAt(variables, from.variable);
  if (from?.template !== undefined) {
    const rendered = renderGoTemplate(from.template, variables, TEMPLATE_LIMITS);
    try {
      return parseYaml(rendered, { maxAliasCount: 0 }) as unknown;
    } catch {
      throw new TopologyError('the template does not render YAML or JSON');
    }
  }
  return structuredClone(jsonPatch.value);
}

/** `add` creates missing parents (upstream: EnsurePathExistsOnAdd): objects, or arrays before an index. */
function ensureParents(document: unknown, path: string): void {
  const parts = path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = document;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!;
    const container = node as Record<string, unknown> | unknown[];
    const next = Array.isArray(container)
      ? container[Number(part)]
      : isPlainObject(container)
        ? container[part]
        : undefined;
    if (next === undefined && isPlainObject(container)) {
      container[part] = /^(\d+|-)$/.test(parts[i + 1]!) ? [] : {};
      node = container[part];
    } else node = next;
  }
}

function apply(target: PatchTarget, jsonPatch: JSONPatch): void {
  if (!jsonPatch.path.startsWith('/spec/'))
    throw new TopologyError(`path ${jsonPatch.path} must start with /spec/`);
  const operation: JsonPatchOperation =
    jsonPatch.op === 'remove'
      ? { op: 'remove', path: jsonPatch.path }
      : { op: jsonPatch.op, path: jsonPatch.path, value: valueOf(jsonPatch, target.variables) };
  const document = structuredClone(target.template);
  if (jsonPatch.op === 'add') ensureParents(document, jsonPatch.path);
  const patched = applyJsonPatch(document, [operation]) as Unstructured;
  target.template['spec'] = patched['spec'];
}

/**
 * Applies the class's patches to `targets`, in order, then has the topology validated. `variables` are the
 * Cluster-level values (with `builtin.cluster`) that `enabledIf` and extensions see.
 */
export async function applyPatches(
  patches: readonly ClusterClassPatch[],
  targets: readonly PatchTarget[],
  variables: VariableValues,
  external: { caller: ExternalPatchCaller | undefined; forObject: HookTarget },
): Promise<void> {
  for (const patch of patches) {
    if (!enabled(patch, variables)) continue;
    if (patch.external) {
      await applyExternalPatch(patch, targets, variables, external.caller, external.forObject);
      continue;
    }
    if (!patch.definitions) continue;
    patch.definitions.forEach((definition, d) => {
      for (const target of targets) {
        if (!selects(definition.selector, target)) continue;
        definition.jsonPatches.forEach((jsonPatch, j) => {
          try {
            apply(target, jsonPatch);
          } catch (error) {
            throw new TopologyError(
              `patch "${patch.name}" definitions[${d}].jsonPatches[${j}] (${jsonPatch.op} ${jsonPatch.path}) on ${target.describe}: ${reasonOf(error)}`,
            );
          }
        });
      }
    });
  }
  await validateTopology(patches, targets, variables, external.caller, external.forObject);
}
