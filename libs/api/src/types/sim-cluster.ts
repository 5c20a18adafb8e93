import { IsBoolean, IsIn, IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Default, Description, MinProperties, Nested } from '../schema/decorators.js';

import { APIEndpointSchema, FailureDomainSchema, ResourceSchema, type Condition } from './common.js';
import { ConditionsField, FailureDomainsField, ObservedGenerationField } from './fields.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, conditionColumn, providerCrdLabels } from './printer-columns.js';

export const SIM_CLUSTER_MODES = ['dedicated', 'shared'] as const;
export type SimClusterMode = (typeof SIM_CLUSTER_MODES)[number];

/** Value of the `cluster.x-k8s.io/provider` label on the sim provider's objects. */
export const SIM_PROVIDER_NAME = 'infrastructure-sim';

@Description('SimClusterSpec defines the desired state of a simulated cluster infrastructure.')
export class SimClusterSpecSchema {
  @Description(
    'controlPlaneEndpoint is where the workload API server answers; allocated by the provider unless given.',
  )
  @IsOptional()
  @Nested(() => APIEndpointSchema)
  controlPlaneEndpoint?: APIEndpointSchema;

  @FailureDomainsField(
    'failureDomains the simulated machines can be spread over; copied to the status once provisioned.',
  )
  failureDomains?: FailureDomainSchema[];

  @Description(
    'mode is dedicated (the default: one real kube-apiserver per workload cluster) or shared (one workload API server serves many clusters, for scale tests).',
  )
  @IsOptional()
  @IsIn(SIM_CLUSTER_MODES)
  @Default('dedicated')
  @Cel('self == oldSelf', 'spec.mode is immutable')
  mode?: SimClusterMode;
}
export type SimClusterSpec = SimClusterSpecSchema;

@Description(
  'SimClusterInitializationStatus provides observations of the SimCluster initialization (Cluster API contract fields).',
)
@MinProperties(1)
export class SimClusterInitializationStatusSchema {
  @Description(
    'provisioned is true when the cluster infrastructure is fully provisioned. Never reset once set.',
  )
  @IsOptional()
  @IsBoolean()
  provisioned?: boolean;
}
export type SimClusterInitializationStatus = SimClusterInitializationStatusSchema;

@Description('SimClusterStatus defines the observed state of SimCluster.')
export class SimClusterStatusSchema {
  @ConditionsField('Ready, Paused')
  conditions?: Condition[];

  @Description(
    'initialization provides observations of the SimCluster initialization (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => SimClusterInitializationStatusSchema)
  initialization?: SimClusterInitializationStatusSchema;

  @FailureDomainsField('failureDomains is the list of failure domains the core copies to the Cluster.')
  failureDomains?: FailureDomainSchema[];

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type SimClusterStatus = SimClusterStatusSchema;

@Description(
  'SimCluster is the infrastructure of a simulated workload cluster: its API endpoint and failure domains.',
)
@CustomResource({
  resource: RESOURCES.SimCluster,
  shortNames: ['simcl'],
  labels: providerCrdLabels(SIM_PROVIDER_NAME),
  printerColumns: [
    CLUSTER_LABEL_COLUMN,
    {
      name: 'Host',
      type: 'string',
      jsonPath: '.spec.controlPlaneEndpoint.host',
      description: 'Control plane endpoint host',
    },
    {
      name: 'Port',
      type: 'integer',
      jsonPath: '.spec.controlPlaneEndpoint.port',
      description: 'Control plane endpoint port',
    },
    {
      name: 'Mode',
      type: 'string',
      jsonPath: '.spec.mode',
      description: 'dedicated or shared workload API server',
    },
    {
      name: 'Provisioned',
      type: 'boolean',
      jsonPath: '.status.initialization.provisioned',
      description: 'Cluster infrastructure is provisioned',
    },
    conditionColumn('Ready', 'Ready', 'Cluster infrastructure is ready'),
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
  ],
})
export class SimClusterSchema extends ResourceSchema {
  @Description('spec is the desired state of SimCluster.')
  @IsOptional()
  @Nested(() => SimClusterSpecSchema)
  @Cel(
    '!has(oldSelf.controlPlaneEndpoint) || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)',
    'spec.controlPlaneEndpoint cannot be changed or removed once set',
    { fieldPath: '.controlPlaneEndpoint' },
  )
  spec?: SimClusterSpecSchema;

  @Description('status is the observed state of SimCluster.')
  @IsOptional()
  @Nested(() => SimClusterStatusSchema)
  status?: SimClusterStatusSchema;
}
export type SimCluster = SimClusterSchema;
