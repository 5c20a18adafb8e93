// class-transformer's @Type and Nest read design-time types through the reflect-metadata polyfill.
import 'reflect-metadata';
import { IsBoolean, IsIn, IsInt, IsOptional, Matches, Max, Min, ValidateBy } from '@capstan/api';
import { Count, Nested, ObjectName, Text } from './fields.js';
import { EventObjectReference } from './object-reference.js';

/** Opaque, but it is part of the message id, so it must not contain `:`. */
const RESOURCE_VERSION_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

/**
 * What every event's `data` carries: which object, at which generation and resourceVersion, in which
 * cluster. Subclasses add the contract fields of their event, never a secret.
 */
export class EventData {
  @Nested(() => EventObjectReference)
  object!: EventObjectReference;

  @Count()
  generation!: number;

  @Matches(RESOURCE_VERSION_PATTERN)
  resourceVersion!: string;

  /** The owning Cluster (`cluster.x-k8s.io/cluster-name`); for a Cluster, its own name. */
  @ObjectName()
  clusterName!: string;
}

/** `spec.controlPlaneEndpoint` of the v1beta2 contract. */
export class ApiEndpoint {
  @Text(253)
  host!: string;

  @IsInt()
  @Min(1)
  @Max(65535)
  port!: number;
}

/** One entry of `status.failureDomains[]` (v1beta2). */
export class FailureDomain {
  @Text(253)
  name!: string;

  @IsOptional()
  @IsBoolean()
  controlPlane?: boolean;

  @IsOptional()
  @ValidateBy({
    name: 'isStringMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.values(value).every((v) => typeof v === 'string'),
      defaultMessage: () => '$property must be a map of strings',
    },
  })
  attributes?: Record<string, string>;
}

export const MACHINE_ADDRESS_TYPES = [
  'Hostname',
  'ExternalIP',
  'InternalIP',
  'ExternalDNS',
  'InternalDNS',
] as const;
export type MachineAddressType = (typeof MACHINE_ADDRESS_TYPES)[number];

/** One entry of `status.addresses[]`. */
export class MachineAddress {
  @IsIn(MACHINE_ADDRESS_TYPES)
  type!: MachineAddressType;

  @Text(253)
  address!: string;
}

/** One entry of a control plane's `status.versions[]`. */
export class VersionReplicas {
  @Text(64)
  version!: string;

  @Count()
  replicas!: number;
}
