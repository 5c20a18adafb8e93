import {
  V1Beta1Reason,
  V1Beta1Severity,
  mirrorV1Beta1,
  readV1Beta1Conditions,
  stringAt,
  v1beta1False,
  type ContractVersion,
  type V1Beta1Condition,
  type V1Beta1ConditionInput,
  type V1Beta1MirrorFallback,
} from '@capstan/api';
import { type ExternalRead, type ProviderObject } from './external-objects.js';

/**
 * What a reconcile learnt about one referenced provider object, in the shape the pure status functions take:
 * no reference, the object read under its contract, a missing object, or a reference the core cannot resolve.
 */
export type ExternalObservation<Contract> =
  | { state: 'unset' }
  | { state: 'found'; kind: string; contract: Contract; deleting: boolean; v1beta1?: V1Beta1Report }
  | { state: 'notFound'; kind: string }
  | { state: 'invalid'; kind: string; message: string };

/**
 * What upstream's v1beta1 status code reads from a provider object whatever its contract: its v1beta1 conditions
 * (mirrored as BootstrapReady, InfrastructureReady, ControlPlaneReady) and a terminal failure it reports in
 * `status.failureReason` / `status.failureMessage` (upstream external.FailuresFrom), the message already worded as
 * upstream's core copies it onto the owner.
 */
export interface V1Beta1Report {
  conditions: V1Beta1Condition[];
  failureReason?: string;
  failureMessage?: string;
}

/** Upstream reconcileExternal: `Failure detected from referenced resource <group/version, Kind=kind> with name "name": ...`. */
export function v1beta1ReportOf(object: ProviderObject): V1Beta1Report {
  const failureReason = stringAt(object, ['status', 'failureReason']);
  const failureMessage = stringAt(object, ['status', 'failureMessage']);
  const gvk = `${object.apiVersion ?? ''}, Kind=${object.kind ?? ''}`;
  return {
    conditions: readV1Beta1Conditions(object),
    ...(failureReason ? { failureReason } : {}),
    ...(failureMessage
      ? {
          failureMessage: `Failure detected from referenced resource ${gvk} with name ${JSON.stringify(object.metadata?.name ?? '')}: ${failureMessage}`,
        }
      : {}),
  };
}

/** A v1beta1 failure as stored: the fields that are set. */
export interface V1Beta1Failure {
  failureReason?: string;
  failureMessage?: string;
}

/**
 * The owner's failure fields after this reconcile (upstream reconcileExternal): what it had, overwritten by what
 * each found referenced object reports; never cleared, as upstream never clears them.
 */
export function v1beta1Failure(
  previous: V1Beta1Failure,
  ...references: ExternalObservation<unknown>[]
): V1Beta1Failure {
  const fields = (from: V1Beta1Failure | undefined) => ({
    ...(from?.failureReason ? { failureReason: from.failureReason } : {}),
    ...(from?.failureMessage ? { failureMessage: from.failureMessage } : {}),
  });
  return Object.assign(
    fields(previous),
    ...references.map((o) => fields(o.state === 'found' ? o.v1beta1 : undefined)),
  ) as V1Beta1Failure;
}

/**
 * The v1beta1 condition an owner derives from a referenced object (upstream SetMirror of its v1beta1 Ready with a
 * fallback, then `Deleted` once it is gone while the owner is deleted); undefined where upstream returns early
 * (missing otherwise, or not resolvable).
 */
export function mirrorReferenceV1Beta1<C>(
  observation: ExternalObservation<C>,
  type: string,
  ownerDeleting: boolean,
  fallback: (contract: C) => V1Beta1MirrorFallback,
): V1Beta1ConditionInput | undefined {
  switch (observation.state) {
    case 'found':
      return mirrorV1Beta1(observation.v1beta1?.conditions, type, fallback(observation.contract));
    case 'notFound':
      return ownerDeleting ? v1beta1False(type, V1Beta1Reason.Deleted, V1Beta1Severity.Info) : undefined;
    default:
      return undefined;
  }
}

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
        v1beta1: v1beta1ReportOf(read.object),
      };
    case 'notFound':
      return { state: 'notFound', kind: ref.kind };
    case 'invalid':
      return { state: 'invalid', kind: ref.kind, message: read.error.message };
  }
}
