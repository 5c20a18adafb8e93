import { getCondition, setCondition, type Condition, type ConditionInput, type Machine } from '@capstan/api';
import { isInvalid, StaleObjectError, type JsonPatchOperation, type ResourceClient } from '@capstan/kube';

// The MachineSet writes one condition of a Machine (OwnerRemediated) whose other conditions belong to the Machine
// controller and the MachineHealthCheck: a JSON patch that touches that one entry, guarded by `test` ops on what
// was read, so a concurrent writer's entries are never overwritten (a refused guard retries from the cache).

export async function setMachineCondition(
  machines: ResourceClient<Machine>,
  machine: Machine,
  input: ConditionInput,
  now: Date,
): Promise<void> {
  const current = machine.status?.conditions;
  const existing = getCondition(current, input.type);
  const next = getCondition(setCondition(current, input, now), input.type) as Condition;
  if (
    existing &&
    existing.status === next.status &&
    existing.reason === next.reason &&
    existing.message === next.message
  ) {
    return;
  }
  const index = (current ?? []).findIndex((c) => c.type === input.type);
  const ops: JsonPatchOperation[] =
    index >= 0
      ? [
          { op: 'test', path: `/status/conditions/${index}/type`, value: input.type },
          { op: 'replace', path: `/status/conditions/${index}`, value: next },
        ]
      : current
        ? // A concurrent add of the same type makes a duplicate key, which the API server refuses.
          [{ op: 'add', path: '/status/conditions/-', value: next }]
        : [
            { op: 'test', path: '/metadata/resourceVersion', value: machine.metadata.resourceVersion },
            { op: 'add', path: '/status/conditions', value: [next] },
          ];
  await guarded(machines, machine, ops);
}

export async function removeMachineCondition(
  machines: ResourceClient<Machine>,
  machine: Machine,
  type: string,
): Promise<void> {
  const index = (machine.status?.conditions ?? []).findIndex((c) => c.type === type);
  if (index < 0) return;
  await guarded(machines, machine, [
    { op: 'test', path: `/status/conditions/${index}/type`, value: type },
    { op: 'remove', path: `/status/conditions/${index}` },
  ]);
}

async function guarded(
  machines: ResourceClient<Machine>,
  machine: Machine,
  ops: JsonPatchOperation[],
): Promise<void> {
  const ref = { namespace: machine.metadata.namespace, name: machine.metadata.name! };
  try {
    await machines.jsonPatch(ref, ops, { subresource: 'status' });
  } catch (err) {
    // A failed `test` (or a duplicate list key) comes back as 422: the conditions changed since they were read.
    if (isInvalid(err)) throw new StaleObjectError(`Machine ${ref.namespace}/${ref.name}`, { cause: err });
    throw err;
  }
}
