import { IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';

import { CustomResource, Description, Nested } from '../schema/decorators.js';

import { LabelSelectorSchema, ResourceSchema, type Condition } from './common.js';
import { ClusterNameField, ConditionsField, DesiredReplicasField } from './fields.js';
import {
  MachineNamingSpecSchema,
  MachineSetDeletionSpecSchema,
  MachineTemplateSpecSchema,
  MachineSetSpecRules,
} from './machine-template.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn, REPLICA_COLUMNS } from './printer-columns.js';
import { ScalableStatusSchema } from './replica-status.js';
import {
  DeprecatedStatusField,
  MachineSetDeprecatedStatusSchema,
  type MachineSetDeprecatedStatus,
} from './deprecated-status.js';

@Description('MachineSetSpec defines the desired state of MachineSet.')
export class MachineSetSpecSchema {
  @ClusterNameField()
  clusterName!: string;

  @DesiredReplicasField('replicas is the number of desired machines. Defaults to 1.', 0)
  replicas?: number;

  @Description(
    'selector is a label query over machines that should match the replica count; it must match the template labels.',
  )
  @Nested(() => LabelSelectorSchema)
  selector!: LabelSelectorSchema;

  @Description(
    'template is the object that describes the machine that will be created if insufficient replicas are detected.',
  )
  @Nested(() => MachineTemplateSpecSchema)
  template!: MachineTemplateSpecSchema;

  @Description('machineNaming allows changing the naming pattern used when creating Machines.')
  @IsOptional()
  @Nested(() => MachineNamingSpecSchema)
  machineNaming?: MachineNamingSpecSchema;

  @Description('deletion contains configuration options for MachineSet deletion.')
  @IsOptional()
  @Nested(() => MachineSetDeletionSpecSchema)
  deletion?: MachineSetDeletionSpecSchema;
}
export type MachineSetSpec = MachineSetSpecSchema;

@Description('MachineSetStatus defines the observed state of MachineSet.')
export class MachineSetStatusSchema extends ScalableStatusSchema {
  @ConditionsField('MachinesReady, MachinesUpToDate, ScalingUp, ScalingDown, Remediating, Deleting, Paused')
  conditions?: Condition[];

  @DeprecatedStatusField(() => MachineSetDeprecatedStatusSchema)
  deprecated?: MachineSetDeprecatedStatus;
}
export type MachineSetStatus = MachineSetStatusSchema;

@Description(
  'MachineSet is the Schema for the machinesets API: keeps a number of identical Machines running.',
)
@CustomResource({
  resource: RESOURCES.MachineSet,
  shortNames: ['ms'],
  labels: CORE_CRD_LABELS,
  scale: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
    ...REPLICA_COLUMNS,
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.template.spec.version',
      description: 'Kubernetes version associated with this MachineSet',
    },
  ],
})
export class MachineSetSchema extends ResourceSchema {
  @Description('spec is the desired state of MachineSet.')
  @Nested(() => MachineSetSpecSchema)
  @MachineSetSpecRules()
  spec!: MachineSetSpecSchema;

  @Description('status is the observed state of MachineSet.')
  @IsOptional()
  @Nested(() => MachineSetStatusSchema)
  status?: MachineSetStatusSchema;
}
export type MachineSet = MachineSetSchema;
