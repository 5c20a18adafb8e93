import type { ClusterClassPatch, Unstructured } from '@capstan/api';
import {
  applyJsonPatch,
  applyMergePatch,
  deepEqual,
  isPlainObject,
  type JsonPatchOperation,
} from '@capstan/kube';
import type { HookTarget } from '../../runtime/runtime-client.js';
import { RuntimeHookError } from '../../runtime/runtime-errors.js';
import type { HookName, HookRequestBody, HookResponses, HookVariable } from '../../runtime/runtime-hooks.js';
import { TopologyError } from './topology-errors.js';
import type { PatchTarget } from './topology-patches.js';
import type { VariableValues } from './topology-variables.js';

// External patches (upstream's patches/external and the GeneratePatches / ValidateTopology hooks): the class names a
// Runtime SDK extension that is sent every template of the topology (one item per template, with what uses it and the
// variables it sees) and answers with a JSON patch or a JSON merge patch per item. A patch may change only the
// template's spec. ValidateTopology sees the templates once every patch is applied; a Failure refuses the topology.

/** The part of the Runtime SDK client external patches use. */
export interface ExternalPatchCaller {
  callExtension<H extends HookName>(
    hook: H,
    name: string,
    request: HookRequestBody<H>,
    target?: HookTarget,
  ): Promise<HookResponses[H]>;
}

const asList = (variables: VariableValues): HookVariable[] =>
  Object.entries(variables).map(([name, value]) => ({ name, value }));

function refused(patch: ClusterClassPatch, error: unknown): TopologyError {
  const reason =
    error instanceof RuntimeHookError || error instanceof TopologyError
      ? error.message
      : 'the answer could not be applied';
  return new TopologyError(`patch "${patch.name}": ${reason}`);
}

/** One answer item's patch, decoded: a JSON patch (a list of operations) or a JSON merge patch (an object). */
function decoded(
  patchType: string,
  encoded: string,
): { ops?: JsonPatchOperation[]; merge?: Record<string, unknown> } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as unknown;
  } catch {
    throw new TopologyError('an answer item holds no JSON');
  }
  if (patchType === 'JSONPatch' && Array.isArray(value)) return { ops: value as JsonPatchOperation[] };
  if (patchType === 'JSONMergePatch' && isPlainObject(value)) return { merge: value };
  throw new TopologyError(
    `an answer item's patchType ${JSON.stringify(patchType).slice(0, 40)} does not match its patch`,
  );
}

/** Asks the patch's GeneratePatches extension for its patches and applies them to the targets (in place). */
export async function applyExternalPatch(
  patch: ClusterClassPatch,
  targets: readonly PatchTarget[],
  variables: VariableValues,
  caller: ExternalPatchCaller | undefined,
  forObject: HookTarget,
): Promise<void> {
  const extension = patch.external?.generatePatchesExtension;
  if (!extension) return;
  if (!caller)
    throw new TopologyError(`patch "${patch.name}" is external, and no Runtime SDK client is configured`);
  try {
    const response = await caller.callExtension(
      'GeneratePatches',
      extension,
      {
        ...(patch.external?.settings ? { settings: patch.external.settings } : {}),
        variables: asList(variables),
        items: targets.map((target, i) => ({
          uid: String(i),
          holderReference: target.holder,
          object: target.template,
          variables: asList(target.variables),
        })),
      },
      forObject,
    );
    for (const item of response.items ?? []) {
      const target = targets[Number(item.uid)];
      if (!/^\d+$/.test(item.uid) || !target)
        throw new TopologyError(`an answer item names no template sent (uid ${item.uid.slice(0, 40)})`);
      const { ops, merge } = decoded(item.patchType, item.patch);
      const before = target.template;
      const after = (ops ? applyJsonPatch(before, ops) : applyMergePatch(before, merge)) as Unstructured;
      if (!deepEqual({ ...after, spec: undefined }, { ...before, spec: undefined }))
        throw new TopologyError(`an answer item changes more than the spec of ${target.describe}`);
      target.template['spec'] = after['spec'];
    }
  } catch (error) {
    throw refused(patch, error);
  }
}

/** ValidateTopology of every patch that names one, in the class's order, on the patched templates. */
export async function validateTopology(
  patches: readonly ClusterClassPatch[],
  targets: readonly PatchTarget[],
  variables: VariableValues,
  caller: ExternalPatchCaller | undefined,
  forObject: HookTarget,
): Promise<void> {
  for (const patch of patches) {
    const extension = patch.external?.validateTopologyExtension;
    if (!extension) continue;
    if (!caller)
      throw new TopologyError(`patch "${patch.name}" is external, and no Runtime SDK client is configured`);
    try {
      await caller.callExtension(
        'ValidateTopology',
        extension,
        {
          ...(patch.external?.settings ? { settings: patch.external.settings } : {}),
          variables: asList(variables),
          items: targets.map((target) => ({
            holderReference: target.holder,
            object: target.template,
            variables: asList(target.variables),
          })),
        },
        forObject,
      );
    } catch (error) {
      throw refused(patch, error);
    }
  }
}
