import { IsOptional, IsString, Max, MaxLength, Min, MinLength } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { IsInt32 } from '../schema/validators.js';
import { ContractVersionedObjectReferenceSchema, ResourceSchema } from './common.js';
import { LocalObjectReferenceSchema, PoolRefField, SPEC_IMMUTABLE_RULE } from './ip-address-claim.js';
import { AGE_COLUMN, CORE_CRD_LABELS } from './printer-columns.js';

// IPAddress: an address an IPAM provider allocated from a pool for an IPAddressClaim.

const IP_RULE = 'isIP(self)';

@Description('IPAddressSpec defines the desired state of IPAddress.')
// Upstream's webhook refuses it too: an IPv4 prefix is at most 32 bits.
@Cel(
  '!isIP(self.address) || ip(self.address).family() == 6 || self.prefix <= 32',
  'prefix must be at most 32 for an IPv4 address',
  { fieldPath: '.prefix' },
)
export class IPAddressSpecSchema {
  @Description('claimRef is the IPAddressClaim this address was allocated for.')
  @Nested(() => LocalObjectReferenceSchema)
  claimRef!: LocalObjectReferenceSchema;

  @PoolRefField()
  poolRef!: ContractVersionedObjectReferenceSchema;

  @Description('address is the IP address, IPv4 or IPv6.')
  @IsString()
  @MinLength(1)
  @MaxLength(39)
  @Cel(IP_RULE, 'address must be an IP address such as 10.0.0.5 or fd00::5')
  address!: string;

  @Description('prefix is the length of the network prefix of the address.')
  @IsInt32()
  @Min(0)
  @Max(128)
  prefix!: number;

  @Description('gateway is the network gateway of the address, if any.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(39)
  @Cel(IP_RULE, 'gateway must be an IP address such as 10.0.0.1 or fd00::1')
  gateway?: string;
}
export type IPAddressSpec = IPAddressSpecSchema;

@Description('IPAddress is the Schema for the ipaddresses API: an address allocated from a pool for a claim.')
@CustomResource({
  resource: RESOURCES.IPAddress,
  shortNames: [],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address', description: 'Address' },
    {
      name: 'Pool Name',
      type: 'string',
      jsonPath: '.spec.poolRef.name',
      description: 'Name of the pool the address comes from',
    },
    {
      name: 'Pool Kind',
      type: 'string',
      jsonPath: '.spec.poolRef.kind',
      description: 'Kind of the pool the address comes from',
    },
    AGE_COLUMN,
  ],
})
export class IPAddressSchema extends ResourceSchema {
  @Description('spec is the desired state of IPAddress.')
  @Nested(() => IPAddressSpecSchema)
  @Cel(SPEC_IMMUTABLE_RULE, 'spec is immutable')
  spec!: IPAddressSpecSchema;
}
export type IPAddress = IPAddressSchema;
