import { type ContractVersion } from '@capstan/api';
import { type ExternalRead, type ProviderObject } from './external-objects.js';

/**
 * What a reconcile learnt about one referenced provider object, in the shape the pure status functions take:
 * no reference, the object read under its contract, a missing object, or a reference the core cannot resolve.
 */
export type ExternalObservation<Contract> =
  | { state: 'unset' }
  | { state: 'found'; kind: string; contract: Contract; deleting: boolean }
  | { state: 'notFound'; kind: string }
  | { state: 'invalid'; kind: string; message: string };

/** Condition reason of a reference the core cannot resolve (no CRD serves the kind, or the CRD has no contract label). */
export const INVALID_REFERENCE_REASON = 'InvalidReference';

/** Turns a read into an observation, reading the contract fields with `reader` under the kind's contract. */
export function observe<Contract>(
  read: ExternalRead | undefined,
  ref: { kind: string } | undefined,
  reader: (object: ProviderObject, contract: ContractVersion) => Contract,
): ExternalObservation<Contract> {
  if (!read || !ref) return { state: 'unset' };
  switch (read.state) {
    case 'found':
      return {
        state: 'found',
        kind: ref.kind,
        contract: reader(read.object, read.kind.contract),
        deleting: !!read.object.metadata?.deletionTimestamp,
      };
    case 'notFound':
      return { state: 'notFound', kind: ref.kind };
    case 'invalid':
      return { state: 'invalid', kind: ref.kind, message: read.error.message };
  }
}
