import { IsOptional, IsString, Matches, MaxLength, MinLength } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, MinProperties, Nested } from '../schema/decorators.js';
import { PATTERNS } from '../schema/patterns.js';
import { ContractVersionedObjectReferenceSchema, ResourceSchema, type Condition } from './common.js';
import { ClusterNameField, ConditionsField } from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS } from './printer-columns.js';

// IPAddressClaim: a request for an IP address from a pool an IPAM provider manages.

/** CEL on the spec of an IPAM kind: upstream's webhook refuses every change to it. */
export const SPEC_IMMUTABLE_RULE = 'self == oldSelf';

@Description('LocalObjectReference names an object in the same namespace.')
export class LocalObjectReferenceSchema {
  @Description('name of the object.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;
}
export type LocalObjectReference = LocalObjectReferenceSchema;

/** `poolRef` of a claim or an address: the pool the address comes from. */
export function PoolRefField(): (target: object, property: string) => void {
  return (target, property) => {
    Description('poolRef is the IP pool the address comes from.')(target, property);
    Nested(() => ContractVersionedObjectReferenceSchema)(target, property);
  };
}

@Description('IPAddressClaimSpec defines the desired state of IPAddressClaim.')
export class IPAddressClaimSpecSchema {
  @ClusterNameField()
  @IsOptional()
  clusterName?: string;

  @PoolRefField()
  poolRef!: ContractVersionedObjectReferenceSchema;
}
export type IPAddressClaimSpec = IPAddressClaimSpecSchema;

@Description('IPAddressClaimStatus defines the observed state of IPAddressClaim.')
@MinProperties(1)
export class IPAddressClaimStatusSchema {
  @ConditionsField('Ready, Paused')
  conditions?: Condition[];

  @Description('addressRef is the IPAddress allocated for this claim.')
  @IsOptional()
  @Nested(() => LocalObjectReferenceSchema)
  addressRef?: LocalObjectReferenceSchema;
}
export type IPAddressClaimStatus = IPAddressClaimStatusSchema;

@Description(
  'IPAddressClaim is the Schema for the ipaddressclaims API: a request for an IP address from a pool.',
)
@CustomResource({
  resource: RESOURCES.IPAddressClaim,
  shortNames: [],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    {
      name: 'Pool Name',
      type: 'string',
      jsonPath: '.spec.poolRef.name',
      description: 'Name of the pool the address is claimed from',
    },
    {
      name: 'Pool Kind',
      type: 'string',
      jsonPath: '.spec.poolRef.kind',
      description: 'Kind of the pool the address is claimed from',
    },
    AGE_COLUMN,
  ],
})
export class IPAddressClaimSchema extends ResourceSchema {
  @Description('spec is the desired state of IPAddressClaim.')
  @Nested(() => IPAddressClaimSpecSchema)
  @Cel(SPEC_IMMUTABLE_RULE, 'spec is immutable')
  spec!: IPAddressClaimSpecSchema;

  @Description('status is the observed state of IPAddressClaim.')
  @IsOptional()
  @Nested(() => IPAddressClaimStatusSchema)
  status?: IPAddressClaimStatusSchema;
}
export type IPAddressClaim = IPAddressClaimSchema;
