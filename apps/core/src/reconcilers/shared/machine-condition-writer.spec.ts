import type { Machine } from '@capstan/api';
import { KubeApiError, type ResourceClient } from '@capstan/kube';
import {
  MachineConditionWriter,
  removeMachineCondition,
  setMachineCondition,
} from '@capstan/provider-kit';
import { running } from './testing/machine-builder.js';

const now = new Date('2026-06-01T12:00:00Z');

type Json = Record<string, unknown>;

function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * An API server holding one Machine: merge patches guarded by a stale resourceVersion are refused with 409, as
 * the real one does; `meanwhile` runs once before the first write, as another controller's write would.
 */
function apiServer(machine: Machine, meanwhile?: (stored: Machine) => void) {
  let stored = structuredClone(machine);
  stored.metadata.resourceVersion = '1';
  const writes: Json[] = [];
  let pending = meanwhile;
  const bump = () => {
    stored.metadata.resourceVersion = String(Number(stored.metadata.resourceVersion) + 1);
  };
  const client = {
    type: { kind: 'Machine' },
    get: () => Promise.resolve(structuredClone(stored)),
    mergePatch: (_ref: unknown, body: Json) => {
      pending?.(stored);
      if (pending) bump();
      pending = undefined;
      const guard = (body['metadata'] as Json | undefined)?.['resourceVersion'];
      if (guard !== undefined && guard !== stored.metadata.resourceVersion) {
        return Promise.reject(
          new KubeApiError('PATCH', '/machines/m', { code: 409, reason: 'Conflict' }, 409),
        );
      }
      writes.push(body);
      const { metadata: _guard, ...rest } = body;
      stored = mergePatch(stored, rest) as Machine;
      bump();
      return Promise.resolve(structuredClone(stored));
    },
  };
  return {
    resources: client as unknown as ResourceClient<Machine>,
    writes,
    stored: () => stored,
    read: () => structuredClone(stored),
  };
}

const types = (machine: Machine | undefined) =>
  Object.fromEntries((machine?.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

describe('conditions a workload controller writes on Machines', () => {
  const upToDate = { type: 'UpToDate', status: 'False' as const, reason: 'NotUpToDate', message: 'old' };

  it('writes nothing when the Machine already says the same', async () => {
    const server = apiServer(running('m'));
    const writer = new MachineConditionWriter(server.resources, ['UpToDate']);
    const machine = await writer.write(server.read(), (m) => setMachineCondition(m, upToDate, now));
    expect(server.writes).toHaveLength(1);
    await writer.write(machine!, (m) => setMachineCondition(m, upToDate, now));
    await writer.write(machine!, (m) => removeMachineCondition(m, 'OwnerRemediated'));
    expect(server.writes).toHaveLength(1);
  });

  it("merges onto the Machine controller's write it raced with, and never overwrites it", async () => {
    const server = apiServer(running('m'), (stored) => {
      stored.status!.conditions!.find((c) => c.type === 'Ready')!.status = 'False';
    });
    const writer = new MachineConditionWriter(server.resources, ['UpToDate']);
    const read = server.read();
    const written = await writer.write(read, (m) => setMachineCondition(m, upToDate, now));
    expect(types(written)).toMatchObject({ Ready: 'False/Ready', UpToDate: 'False/NotUpToDate' });
    expect(types(server.stored())).toEqual(types(written));
  });

  it('removes a condition it owns, and leaves a Machine that is gone alone', async () => {
    const server = apiServer(running('m', { conditions: { OwnerRemediated: 'False' } }));
    const writer = new MachineConditionWriter(server.resources, ['OwnerRemediated']);
    const written = await writer.write(server.read(), (m) => removeMachineCondition(m, 'OwnerRemediated'));
    expect(types(written)).not.toHaveProperty('OwnerRemediated');

    const gone = {
      type: { kind: 'Machine' },
      mergePatch: () =>
        Promise.reject(new KubeApiError('PATCH', '/machines/m', { code: 404, reason: 'NotFound' }, 404)),
    } as unknown as ResourceClient<Machine>;
    const ghost = await new MachineConditionWriter(gone, ['UpToDate']).write(running('m'), (m) =>
      setMachineCondition(m, upToDate, now),
    );
    expect(ghost).toBeUndefined();
  });
});
