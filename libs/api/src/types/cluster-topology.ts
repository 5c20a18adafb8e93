import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsRFC3339,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { Cel, Description, ListType, MinProperties, Nested } from '../schema/decorators.js';
import type { SchemaClass } from '../schema/metadata.js';
import { PATTERNS } from '../schema/patterns.js';
import { IsFreeFormJson, IsInt32 } from '../schema/validators.js';
import {
  ClusterClassObjectMetaSchema,
  ControlPlaneClassHealthCheckSchema,
  MachineDeploymentClassHealthCheckSchema,
  MachineDeploymentClassMachineDeletionSpecSchema,
  MachineDeploymentClassRolloutSpecSchema,
} from './cluster-class.js';
import type { MachineReadinessGate, MachineTaint } from './common.js';
import { NonNegativeInt32Field, ReadinessGatesField, StringListField, TaintsField } from './fields.js';
import { MachineDeletionSpecSchema } from './machine.js';

// spec.topology of a Cluster: the ClusterClass it is built from and what it sets of that class. Validated as upstream's
// CRD does; the core's topology controller builds the Cluster's objects from it and sets its controlPlaneRef and
// infrastructureRef.
//
// Upstream's webhook rules expressed below as CEL: the version is a semantic version starting with v; a topology
// cannot be removed from a Cluster (the rule is on the Cluster spec). The core's Cluster webhook checks the rest
// (apps/core/src/webhook/cluster-admission.ts): a topology added to an existing Cluster (CEL on the spec cannot read the
// unsafe-update-class-name annotation) and the rules that need the ClusterClass or the Cluster's objects (classes,
// variables and versions it defines, version upgrades, a rebase).

type FieldDecorator = (target: object, property: string) => void;

const field =
  (...decorators: FieldDecorator[]): FieldDecorator =>
  (target, property) => {
    for (const decorate of decorators) decorate(target, property);
  };

/** A DNS-1123 label: namespace names. */
const NAMESPACE_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A version as upstream's webhook accepts it: `v` and a strict semantic version, e.g. v1.31.4 or v1.32.0-rc.1. */
const TOPOLOGY_VERSION_RULE =
  "self.matches('^v(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-[0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?([+][0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?$')";

@Description('ClusterClassRef is the reference to the ClusterClass a topology is built from.')
export class ClusterClassRefSchema {
  @Description('name of the ClusterClass, a DNS subdomain.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;

  @Description(
    "namespace of the ClusterClass, a DNS label; unset or empty: the Cluster's namespace.",
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  @Matches(NAMESPACE_PATTERN)
  namespace?: string;
}
export type ClusterClassRef = ClusterClassRefSchema;

@Description(
  'ClusterVariable is the value of a variable of the ClusterClass; the ClusterClass schema of the variable checks it (Capstan does not).',
)
export class ClusterVariableSchema {
  @Description('name of the variable.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  name!: string;

  @Description('value of the variable: any JSON value.')
  @IsFreeFormJson()
  value!: unknown;
}
export type ClusterVariable = ClusterVariableSchema;

/** A list of variable values, a list map keyed by name. */
function VariableListField(description: string): FieldDecorator {
  return field(
    IsOptional(),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(1000),
    Nested(() => ClusterVariableSchema),
    ListType('map', ['name']),
    Description(description),
  );
}

@Description(
  'TopologyVariables are the variables of the control plane, a MachineDeployment or a MachinePool of the topology.',
)
@MinProperties(1)
export class TopologyVariablesSchema {
  @VariableListField('overrides override the values of Cluster level variables.')
  overrides?: ClusterVariableSchema[];
}
export type TopologyVariables = TopologyVariablesSchema;

/** `variables` of the control plane or a worker topology. */
const TopologyVariablesField = (what: string): FieldDecorator =>
  field(
    IsOptional(),
    Nested(() => TopologyVariablesSchema),
    Description(`variables customize the ${what} through patches.`),
  );

/** `metadata` of the control plane or a worker topology. */
const TopologyMetadataField = (description: string): FieldDecorator =>
  field(IsOptional(), Nested(() => ClusterClassObjectMetaSchema), Description(description));

/** `replicas` of the control plane or a worker topology. */
const TopologyReplicasField = (description: string): FieldDecorator =>
  field(IsOptional(), IsInt32(), Description(description));

/** `healthCheck.enabled` of the control plane or a worker topology. */
const HealthCheckEnabledField = (): FieldDecorator =>
  field(
    IsOptional(),
    IsBoolean(),
    Description(
      'enabled: false creates no MachineHealthCheck; true always creates one (the topology or the ClusterClass must define it); unset creates one if either defines it.',
    ),
  );

/** A topology's `healthCheck`: `enabled` and, overriding the ClusterClass's, its checks and remediation. */
const TopologyHealthCheckField = (type: () => SchemaClass, what: string): FieldDecorator =>
  field(
    IsOptional(),
    Nested(type),
    Description(
      `healthCheck enables, disables or overrides the MachineHealthCheck the ClusterClass defines for the ${what}.`,
    ),
  );

@Description('ControlPlaneTopologyRolloutSpec defines the rollout behavior of the control plane.')
@MinProperties(1)
export class ControlPlaneTopologyRolloutSpecSchema {
  @Description(
    'after asks for a rollout after the given time (RFC 3339, e.g. "2023-03-09T09:00:00Z") even if nothing changed in the control plane.',
  )
  @IsOptional()
  @IsRFC3339()
  after?: string;
}
export type ControlPlaneTopologyRolloutSpec = ControlPlaneTopologyRolloutSpecSchema;

@Description(
  'ControlPlaneTopologyHealthCheck enables, disables or overrides the MachineHealthCheck of the control plane Machines.',
)
export class ControlPlaneTopologyHealthCheckSchema extends ControlPlaneClassHealthCheckSchema {
  @HealthCheckEnabledField()
  enabled?: boolean;
}
export type ControlPlaneTopologyHealthCheck = ControlPlaneTopologyHealthCheckSchema;

@Description('ControlPlaneTopology specifies the parameters of the control plane of the Cluster.')
@MinProperties(1)
export class ControlPlaneTopologySchema {
  @TopologyMetadataField(
    'metadata is given to the control plane object and, if it is Machine based, to its Machines; merged with the metadata of the ClusterClass.',
  )
  metadata?: ClusterClassObjectMetaSchema;

  @TopologyReplicasField(
    'replicas is the number of control plane nodes; unset: the control plane object is created without replicas.',
  )
  replicas?: number;

  @Description('rollout configures rolling updates of the control plane.')
  @IsOptional()
  @Nested(() => ControlPlaneTopologyRolloutSpecSchema)
  rollout?: ControlPlaneTopologyRolloutSpecSchema;

  @TopologyHealthCheckField(() => ControlPlaneTopologyHealthCheckSchema, 'control plane')
  healthCheck?: ControlPlaneTopologyHealthCheckSchema;

  @Description('deletion contains configuration options for the deletion of control plane Machines.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Nodes of the control plane.')
  taints?: MachineTaint[];

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGate[];

  @TopologyVariablesField('control plane')
  variables?: TopologyVariablesSchema;
}
export type ControlPlaneTopology = ControlPlaneTopologySchema;

@Description(
  'MachineDeploymentTopologyHealthCheck enables, disables or overrides the MachineHealthCheck of the Machines of a MachineDeployment.',
)
export class MachineDeploymentTopologyHealthCheckSchema extends MachineDeploymentClassHealthCheckSchema {
  @HealthCheckEnabledField()
  enabled?: boolean;
}
export type MachineDeploymentTopologyHealthCheck = MachineDeploymentTopologyHealthCheckSchema;

@Description('MachineDeploymentTopologyRolloutSpec defines the rollout behavior of a MachineDeployment.')
export class MachineDeploymentTopologyRolloutSpecSchema extends MachineDeploymentClassRolloutSpecSchema {
  @Description(
    'after asks for a rollout after the given time (RFC 3339, e.g. "2023-03-09T09:00:00Z") even if nothing changed in the MachineDeployment.',
  )
  @IsOptional()
  @IsRFC3339()
  after?: string;
}
export type MachineDeploymentTopologyRolloutSpec = MachineDeploymentTopologyRolloutSpecSchema;

/** `class` of a worker topology: the name of a worker class of the ClusterClass. */
const WorkerClassField = (what: string): FieldDecorator =>
  field(
    IsString(),
    MinLength(1),
    MaxLength(256),
    Description(`class is the name of the ${what} class of the ClusterClass the workers are created from.`),
  );

/** `name` of a worker topology, unique in its list. */
const WorkerTopologyNameField = (what: string): FieldDecorator =>
  field(
    IsString(),
    MinLength(1),
    MaxLength(63),
    Matches(PATTERNS.objectName),
    Description(`name identifies the ${what} in the topology; the ${what}'s name is made from it.`),
  );

@Description('MachineDeploymentTopology specifies a set of worker Machines managed by a MachineDeployment.')
export class MachineDeploymentTopologySchema {
  @TopologyMetadataField(
    'metadata is given to the MachineDeployment and its Machines; merged with the metadata of the ClusterClass.',
  )
  metadata?: ClusterClassObjectMetaSchema;

  @WorkerClassField('MachineDeployment')
  class!: string;

  @WorkerTopologyNameField('MachineDeployment')
  name!: string;

  @Description('failureDomain is the failure domain the Machines are created in; a name from the Cluster status.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  failureDomain?: string;

  @TopologyReplicasField(
    'replicas is the number of worker nodes; unset: the MachineDeployment is created without replicas (e.g. for the cluster autoscaler).',
  )
  replicas?: number;

  @TopologyHealthCheckField(() => MachineDeploymentTopologyHealthCheckSchema, 'MachineDeployment')
  healthCheck?: MachineDeploymentTopologyHealthCheckSchema;

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeploymentClassMachineDeletionSpecSchema)
  deletion?: MachineDeploymentClassMachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Nodes of the Machines.')
  taints?: MachineTaint[];

  @NonNegativeInt32Field(
    'minReadySeconds is the minimum number of seconds a new Machine should be ready before it is available. Defaults to 0.',
  )
  minReadySeconds?: number;

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGate[];

  @Description('rollout configures how rolling updates replace the Machines.')
  @IsOptional()
  @Nested(() => MachineDeploymentTopologyRolloutSpecSchema)
  rollout?: MachineDeploymentTopologyRolloutSpecSchema;

  @TopologyVariablesField('MachineDeployment')
  variables?: TopologyVariablesSchema;
}
export type MachineDeploymentTopology = MachineDeploymentTopologySchema;

@Description('MachinePoolTopology specifies a pool of worker nodes managed by a MachinePool.')
export class MachinePoolTopologySchema {
  @TopologyMetadataField('metadata is given to the MachinePool; merged with the metadata of the ClusterClass.')
  metadata?: ClusterClassObjectMetaSchema;

  @WorkerClassField('MachinePool')
  class!: string;

  @WorkerTopologyNameField('MachinePool')
  name!: string;

  @StringListField('failureDomains are the failure domains the MachinePool may place machines in.', {
    maxItems: 100,
    minItems: 1,
    itemMinLength: 1,
    itemMaxLength: 256,
  })
  failureDomains?: string[];

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;

  @TaintsField('taints are the node taints that Cluster API manages on the Nodes of the pool.')
  taints?: MachineTaint[];

  @NonNegativeInt32Field(
    'minReadySeconds is the minimum number of seconds a new machine of the pool should be ready before it is available. Defaults to 0.',
  )
  minReadySeconds?: number;

  @TopologyReplicasField(
    'replicas is the number of nodes of the pool; unset: the MachinePool is created without replicas (e.g. for the cluster autoscaler).',
  )
  replicas?: number;

  @TopologyVariablesField('MachinePool')
  variables?: TopologyVariablesSchema;
}
export type MachinePoolTopology = MachinePoolTopologySchema;

/** A list of worker topologies, a list map keyed by name. */
const WorkerTopologiesField = (description: string, type: () => SchemaClass): FieldDecorator =>
  field(
    IsOptional(),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(2000),
    Nested(type),
    ListType('map', ['name']),
    Description(description),
  );

@Description('WorkersTopology holds the sets of worker nodes of the Cluster.')
@MinProperties(1)
export class WorkersTopologySchema {
  @WorkerTopologiesField(
    'machineDeployments are the MachineDeployments of the Cluster.',
    () => MachineDeploymentTopologySchema,
  )
  machineDeployments?: MachineDeploymentTopologySchema[];

  @WorkerTopologiesField('machinePools are the MachinePools of the Cluster.', () => MachinePoolTopologySchema)
  machinePools?: MachinePoolTopologySchema[];
}
export type WorkersTopology = WorkersTopologySchema;

@Description(
  'Topology is the ClusterClass a Cluster is built from and what the Cluster sets of it (reconciled by the topology controller of the core).',
)
export class TopologySchema {
  @Description('classRef is the reference to the ClusterClass the topology is built from.')
  @Nested(() => ClusterClassRefSchema)
  classRef!: ClusterClassRefSchema;

  @Description('version is the Kubernetes version of the Cluster: v and a semantic version, e.g. v1.31.4.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @Cel(TOPOLOGY_VERSION_RULE, 'version must be a semantic version starting with v, such as v1.31.4')
  version!: string;

  @Description('controlPlane describes the control plane of the Cluster.')
  @IsOptional()
  @Nested(() => ControlPlaneTopologySchema)
  controlPlane?: ControlPlaneTopologySchema;

  @Description('workers holds the sets of worker nodes of the Cluster.')
  @IsOptional()
  @Nested(() => WorkersTopologySchema)
  workers?: WorkersTopologySchema;

  @VariableListField(
    'variables customize the Cluster through patches; their values must match the variable schemas of the ClusterClass.',
  )
  variables?: ClusterVariableSchema[];
}
export type Topology = TopologySchema;
