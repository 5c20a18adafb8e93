import { IsBoolean, IsOptional, IsString, MaxLength, MinLength } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { PROVIDER_ID_FIXED_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, MinProperties, Nested } from '../schema/decorators.js';

import { MachineAddressSchema, ResourceSchema, type Condition } from './common.js';
import {
  AddressesField,
  ConditionsField,
  NonNegativeInt32Field,
  ObservedGenerationField,
  ProviderIDField,
} from './fields.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, conditionColumn, providerCrdLabels } from './printer-columns.js';
import { SIM_PROVIDER_NAME } from './sim-cluster.js';

@Description(
  'SimMachineSpec defines the desired state of a simulated machine, including the faults to inject.',
)
export class SimMachineSpecSchema {
  @ProviderIDField(
    'providerID is set by the provider once the machine boots: sim://<namespace>/<name>. It matches the providerID of the Node.',
  )
  providerID?: string;

  @NonNegativeInt32Field(
    'provisioningDelaySeconds is how long the machine takes to boot once its bootstrap data exists (the provider adds jitter).',
  )
  provisioningDelaySeconds?: number;

  @Description('failProvisioning makes provisioning fail with this message, as a broken host would.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  failProvisioning?: string;

  @NonNegativeInt32Field(
    "nodeNotReadyAfterSeconds makes the machine's Node report Ready=False this many seconds after it registered.",
  )
  nodeNotReadyAfterSeconds?: number;

  @NonNegativeInt32Field(
    "nodeDisappearsAfterSeconds deletes the machine's Node this many seconds after it registered, as if the host died.",
  )
  nodeDisappearsAfterSeconds?: number;
}
export type SimMachineSpec = SimMachineSpecSchema;

@Description(
  'SimMachineInitializationStatus provides observations of the SimMachine initialization (Cluster API contract fields).',
)
@MinProperties(1)
export class SimMachineInitializationStatusSchema {
  @Description('provisioned is true when the machine has booted. Never reset once set.')
  @IsOptional()
  @IsBoolean()
  provisioned?: boolean;
}
export type SimMachineInitializationStatus = SimMachineInitializationStatusSchema;

@Description('SimMachineStatus defines the observed state of SimMachine.')
export class SimMachineStatusSchema {
  @ConditionsField('Ready, Paused')
  conditions?: Condition[];

  @Description(
    'initialization provides observations of the SimMachine initialization (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => SimMachineInitializationStatusSchema)
  initialization?: SimMachineInitializationStatusSchema;

  @AddressesField('addresses of the simulated machine; the core copies them to the Machine.')
  addresses?: MachineAddressSchema[];

  @Description('failureDomain the machine runs in; the core copies it to the Machine.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  failureDomain?: string;

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type SimMachineStatus = SimMachineStatusSchema;

@Description(
  'SimMachine is a simulated host: it runs its K3s bootstrap data against real API servers and registers a Node.',
)
@CustomResource({
  resource: RESOURCES.SimMachine,
  shortNames: ['simma'],
  labels: providerCrdLabels(SIM_PROVIDER_NAME),
  printerColumns: [
    CLUSTER_LABEL_COLUMN,
    {
      name: 'Machine',
      type: 'string',
      jsonPath: '.metadata.ownerReferences[?(@.kind=="Machine")].name',
      description: 'Machine that owns this SimMachine',
    },
    { name: 'Provider ID', type: 'string', jsonPath: '.spec.providerID', description: 'Provider ID' },
    {
      name: 'Provisioned',
      type: 'boolean',
      jsonPath: '.status.initialization.provisioned',
      description: 'Machine has booted',
    },
    conditionColumn('Ready', 'Ready', 'Machine infrastructure is ready'),
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
  ],
})
export class SimMachineSchema extends ResourceSchema {
  @Description('spec is the desired state of SimMachine.')
  @IsOptional()
  @Nested(() => SimMachineSpecSchema)
  @Cel(PROVIDER_ID_FIXED_RULE, 'spec.providerID cannot be changed or removed once set', {
    fieldPath: '.providerID',
  })
  spec?: SimMachineSpecSchema;

  @Description('status is the observed state of SimMachine.')
  @IsOptional()
  @Nested(() => SimMachineStatusSchema)
  status?: SimMachineStatusSchema;
}
export type SimMachine = SimMachineSchema;
