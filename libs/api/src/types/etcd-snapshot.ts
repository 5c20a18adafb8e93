import {
  IsIn,
  IsOptional,
  IsRFC3339,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { Cel, CustomResource, Description, Nested } from '../schema/decorators.js';
import { IsInt64 } from '../schema/validators.js';
import { ResourceSchema, type Condition } from './common.js';
import { ClusterNameField, ConditionsField, ObservedGenerationField } from './fields.js';
import { K3sConfigSpecSchema } from './k3s-config.js';
import { K3S_CONTROL_PLANE_PROVIDER_NAME } from './k3s-control-plane.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, providerCrdLabels } from './printer-columns.js';

/** Where an etcd snapshot is on its way: Rancher's ETCDSnapshot states, plus the request's own progress. */
export const ETCD_SNAPSHOT_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Deleting'] as const;
export type EtcdSnapshotPhase = (typeof ETCD_SNAPSHOT_PHASES)[number];

/** How a snapshot came to be: asked for (`capstan snapshot create`, kubectl) or by the control plane's schedule. */
export const ETCD_SNAPSHOT_TRIGGERS = ['OnDemand', 'Scheduled'] as const;
export type EtcdSnapshotTrigger = (typeof ETCD_SNAPSHOT_TRIGGERS)[number];

@Description('EtcdSnapshotSpec names the cluster whose etcd is saved.')
export class EtcdSnapshotSpecSchema {
  @ClusterNameField()
  @Cel('self == oldSelf', 'clusterName is immutable')
  clusterName!: string;

  @Description(
    'trigger says why the snapshot is taken: OnDemand (the default: a user asked) or Scheduled (the control plane schedule; those beyond spec.etcd.snapshotRetention are pruned, oldest first).',
  )
  @IsOptional()
  @IsIn(ETCD_SNAPSHOT_TRIGGERS)
  @Cel('self == oldSelf', 'trigger is immutable')
  trigger?: EtcdSnapshotTrigger;
}
export type EtcdSnapshotSpec = EtcdSnapshotSpecSchema;

@Description('EtcdSnapshotStatus is where the snapshot was taken and where it is kept.')
export class EtcdSnapshotStatusSchema {
  @Description('phase: Pending (waiting for a server), Running (its plan runs), Succeeded, Failed, Deleting.')
  @IsOptional()
  @IsIn(ETCD_SNAPSHOT_PHASES)
  phase?: EtcdSnapshotPhase;

  @Description('machineName is the control plane Machine whose server took the snapshot.')
  @IsOptional()
  @IsString()
  @MaxLength(253)
  machineName?: string;

  @Description('fileName is the snapshot file, as K3s names it: <name>-<node>-<unix time>.')
  @IsOptional()
  @IsString()
  @MaxLength(253)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
  fileName?: string;

  @Description(
    'location is where the file is kept: s3://<bucket>/<key> (S3-compatible storage, spec.etcd.s3 of the control plane) or file://<path> on the server machine (lost with that machine).',
  )
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  location?: string;

  @Description('sizeBytes is the size of the snapshot file.')
  @IsOptional()
  @IsInt64()
  @Cel('self >= 0', 'sizeBytes must not be negative')
  sizeBytes?: number;

  @Description('createdAt is when the snapshot was saved (RFC 3339).')
  @IsOptional()
  @IsRFC3339()
  createdAt?: string;

  @Description('kubernetesVersion is the control plane version when the snapshot was saved.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  kubernetesVersion?: string;

  @Description(
    "k3sConfigSpec is the control plane's spec.k3sConfigSpec when the snapshot was saved: a restore with restoreConfig All puts it back (Rancher's restoreRKEConfig: all).",
  )
  @IsOptional()
  @Nested(() => K3sConfigSpecSchema)
  k3sConfigSpec?: K3sConfigSpecSchema;

  @ConditionsField('Ready (the snapshot is saved and can be restored; False names why not)')
  conditions?: Condition[];

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type EtcdSnapshotStatus = EtcdSnapshotStatusSchema;

@Description(
  "EtcdSnapshot is one snapshot of a K3s cluster's etcd: create it to take one (the control plane provider runs `k3s etcd-snapshot save` on a server through its machine plan), read it to find the file, delete it to delete the file, name it in the control plane's spec.etcdSnapshotRestore to restore it.",
)
@CustomResource({
  resource: RESOURCES.EtcdSnapshot,
  shortNames: ['etcdsnap'],
  labels: providerCrdLabels(K3S_CONTROL_PLANE_PROVIDER_NAME),
  printerColumns: [
    CLUSTER_LABEL_COLUMN,
    { name: 'Trigger', type: 'string', jsonPath: '.spec.trigger', description: 'OnDemand or Scheduled' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Where the snapshot stands' },
    { name: 'Location', type: 'string', jsonPath: '.status.location', description: 'Where the file is kept' },
    { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes', description: 'Bytes' },
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.status.kubernetesVersion',
      description: 'Control plane version at the snapshot',
    },
    AGE_COLUMN,
  ],
})
export class EtcdSnapshotSchema extends ResourceSchema {
  @Description('spec names the cluster whose etcd is saved.')
  @Nested(() => EtcdSnapshotSpecSchema)
  spec!: EtcdSnapshotSpecSchema;

  @Description('status is where the snapshot was taken and where it is kept.')
  @IsOptional()
  @Nested(() => EtcdSnapshotStatusSchema)
  status?: EtcdSnapshotStatusSchema;
}
export type EtcdSnapshot = EtcdSnapshotSchema;
