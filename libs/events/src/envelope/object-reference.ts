// class-transformer's @Type and Nest read design-time types through the reflect-metadata polyfill.
import 'reflect-metadata';
import { IsString, Matches, MaxLength } from '@capstan/api';

export const DNS_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const API_GROUP_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;
const KIND_PATTERN = /^[A-Z][A-Za-z0-9]*$/;
/** Kubernetes uids are UUIDs; any opaque token without `:` is accepted because it is part of the message id. */
const UID_PATTERN = /^[A-Za-z0-9-]{1,128}$/;

/** The object an event is about. The version is left out on purpose: it comes from the CRD's contract label. */
export class EventObjectReference {
  /** `''` for the core group. */
  @IsString()
  @Matches(API_GROUP_PATTERN)
  apiGroup!: string;

  @Matches(KIND_PATTERN)
  kind!: string;

  @MaxLength(63)
  @Matches(DNS_LABEL_PATTERN)
  namespace!: string;

  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  name!: string;

  @Matches(UID_PATTERN)
  uid!: string;
}

/** A reference in the v1beta2 contract style (`{apiGroup, kind, name}`, same namespace as the referrer). */
export class ContractReference {
  @IsString()
  @Matches(API_GROUP_PATTERN)
  apiGroup!: string;

  @Matches(KIND_PATTERN)
  kind!: string;

  @MaxLength(253)
  @Matches(DNS_SUBDOMAIN_PATTERN)
  name!: string;
}

/** What every event's `data` says of its object (see EventData): which object, at which version, in which cluster. */
export function eventDataBase(
  obj: {
    metadata?: { namespace?: string; name?: string; uid?: string; generation?: number; resourceVersion?: string };
  },
  type: { group: string; kind: string },
  clusterName: string,
): {
  object: { apiGroup: string; kind: string; namespace: string; name: string; uid: string };
  generation: number;
  resourceVersion: string;
  clusterName: string;
} {
  return {
    object: {
      apiGroup: type.group,
      kind: type.kind,
      namespace: obj.metadata!.namespace!,
      name: obj.metadata!.name!,
      uid: obj.metadata!.uid!,
    },
    generation: obj.metadata?.generation ?? 0,
    resourceVersion: obj.metadata!.resourceVersion!,
    clusterName,
  };
}
