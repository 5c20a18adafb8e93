import {
  K3S_CERTIFICATE_SERVICES,
  K3S_LEAF_CERTIFICATE_DAYS,
  type K3sCertificateService,
} from '../constants/certificates.js';
import { IN_PLACE_POLICIES, type InPlacePolicy } from '../constants/in-place.js';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsRFC3339,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Default, Description, MinProperties, Nested } from '../schema/decorators.js';
import { IsInt32, IsInt64, IsIntOrString } from '../schema/validators.js';
import { PATTERNS } from '../schema/patterns.js';
import {
  ContractVersionedObjectReferenceSchema,
  MachineReadinessGateSchema,
  ObjectMetaSchema,
  ResourceSchema,
  type Condition,
} from './common.js';
import {
  ConditionsField,
  DesiredReplicasField,
  NonNegativeInt32Field,
  ReadinessGatesField,
} from './fields.js';
import { K3sConfigSpecSchema } from './k3s-config.js';
import { MachineDeletionSpecSchema } from './machine.js';
import {
  AGE_COLUMN,
  CLUSTER_LABEL_COLUMN,
  conditionColumn,
  providerCrdLabels,
  REPLICA_COLUMNS,
} from './printer-columns.js';
import { ScalableStatusSchema } from './replica-status.js';

/** Value of the `cluster.x-k8s.io/provider` label on the K3s control plane provider's objects. */
export const K3S_CONTROL_PLANE_PROVIDER_NAME = 'control-plane-k3s';

@Description('K3sControlPlaneMachineTemplateSpec defines the spec of the control plane Machines.')
export class K3sControlPlaneMachineTemplateSpecSchema {
  @Description(
    'infrastructureRef is a required reference to the infrastructure machine template cloned for each control plane machine.',
  )
  @Nested(() => ContractVersionedObjectReferenceSchema)
  infrastructureRef!: ContractVersionedObjectReferenceSchema;

  @ReadinessGatesField()
  readinessGates?: MachineReadinessGateSchema[];

  @Description('deletion contains configuration options for Machine deletion.')
  @IsOptional()
  @Nested(() => MachineDeletionSpecSchema)
  deletion?: MachineDeletionSpecSchema;
}
export type K3sControlPlaneMachineTemplateSpec = K3sControlPlaneMachineTemplateSpecSchema;

@Description('K3sControlPlaneMachineTemplate defines the template for the control plane Machines.')
export class K3sControlPlaneMachineTemplateSchema {
  @Description('metadata is the labels and annotations given to the control plane Machines.')
  @IsOptional()
  @Nested(() => ObjectMetaSchema)
  metadata?: ObjectMetaSchema;

  @Description('spec defines the spec for the control plane Machines.')
  @Nested(() => K3sControlPlaneMachineTemplateSpecSchema)
  spec!: K3sControlPlaneMachineTemplateSpecSchema;
}
export type K3sControlPlaneMachineTemplate = K3sControlPlaneMachineTemplateSchema;

@Description('K3sControlPlaneRollingUpdate controls the rolling update of control plane Machines.')
export class K3sControlPlaneRollingUpdateSchema {
  @Description(
    'maxSurge is how many machines may exist above the desired number during a rollout: 1 (surge one new, then delete one old; the default) or 0 (delete first).',
  )
  @IsOptional()
  @IsIntOrString()
  @Default(1)
  @Cel('self in [0, 1]', 'maxSurge must be 0 or 1')
  maxSurge?: number | string;
}
export type K3sControlPlaneRollingUpdate = K3sControlPlaneRollingUpdateSchema;

@Description('K3sControlPlaneRolloutStrategy describes how control plane Machines are replaced.')
export class K3sControlPlaneRolloutStrategySchema {
  @Description('type of rollout; only RollingUpdate is supported.')
  @IsOptional()
  @IsIn(['RollingUpdate'])
  @Default('RollingUpdate')
  type?: 'RollingUpdate';

  @Description('rollingUpdate is the rolling update config params.')
  @IsOptional()
  @Nested(() => K3sControlPlaneRollingUpdateSchema)
  rollingUpdate?: K3sControlPlaneRollingUpdateSchema;
}
export type K3sControlPlaneRolloutStrategy = K3sControlPlaneRolloutStrategySchema;

@Description(
  'K3sControlPlaneRolloutBeforeSpec says what makes control plane Machines change before something else would (upstream rollout.before).',
)
export class K3sControlPlaneRolloutBeforeSpecSchema {
  @Description(
    "certificatesExpiryDays: a server whose certificates (Machine.status.certificatesExpiryDate) expire within this many days has them rotated in place, one server at a time, with no Machine replaced. Upstream's KubeadmControlPlane replaces such a Machine instead. At least 7, and below K3s's 365-day certificate lifetime, so a rotation leaves a server outside the window.",
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 7', 'certificatesExpiryDays must be at least 7')
  @Cel(
    `self < ${K3S_LEAF_CERTIFICATE_DAYS}`,
    `certificatesExpiryDays must be below ${K3S_LEAF_CERTIFICATE_DAYS}, the lifetime of the certificates K3s issues: a rotation would never leave the window`,
  )
  certificatesExpiryDays?: number;
}
export type K3sControlPlaneRolloutBeforeSpec = K3sControlPlaneRolloutBeforeSpecSchema;

@Description('K3sControlPlaneRolloutSpec configures when and how control plane Machines are rolled out.')
export class K3sControlPlaneRolloutSpecSchema {
  @Description('before: certificate expiry that triggers an in-place rotation (certificatesExpiryDays).')
  @IsOptional()
  @Nested(() => K3sControlPlaneRolloutBeforeSpecSchema)
  before?: K3sControlPlaneRolloutBeforeSpecSchema;

  @Description(
    'after asks for a rollout after the given time (RFC 3339) even if nothing changed in the K3sControlPlane.',
  )
  @IsOptional()
  @IsRFC3339()
  after?: string;

  @Description(
    'strategy specifies how to roll out control plane Machines. Defaults to RollingUpdate with maxSurge 1.',
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneRolloutStrategySchema)
  @Default({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } })
  strategy?: K3sControlPlaneRolloutStrategySchema;

  @Description(
    'inPlace says whether changes are applied to existing control plane Machines through machine plans, one machine at a time: Never (replace Machines; unset means Never, so objects that do not use it stay as upstream writes them), Preferred (in place when the bootstrap provider can, else replace) or Required (never replace for a spec change; a change that cannot be applied in place stops with a condition naming the field).',
  )
  @IsOptional()
  @IsIn(IN_PLACE_POLICIES)
  inPlace?: InPlacePolicy;
}
export type K3sControlPlaneRolloutSpec = K3sControlPlaneRolloutSpecSchema;

@Description('K3sControlPlaneRemediationSpec controls how unhealthy control plane Machines are remediated.')
@MinProperties(1)
export class K3sControlPlaneRemediationSpecSchema {
  @NonNegativeInt32Field(
    'maxRetry is how many times in a row a machine created to replace an unhealthy one may itself be remediated. Unlimited when not set.',
  )
  maxRetry?: number;

  @NonNegativeInt32Field(
    'retryPeriodSeconds is how long to wait before remediating a machine created as a replacement. Immediately when not set.',
  )
  retryPeriodSeconds?: number;

  @NonNegativeInt32Field(
    'minHealthyPeriodSeconds: a failure after this long since the previous remediation is unrelated to it and is not a retry. Defaults to 3600.',
  )
  minHealthyPeriodSeconds?: number;
}
export type K3sControlPlaneRemediationSpec = K3sControlPlaneRemediationSpecSchema;

@Description(
  "EtcdS3Spec is an S3-compatible store for etcd snapshots (K3s's etcd-s3-* settings). The access and secret keys come from a Secret in the control plane's namespace.",
)
export class EtcdS3SpecSchema {
  @Description('endpoint is the store as host[:port], without a scheme (K3s etcd-s3-endpoint).')
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  @Matches(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$/, {
    message: 'endpoint must be host[:port] without a scheme or path',
  })
  endpoint!: string;

  @Description('bucket holds the snapshots; it must exist.')
  @IsString()
  @MinLength(3)
  @MaxLength(63)
  @Matches(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, {
    message: 'bucket must be an S3 bucket name (lower case letters, digits, dots and dashes)',
  })
  bucket!: string;

  @Description('folder is the key prefix of the snapshots in the bucket. Unset: the bucket root.')
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Za-z0-9!_.*'()/-]+$/, {
    message: "folder may hold letters, digits, slashes and !_.*'()- only",
  })
  folder?: string;

  @Description('region of the bucket. Defaults to us-east-1.')
  @IsOptional()
  @IsString()
  @MaxLength(64)
  region?: string;

  @Description(
    "credentialsSecretName is a Secret in the control plane's namespace with the keys accessKey and secretKey.",
  )
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  credentialsSecretName!: string;

  @Description('endpointCA is the PEM bundle trusted for the endpoint. Unset: the system trust store.')
  @IsOptional()
  @IsString()
  @MaxLength(65536)
  endpointCA?: string;

  @Description('insecure speaks plain HTTP to the endpoint (K3s etcd-s3-insecure).')
  @IsOptional()
  @IsBoolean()
  insecure?: boolean;

  @Description("skipSSLVerify does not verify the endpoint's certificate (K3s etcd-s3-skip-ssl-verify).")
  @IsOptional()
  @IsBoolean()
  skipSSLVerify?: boolean;
}
export type EtcdS3Spec = EtcdS3SpecSchema;

@Description("K3sControlPlaneEtcdSpec configures the snapshots of the cluster's embedded etcd.")
export class K3sControlPlaneEtcdSpecSchema {
  @Description(
    'snapshotScheduleCron takes a Scheduled EtcdSnapshot on this cron schedule (five fields: minute hour day-of-month month day-of-week; */n, ranges and lists; UTC). Unset: no scheduled snapshots (K3s defaults to "0 */12 * * *" on its own servers).',
  )
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(/^\s*\S+(\s+\S+){4}\s*$/, {
    message: 'snapshotScheduleCron must have five fields: minute hour day-of-month month day-of-week',
  })
  snapshotScheduleCron?: string;

  @Description(
    'snapshotRetention is how many Scheduled snapshots are kept; older ones are deleted. Defaults to 5, as K3s.',
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 1', 'snapshotRetention must be at least 1')
  @Default(5)
  snapshotRetention?: number;

  @Description(
    's3 stores snapshots in an S3-compatible store. Unset: on the server machine that took them (lost with it).',
  )
  @IsOptional()
  @Nested(() => EtcdS3SpecSchema)
  s3?: EtcdS3SpecSchema;
}
export type K3sControlPlaneEtcdSpec = K3sControlPlaneEtcdSpecSchema;

export const ETCD_RESTORE_CONFIGS = ['None', 'KubernetesVersion', 'All'] as const;
export type EtcdRestoreConfig = (typeof ETCD_RESTORE_CONFIGS)[number];

@Description(
  "K3sControlPlaneEtcdRestoreSpec asks for the cluster's etcd to be restored from an EtcdSnapshot (Rancher's etcdSnapshotRestore): a new generation starts a restore.",
)
export class K3sControlPlaneEtcdRestoreSpecSchema {
  @Description('name of an EtcdSnapshot of this cluster, in its namespace, that Succeeded.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  name!: string;

  @Description('generation: raise it to restore again (the same snapshot or another).')
  @IsInt64()
  @Cel('self >= 1', 'generation must be at least 1')
  generation!: number;

  @Description(
    "restoreConfig (Rancher's restoreRKEConfig): None (the default) restores the etcd data only; KubernetesVersion also sets spec.version back to the version the servers ran when the snapshot was saved, before the reset; All sets spec.version and spec.k3sConfigSpec back to what they were when the snapshot was saved (replicas, machineTemplate, rollout and etcd settings stay as they are).",
  )
  @IsOptional()
  @IsIn(ETCD_RESTORE_CONFIGS)
  restoreConfig?: EtcdRestoreConfig;
}
export type K3sControlPlaneEtcdRestoreSpec = K3sControlPlaneEtcdRestoreSpecSchema;

@Description(
  "K3sControlPlaneRotateCertificatesSpec asks for the servers' certificates to be rotated in place (Rancher's rotateCertificates): a new generation starts a rotation, one server at a time.",
)
export class K3sControlPlaneRotateCertificatesSpecSchema {
  @Description('generation: raise it to rotate again.')
  @IsInt64()
  @Cel('self >= 1', 'generation must be at least 1')
  generation!: number;

  @Description(
    'services limits the rotation to these K3s certificate services (k3s certificate rotate --service); all when unset.',
  )
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(K3S_CERTIFICATE_SERVICES.length)
  @IsIn(K3S_CERTIFICATE_SERVICES, { each: true })
  services?: K3sCertificateService[];
}
export type K3sControlPlaneRotateCertificatesSpec = K3sControlPlaneRotateCertificatesSpecSchema;

export const CERTIFICATE_ROTATION_PHASES = ['Rotating', 'Finished', 'Failed'] as const;
export type CertificateRotationPhase = (typeof CERTIFICATE_ROTATION_PHASES)[number];
export const CERTIFICATE_ROTATION_REASONS = ['Requested', 'ExpiringSoon'] as const;
export type CertificateRotationReason = (typeof CERTIFICATE_ROTATION_REASONS)[number];

@Description('K3sControlPlaneCertificateRotationStatus is where the last certificate rotation stands.')
export class K3sControlPlaneCertificateRotationStatusSchema {
  @Description(
    'reason: Requested (spec.rotateCertificates) or ExpiringSoon (rollout.before.certificatesExpiryDays).',
  )
  @IsIn(CERTIFICATE_ROTATION_REASONS)
  reason!: CertificateRotationReason;

  @Description('generation of spec.rotateCertificates a Requested rotation is about.')
  @IsOptional()
  @IsInt64()
  generation?: number;

  @Description('phase: Rotating (one server at a time), Finished or Failed.')
  @IsIn(CERTIFICATE_ROTATION_PHASES)
  phase!: CertificateRotationPhase;

  @Description('machines still to rotate, in order; the first is rotating now.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  pending?: string[];

  @Description('rotated lists the server machines whose certificates this rotation renewed.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  rotated?: string[];

  @Description('startTime is when the rotation started (RFC 3339).')
  @IsRFC3339()
  startTime!: string;

  @Description('completionTime is when it finished or failed (RFC 3339).')
  @IsOptional()
  @IsRFC3339()
  completionTime?: string;

  @Description('message says what failed and how to recover.')
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  message?: string;
}
export type K3sControlPlaneCertificateRotationStatus = K3sControlPlaneCertificateRotationStatusSchema;

@Description(
  "K3sControlPlaneRotateEncryptionKeysSpec asks for the secrets-encryption key to be rotated (Rancher's rotateEncryptionKeys): a new generation starts a rotation.",
)
export class K3sControlPlaneRotateEncryptionKeysSpecSchema {
  @Description('generation: raise it to rotate again.')
  @IsInt64()
  @Cel('self >= 1', 'generation must be at least 1')
  generation!: number;
}
export type K3sControlPlaneRotateEncryptionKeysSpec = K3sControlPlaneRotateEncryptionKeysSpecSchema;

/** Rancher's phases (rotate_encryption_keys_phase.go). */
export const ENCRYPTION_KEY_ROTATION_PHASES = [
  'Prepare',
  'PostPrepareRestart',
  'Rotate',
  'PostRotateRestart',
  'Reencrypt',
  'PostReencryptRestart',
  'Done',
  'Failed',
] as const;
export type EncryptionKeyRotationPhase = (typeof ENCRYPTION_KEY_ROTATION_PHASES)[number];

@Description('K3sControlPlaneEncryptionKeyRotationStatus is where the last encryption key rotation stands.')
export class K3sControlPlaneEncryptionKeyRotationStatusSchema {
  @Description('generation of spec.rotateEncryptionKeys this status is about.')
  @IsInt64()
  generation!: number;

  @Description(
    'phase: Prepare, PostPrepareRestart, Rotate, PostRotateRestart, Reencrypt, PostReencryptRestart, Done or Failed.',
  )
  @IsIn(ENCRYPTION_KEY_ROTATION_PHASES)
  phase!: EncryptionKeyRotationPhase;

  @Description('leader is the server machine that runs the secrets-encrypt commands.')
  @IsOptional()
  @IsString()
  @MaxLength(253)
  leader?: string;

  @Description('restarted lists the servers restarted in the current restart phase.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  restarted?: string[];

  @Description(
    'stage is the K3s rotation stage the leader last reported (start, prepare, rotate, reencrypt_finished...).',
  )
  @IsOptional()
  @IsString()
  @MaxLength(64)
  stage?: string;

  @Description(
    'checks counts the status checks of the leader while K3s re-encrypts in the background (reencrypt_request, reencrypt_active), until reencrypt_finished.',
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 0', 'checks must not be negative')
  checks?: number;

  @Description('startTime is when the rotation started (RFC 3339).')
  @IsRFC3339()
  startTime!: string;

  @Description('completionTime is when it was Done or Failed (RFC 3339).')
  @IsOptional()
  @IsRFC3339()
  completionTime?: string;

  @Description('message says what failed and how to recover.')
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  message?: string;
}
export type K3sControlPlaneEncryptionKeyRotationStatus = K3sControlPlaneEncryptionKeyRotationStatusSchema;

export const ETCD_RESTORE_PHASES = ['Started', 'Restoring', 'Finished', 'Failed'] as const;
export type EtcdRestorePhase = (typeof ETCD_RESTORE_PHASES)[number];

@Description('K3sControlPlaneEtcdRestoreStatus is where the last asked-for restore stands.')
export class K3sControlPlaneEtcdRestoreStatusSchema {
  @Description('name of the EtcdSnapshot being (or last) restored.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  name!: string;

  @Description('generation of spec.etcdSnapshotRestore this status is about.')
  @IsInt64()
  generation!: number;

  @Description(
    'phase: Started, Restoring (the cluster is paused; one server resets its etcd from the snapshot), Finished, Failed.',
  )
  @IsIn(ETCD_RESTORE_PHASES)
  phase!: EtcdRestorePhase;

  @Description('machineName is the server machine that restored the snapshot.')
  @IsOptional()
  @IsString()
  @MaxLength(253)
  machineName?: string;

  @Description('message says what failed and how to recover (never a credential).')
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  message?: string;
}
export type K3sControlPlaneEtcdRestoreStatus = K3sControlPlaneEtcdRestoreStatusSchema;

export const WORKLOAD_CHECK_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;
export type WorkloadCheckKind = (typeof WORKLOAD_CHECK_KINDS)[number];

@Description(
  'UpgradeWorkloadCheckSpec names a workload of the cluster that must be available after an upgrade.',
)
export class UpgradeWorkloadCheckSpecSchema {
  @Description('kind: Deployment, StatefulSet or DaemonSet.')
  @IsIn(WORKLOAD_CHECK_KINDS)
  kind!: WorkloadCheckKind;

  @Description('namespace of the workload in the workload cluster.')
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'namespace must be a DNS label' })
  namespace!: string;

  @Description('name of the workload.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  name!: string;
}
export type UpgradeWorkloadCheckSpec = UpgradeWorkloadCheckSpecSchema;

@Description(
  'K3sControlPlaneUpgradePolicySpec guards version upgrades: a snapshot first, health gates after, and an automatic way back (status.upgrade says where an upgrade stands).',
)
export class K3sControlPlaneUpgradePolicySpecSchema {
  @Description('snapshotBefore takes an EtcdSnapshot before the machines change; the upgrade waits for it.')
  @IsOptional()
  @IsBoolean()
  snapshotBefore?: boolean;

  @Description(
    'rollbackOnFailure: when the upgrade fails its gates or its deadline, the control plane goes back to the version it had and, with snapshotBefore, the etcd snapshot is restored.',
  )
  @IsOptional()
  @IsBoolean()
  rollbackOnFailure?: boolean;

  @Description(
    'healthySeconds the gates must hold after every machine runs the new version before the upgrade counts as done. Defaults to 60.',
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 0 && self <= 86400', 'healthySeconds must be between 0 and 86400')
  healthySeconds?: number;

  @Description(
    'failureToleranceSeconds a gate may fail in a row before the upgrade counts as failed (a restart is not a failure). Defaults to 30.',
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 0 && self <= 3600', 'failureToleranceSeconds must be between 0 and 3600')
  failureToleranceSeconds?: number;

  @Description(
    'timeoutSeconds the machines may take to reach the new version before the upgrade counts as failed. Defaults to 1800.',
  )
  @IsOptional()
  @IsInt32()
  @Cel('self >= 60', 'timeoutSeconds must be at least 60')
  timeoutSeconds?: number;

  @Description(
    'workloadChecks are workloads of the cluster that must be available after the upgrade, besides every Node being Ready and the API answering.',
  )
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(32)
  @Nested(() => UpgradeWorkloadCheckSpecSchema)
  workloadChecks?: UpgradeWorkloadCheckSpecSchema[];
}
export type K3sControlPlaneUpgradePolicySpec = K3sControlPlaneUpgradePolicySpecSchema;

export const UPGRADE_PHASES = [
  'SavingSnapshot',
  'Upgrading',
  'Verifying',
  'Succeeded',
  'RollingBack',
  'RolledBack',
  'Failed',
] as const;
export type UpgradePhase = (typeof UPGRADE_PHASES)[number];

@Description('K3sControlPlaneUpgradeStatus is where the last guarded upgrade stands (spec.upgradePolicy).')
export class K3sControlPlaneUpgradeStatusSchema {
  @Description(
    'fromVersion is the version the control plane ran before the upgrade (what a rollback returns to).',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  fromVersion!: string;

  @Description('toVersion is the version the upgrade goes to.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  toVersion!: string;

  @Description(
    'phase: SavingSnapshot (the machines wait), Upgrading, Verifying (the gates must hold), Succeeded, RollingBack, RolledBack, Failed.',
  )
  @IsIn(UPGRADE_PHASES)
  phase!: UpgradePhase;

  @Description('snapshotName is the EtcdSnapshot taken before the upgrade.')
  @IsOptional()
  @IsString()
  @MaxLength(253)
  snapshotName?: string;

  @Description('startedAt: when the upgrade was seen (RFC 3339).')
  @IsRFC3339()
  startedAt!: string;

  @Description('phaseSince: when the current phase began (RFC 3339).')
  @IsRFC3339()
  phaseSince!: string;

  @Description(
    'failingSince: since when a gate has failed without a pause (RFC 3339); unset while they pass.',
  )
  @IsOptional()
  @IsRFC3339()
  failingSince?: string;

  @Description('message says what happened: the gate that failed, what was rolled back.')
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  message?: string;
}
export type K3sControlPlaneUpgradeStatus = K3sControlPlaneUpgradeStatusSchema;

@Description('K3sControlPlaneSpec defines the desired state of K3sControlPlane.')
export class K3sControlPlaneSpecSchema {
  @DesiredReplicasField(
    'replicas is the number of desired control plane machines. Defaults to 1; an odd number keeps etcd quorum.',
    1,
  )
  // Upstream's KubeadmControlPlane webhook refuses an even count with stacked etcd; K3s servers always run it.
  @Cel(
    'self % 2 == 1',
    'replicas must be odd: K3s servers run embedded etcd, and an even number of members tolerates no more failures than one fewer',
  )
  replicas?: number;

  @Description(
    'version is the desired Kubernetes version of the control plane, e.g. v1.31.4 or v1.31.4+k3s1.',
  )
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  @Matches(PATTERNS.kubernetesVersion, {
    message: 'version must be a release such as v1.31.4 or v1.31.4+k3s1',
  })
  version!: string;

  @Description('machineTemplate describes the control plane Machines.')
  @Nested(() => K3sControlPlaneMachineTemplateSchema)
  machineTemplate!: K3sControlPlaneMachineTemplateSchema;

  @Description(
    'k3sConfigSpec is the K3s configuration of the control plane machines: the first initializes the cluster, the others join.',
  )
  @IsOptional()
  @Nested(() => K3sConfigSpecSchema)
  k3sConfigSpec?: K3sConfigSpecSchema;

  @Description('rollout configures when (after) and how (strategy) control plane machines are replaced.')
  @IsOptional()
  @Nested(() => K3sControlPlaneRolloutSpecSchema)
  @Default({})
  rollout?: K3sControlPlaneRolloutSpecSchema;

  @Description('remediation controls how unhealthy control plane machines are remediated.')
  @IsOptional()
  @Nested(() => K3sControlPlaneRemediationSpecSchema)
  remediation?: K3sControlPlaneRemediationSpecSchema;

  @Description(
    'etcd configures snapshots of the embedded etcd (schedule, retention, S3). Changing it replaces no machine: snapshots are taken through machine plans.',
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneEtcdSpecSchema)
  etcd?: K3sControlPlaneEtcdSpecSchema;

  @Description(
    'upgradePolicy guards changes of spec.version: snapshotBefore, health gates after (Nodes Ready, the API answering, workloadChecks) held for healthySeconds, and rollbackOnFailure.',
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneUpgradePolicySpecSchema)
  upgradePolicy?: K3sControlPlaneUpgradePolicySpecSchema;

  @Description(
    'etcdSnapshotRestore restores the etcd from an EtcdSnapshot: the Cluster is paused, one server resets its etcd from the snapshot, and the cluster is resumed. status.etcdSnapshotRestore says where it stands.',
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneEtcdRestoreSpecSchema)
  etcdSnapshotRestore?: K3sControlPlaneEtcdRestoreSpecSchema;

  @Description(
    "rotateCertificates rotates the servers' certificates in place, one server at a time (a new generation starts one); status.certificateRotation says where it stands.",
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneRotateCertificatesSpecSchema)
  rotateCertificates?: K3sControlPlaneRotateCertificatesSpecSchema;

  @Description(
    "rotateEncryptionKeys rotates the secrets-encryption key (k3sConfigSpec.serverConfig.secretsEncryption) in Rancher's phases: prepare, rotate, re-encrypt, each followed by a restart of the servers. A new generation starts one; status.rotateEncryptionKeys says where it stands.",
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneRotateEncryptionKeysSpecSchema)
  rotateEncryptionKeys?: K3sControlPlaneRotateEncryptionKeysSpecSchema;
}
export type K3sControlPlaneSpec = K3sControlPlaneSpecSchema;

@Description(
  'K3sControlPlaneInitializationStatus provides observations of the control plane initialization (Cluster API contract fields).',
)
@MinProperties(1)
export class K3sControlPlaneInitializationStatusSchema {
  @Description(
    'controlPlaneInitialized is true once the workload API server accepts requests. Never reset once set.',
  )
  @IsOptional()
  @IsBoolean()
  controlPlaneInitialized?: boolean;
}
export type K3sControlPlaneInitializationStatus = K3sControlPlaneInitializationStatusSchema;

@Description('LastRemediationStatus records the last remediation performed.')
export class LastRemediationStatusSchema {
  @Description('machine is the name of the latest machine being remediated.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  machine!: string;

  @Description('time is when the last remediation happened (RFC 3339).')
  @IsRFC3339()
  time!: string;

  @Description('retryCount counts remediations of machines created as replacements of unhealthy ones.')
  @IsInt32()
  @Cel('self >= 0', 'retryCount must not be negative')
  retryCount!: number;
}
export type LastRemediationStatus = LastRemediationStatusSchema;

@Description(
  'K3sControlPlaneStatus defines the observed state of K3sControlPlane (the v1beta2 control plane contract).',
)
export class K3sControlPlaneStatusSchema extends ScalableStatusSchema {
  @ConditionsField(
    'Available, Initialized, CertificatesAvailable, MachinesReady, MachinesUpToDate, RollingOut, ScalingUp, ScalingDown, Remediating, Deleting, Paused',
  )
  conditions?: Condition[];

  @Description(
    'initialization provides observations of the control plane initialization (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => K3sControlPlaneInitializationStatusSchema)
  initialization?: K3sControlPlaneInitializationStatusSchema;

  @Description(
    'version is the minimum Kubernetes version of the control plane machines (deprecated by the contract in favour of versions).',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  version?: string;

  @Description('lastRemediation records the last remediation performed.')
  @IsOptional()
  @Nested(() => LastRemediationStatusSchema)
  lastRemediation?: LastRemediationStatusSchema;

  @Description('upgrade is where the last version change under spec.upgradePolicy stands.')
  @IsOptional()
  @Nested(() => K3sControlPlaneUpgradeStatusSchema)
  upgrade?: K3sControlPlaneUpgradeStatusSchema;

  @Description('etcdSnapshotRestore is where the last restore asked for in spec.etcdSnapshotRestore stands.')
  @IsOptional()
  @Nested(() => K3sControlPlaneEtcdRestoreStatusSchema)
  etcdSnapshotRestore?: K3sControlPlaneEtcdRestoreStatusSchema;

  @Description('certificateRotation is where the last certificate rotation stands.')
  @IsOptional()
  @Nested(() => K3sControlPlaneCertificateRotationStatusSchema)
  certificateRotation?: K3sControlPlaneCertificateRotationStatusSchema;

  @Description('rotateEncryptionKeys is where the last encryption key rotation stands.')
  @IsOptional()
  @Nested(() => K3sControlPlaneEncryptionKeyRotationStatusSchema)
  rotateEncryptionKeys?: K3sControlPlaneEncryptionKeyRotationStatusSchema;
}
export type K3sControlPlaneStatus = K3sControlPlaneStatusSchema;

@Description('K3sControlPlane is a K3s control plane: its machines, certificates and kubeconfig.')
@CustomResource({
  resource: RESOURCES.K3sControlPlane,
  shortNames: ['kcp', 'k3scp'],
  labels: providerCrdLabels(K3S_CONTROL_PLANE_PROVIDER_NAME),
  scale: true,
  printerColumns: [
    CLUSTER_LABEL_COLUMN,
    conditionColumn('Available', 'Available', 'Control plane passes all availability checks'),
    ...REPLICA_COLUMNS,
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    {
      name: 'Initialized',
      type: 'boolean',
      jsonPath: '.status.initialization.controlPlaneInitialized',
      description: 'Whether the control plane can accept requests',
    },
    AGE_COLUMN,
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.version',
      description: 'Kubernetes version associated with this control plane',
    },
  ],
})
export class K3sControlPlaneSchema extends ResourceSchema {
  @Description('spec is the desired state of K3sControlPlane.')
  @Nested(() => K3sControlPlaneSpecSchema)
  spec!: K3sControlPlaneSpecSchema;

  @Description('status is the observed state of K3sControlPlane.')
  @IsOptional()
  @Nested(() => K3sControlPlaneStatusSchema)
  status?: K3sControlPlaneStatusSchema;
}
export type K3sControlPlane = K3sControlPlaneSchema;
