import { IsOptional } from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { TEMPLATE_SPEC_IMMUTABLE_MESSAGE, TEMPLATE_SPEC_IMMUTABLE_RULE } from '../schema/cel-rules.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { MachineReadinessGateSchema, ObjectMetaSchema, ResourceSchema } from './common.js';
import { ReadinessGatesField } from './fields.js';
import { K3sConfigSpecSchema } from './k3s-config.js';
import {
  K3S_CONTROL_PLANE_PROVIDER_NAME,
  K3sControlPlaneEtcdSpecSchema,
  K3sControlPlaneRemediationSpecSchema,
  K3sControlPlaneRolloutSpecSchema,
  K3sControlPlaneUpgradePolicySpecSchema,
} from './k3s-control-plane.js';
import { MachineDeletionSpecSchema } from './machine.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, providerCrdLabels } from './printer-columns.js';

// K3sControlPlaneTemplate: the control plane a ClusterClass names (upstream's ControlPlaneTemplate contract,
// docs/book/src/developer/providers/contracts/control-plane.md). The topology controller sets what belongs to one
// cluster: spec.version, spec.replicas and spec.machineTemplate.spec.infrastructureRef, so the template has none of
// them; nor the day-2 requests (a restore, a rotation), which are asked of one cluster's control plane.

@Description(
  'K3sControlPlaneTemplateMachineTemplateSpec is what a class says of the control plane Machines; the infrastructure template is set by the topology.',
)
export class K3sControlPlaneTemplateMachineTemplateSpecSchema {
  @ReadinessGatesField()
  readinessGates?: MachineReadinessGateSchema[];

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;
}

@Description(
  'K3sControlPlaneTemplateMachineTemplate describes the control plane Machines of the clusters using the template.',
)
export class K3sControlPlaneTemplateMachineTemplateSchema {
  @Description('metadata is the labels and annotations given to the control plane Machines.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec defines the spec for the control plane Machines.')
  @IsOptional()
  @Nested(() => K3sControlPlaneTemplateMachineTemplateSpecSchema)
  spec?: K3sControlPlaneTemplateMachineTemplateSpecSchema;
}

@Description(
  'K3sControlPlaneTemplateResourceSpec is a K3sControlPlane spec without what the topology sets (version, replicas, the machine infrastructure) and without the day-2 requests.',
)
export class K3sControlPlaneTemplateResourceSpecSchema {
  @Description('machineTemplate describes the control plane Machines.')
  @IsOptional()
  @Nested(() => K3sControlPlaneTemplateMachineTemplateSchema)
  machineTemplate?: K3sControlPlaneTemplateMachineTemplateSchema;

  @Description('k3sConfigSpec is the K3s configuration of the control plane machines.')
  @IsOptional()
  @Nested(() => K3sConfigSpecSchema)
  k3sConfigSpec?: K3sConfigSpecSchema;

  @Description('rollout configures when (after) and how (strategy) control plane machines are replaced.')
  @IsOptional()
  @Nested(() => K3sControlPlaneRolloutSpecSchema)
  rollout?: K3sControlPlaneRolloutSpecSchema;

  @Description('remediation controls how unhealthy control plane machines are remediated.')
  @IsOptional()
  @Nested(() => K3sControlPlaneRemediationSpecSchema)
  remediation?: K3sControlPlaneRemediationSpecSchema;

  @Description('etcd: scheduled snapshots, their retention and their S3-compatible store (docs/day2.md).')
  @IsOptional()
  @Nested(() => K3sControlPlaneEtcdSpecSchema)
  etcd?: K3sControlPlaneEtcdSpecSchema;

  @Description('upgradePolicy: a snapshot before an upgrade, health gates and rollback (docs/day2.md).')
  @IsOptional()
  @Nested(() => K3sControlPlaneUpgradePolicySpecSchema)
  upgradePolicy?: K3sControlPlaneUpgradePolicySpecSchema;
}
export type K3sControlPlaneTemplateResourceSpec = K3sControlPlaneTemplateResourceSpecSchema;

@Description('K3sControlPlaneTemplateResource describes the K3sControlPlanes created from the template.')
export class K3sControlPlaneTemplateResourceSchema {
  @Description(
    'metadata is the labels and annotations given to the K3sControlPlanes created from the template.',
  )
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec is the spec of the K3sControlPlanes created from the template.')
  @Nested(() => K3sControlPlaneTemplateResourceSpecSchema)
  spec!: K3sControlPlaneTemplateResourceSpecSchema;
}

@Description('K3sControlPlaneTemplateSpec defines the desired state of K3sControlPlaneTemplate.')
export class K3sControlPlaneTemplateSpecSchema {
  @Description('template is the K3sControlPlane a topology creates for each cluster of its class.')
  @Nested(() => K3sControlPlaneTemplateResourceSchema)
  template!: K3sControlPlaneTemplateResourceSchema;
}
export type K3sControlPlaneTemplateSpec = K3sControlPlaneTemplateSpecSchema;

@Description(
  'K3sControlPlaneTemplate is the template a ClusterClass names for its K3s control plane (upstream ControlPlaneTemplate contract).',
)
@CustomResource({
  resource: RESOURCES.K3sControlPlaneTemplate,
  shortNames: ['k3scpt'],
  labels: providerCrdLabels(K3S_CONTROL_PLANE_PROVIDER_NAME),
  printerColumns: [CLUSTER_LABEL_COLUMN, AGE_COLUMN],
})
export class K3sControlPlaneTemplateSchema extends ResourceSchema {
  @Description('spec is the desired state of K3sControlPlaneTemplate.')
  @Nested(() => K3sControlPlaneTemplateSpecSchema)
  @Cel(TEMPLATE_SPEC_IMMUTABLE_RULE, TEMPLATE_SPEC_IMMUTABLE_MESSAGE, { fieldPath: '.template.spec' })
  spec!: K3sControlPlaneTemplateSpecSchema;
}
export type K3sControlPlaneTemplate = K3sControlPlaneTemplateSchema;
