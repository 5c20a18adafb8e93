import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsRFC3339,
  Min,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import { IsInt32 } from '../schema/validators.js';
import { Cel, CustomResource, Description, ListType, MinProperties, Nested } from '../schema/decorators.js';
import { PATTERNS } from '../schema/patterns.js';

import { ResourceSchema, type Condition } from './common.js';
import { ConditionsField, ObservedGenerationField, StringListField } from './fields.js';
import { PrivateRegistriesConfigSchema } from './k3s-private-registries.js';
import { AGE_COLUMN, CLUSTER_LABEL_COLUMN, conditionColumn, providerCrdLabels } from './printer-columns.js';

/** Value of the `cluster.x-k8s.io/provider` label on the K3s bootstrap provider's objects. */
export const K3S_BOOTSTRAP_PROVIDER_NAME = 'bootstrap-k3s';

/**
 * Set to `"true"` by the control plane provider on the K3sConfig of the machine it creates first: while the
 * control plane is not initialized, that machine alone renders as the init server (`cluster-init: true`);
 * every other control plane machine joins once the control plane is initialized.
 */
export const K3S_INIT_SERVER_ANNOTATION = 'bootstrap.capstan.dev/init-server';

/** Bounds on K3s config lists and strings: keep objects small and CEL cost estimates bounded. */
const LIMITS = { items: 100, arg: 1024, command: 10240, files: 64, content: 65536 } as const;

/** `key=value` with a Kubernetes label key and value (k3s `node-label`). */
const NODE_LABEL =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?=(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** `key[=value]:Effect` (k3s `node-taint`). */
const NODE_TAINT =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?(=(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?)?:(NoSchedule|PreferNoSchedule|NoExecute)$/;

@Description('K3sServerConfig is the configuration only K3s servers (control plane machines) use.')
export class K3sServerConfigSchema {
  @StringListField(
    'tlsSANs are extra hostnames or IPs added to the API server certificate (k3s --tls-san); the cluster endpoint is always included.',
    { maxItems: LIMITS.items, itemMinLength: 1, itemMaxLength: 253 },
  )
  tlsSANs?: string[];

  @StringListField(
    'disableComponents are packaged components K3s does not deploy (k3s --disable), e.g. traefik, servicelb, metrics-server.',
    { maxItems: LIMITS.items, itemMinLength: 1, itemMaxLength: 253 },
  )
  disableComponents?: string[];

  @Description(
    'clusterCIDR is the IP range for pod IPs (k3s --cluster-cidr). Defaults to the Cluster pods CIDR, else 10.42.0.0/16.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  // K3s takes one CIDR per IP family, comma-separated.
  @Cel("self.split(',').all(block, isCIDR(block))", 'clusterCIDR must be CIDR blocks such as 10.42.0.0/16, comma-separated for dual-stack')
  clusterCIDR?: string;

  @Description(
    'serviceCIDR is the IP range for service IPs (k3s --service-cidr). Defaults to the Cluster services CIDR, else 10.43.0.0/16.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  // K3s takes one CIDR per IP family, comma-separated.
  @Cel("self.split(',').all(block, isCIDR(block))", 'serviceCIDR must be CIDR blocks such as 10.43.0.0/16, comma-separated for dual-stack')
  serviceCIDR?: string;

  @Description('clusterDNS is the cluster IP of the DNS service (k3s --cluster-dns).')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  clusterDNS?: string;

  @Description('clusterDomain is the cluster domain (k3s --cluster-domain). Defaults to cluster.local.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  clusterDomain?: string;

  @StringListField(
    'kubeAPIServerArgs are extra flags for the API server, as key=value (k3s --kube-apiserver-arg).',
    { maxItems: LIMITS.items, itemMaxLength: LIMITS.arg },
  )
  kubeAPIServerArgs?: string[];

  @StringListField(
    'kubeControllerManagerArgs are extra flags for the controller manager, as key=value (k3s --kube-controller-manager-arg).',
    { maxItems: LIMITS.items, itemMaxLength: LIMITS.arg },
  )
  kubeControllerManagerArgs?: string[];

  @StringListField(
    'kubeSchedulerArgs are extra flags for the scheduler, as key=value (k3s --kube-scheduler-arg).',
    { maxItems: LIMITS.items, itemMaxLength: LIMITS.arg },
  )
  kubeSchedulerArgs?: string[];

  @Description(
    'secretsEncryption encrypts Secrets at rest with AES-CBC (k3s --secrets-encryption). K3s reads it when the cluster starts: set it when creating the cluster. Keys are rotated with spec.rotateEncryptionKeys of the K3sControlPlane.',
  )
  @IsOptional()
  @IsBoolean()
  secretsEncryption?: boolean;
}
export type K3sServerConfig = K3sServerConfigSchema;

@Description('K3sAgentConfig is the per-node configuration every K3s node uses, servers and agents alike.')
export class K3sAgentConfigSchema {
  @StringListField('nodeLabels are labels the node registers with, as key=value (k3s --node-label).', {
    maxItems: LIMITS.items,
    itemMaxLength: 317,
    itemPattern: {
      pattern: NODE_LABEL,
      message: 'each nodeLabels entry must be key=value with a valid label key and value',
    },
  })
  nodeLabels?: string[];

  @StringListField('nodeTaints are taints the node registers with, as key=value:Effect (k3s --node-taint).', {
    maxItems: LIMITS.items,
    itemMaxLength: 400,
    itemPattern: {
      pattern: NODE_TAINT,
      message: 'each nodeTaints entry must be key[=value]:NoSchedule|PreferNoSchedule|NoExecute',
    },
  })
  nodeTaints?: string[];

  @StringListField(
    'kubeletArgs are extra flags for the kubelet, as key=value (k3s --kubelet-arg). The provider ID is always added.',
    { maxItems: LIMITS.items, itemMaxLength: LIMITS.arg },
  )
  kubeletArgs?: string[];

  @StringListField('kubeProxyArgs are extra flags for kube-proxy, as key=value (k3s --kube-proxy-arg).', {
    maxItems: LIMITS.items,
    itemMaxLength: LIMITS.arg,
  })
  kubeProxyArgs?: string[];

  @Description('nodeName is the name the node registers with (k3s --node-name); the host name when unset.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  nodeName?: string;
}
export type K3sAgentConfig = K3sAgentConfigSchema;

@Description('SecretFileSource names a key of a Secret in the same namespace.')
export class SecretFileSourceSchema {
  @Description('name of the Secret in the namespace of the K3sConfig.')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  name!: string;

  @Description('key of the Secret data that holds the file content.')
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  key!: string;
}
export type SecretFileSource = SecretFileSourceSchema;

@Description('FileSource is where a file content comes from.')
export class FileSourceSchema {
  @Description('secret is a key of a Secret holding the content.')
  @Nested(() => SecretFileSourceSchema)
  secret!: SecretFileSourceSchema;
}
export type FileSource = FileSourceSchema;

export const FILE_ENCODINGS = ['base64', 'gzip', 'gzip+base64'] as const;

@Description('File is a file written on the host before K3s starts.')
@Cel('!(has(self.content) && has(self.contentFrom))', 'a file takes content or contentFrom, not both')
export class K3sFileSchema {
  @Description('path is the absolute path of the file on the host.')
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  @Matches(/^\//, { message: 'path must be absolute' })
  path!: string;

  @Description('owner of the file as user:group, e.g. root:root.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  owner?: string;

  @Description('permissions of the file in octal, e.g. 0644.')
  @IsOptional()
  @IsString()
  @Matches(/^0?[0-7]{3}$/, { message: 'permissions must be octal such as 0644' })
  permissions?: string;

  @Description('encoding of content: base64, gzip or gzip+base64; plain text when omitted.')
  @IsOptional()
  @IsIn(FILE_ENCODINGS)
  encoding?: (typeof FILE_ENCODINGS)[number];

  @Description('content of the file, inline.')
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.content)
  content?: string;

  @Description(
    'contentFrom reads the content from a Secret; the secret value never appears in the K3sConfig.',
  )
  @IsOptional()
  @Nested(() => FileSourceSchema)
  contentFrom?: FileSourceSchema;
}
export type K3sFile = K3sFileSchema;

@Description('K3sConfigSpec is how a machine installs and starts K3s.')
export class K3sConfigSpecSchema {
  @Description(
    'version of K3s to install, e.g. v1.31.4+k3s1. Defaults to a K3s release matching the Machine version.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  version?: string;

  @Description('serverConfig is the configuration used only by K3s servers (control plane machines).')
  @IsOptional()
  @Nested(() => K3sServerConfigSchema)
  serverConfig?: K3sServerConfigSchema;

  @Description('agentConfig is the per-node configuration used by every node, servers included.')
  @IsOptional()
  @Nested(() => K3sAgentConfigSchema)
  agentConfig?: K3sAgentConfigSchema;

  @Description('files are written on the host before K3s is installed.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(LIMITS.files)
  @Nested(() => K3sFileSchema)
  @ListType('atomic')
  files?: K3sFileSchema[];

  @Description(
    'privateRegistriesConfig is written to /etc/rancher/k3s/registries.yaml (mode 0600): registry mirrors, and credentials and TLS per registry from Secrets in this namespace. A change restarts K3s; removing it removes the file.',
  )
  @IsOptional()
  @Nested(() => PrivateRegistriesConfigSchema)
  privateRegistriesConfig?: PrivateRegistriesConfigSchema;

  @StringListField('preK3sCommands run before K3s is installed.', {
    maxItems: LIMITS.items,
    itemMaxLength: LIMITS.command,
  })
  preK3sCommands?: string[];

  @StringListField('postK3sCommands run after K3s started.', {
    maxItems: LIMITS.items,
    itemMaxLength: LIMITS.command,
  })
  postK3sCommands?: string[];

  @Description(
    'airGapped installs K3s from the binary and install script already on the host instead of downloading them.',
  )
  @IsOptional()
  @IsBoolean()
  airGapped?: boolean;

  @Description(
    'airGappedInstallScriptPath is where an air-gapped host keeps the K3s install.sh; /opt/k3s/install.sh when unset.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  @Matches(/^\//, { message: 'airGappedInstallScriptPath must be absolute' })
  airGappedInstallScriptPath?: string;
}
export type K3sConfigSpec = K3sConfigSpecSchema;

@Description(
  'K3sConfigInitializationStatus provides observations of the K3sConfig initialization (Cluster API contract fields).',
)
@MinProperties(1)
export class K3sConfigInitializationStatusSchema {
  @Description('dataSecretCreated is true when the bootstrap data secret is created. Never reset once set.')
  @IsOptional()
  @IsBoolean()
  dataSecretCreated?: boolean;
}
export type K3sConfigInitializationStatus = K3sConfigInitializationStatusSchema;

export const MACHINE_PLAN_STATES = ['pending', 'in-progress', 'succeeded', 'failed'] as const;

@Description(
  "K3sConfigPlanStatus is what the machine's node agent reported on its plan Secret (docs/node-agent.md); never the plan's content.",
)
export class K3sConfigPlanStatusSchema {
  @Description('secretName is the plan Secret of the machine (<machine>-machine-plan).')
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  @Matches(PATTERNS.objectName)
  secretName!: string;

  @Description('checksum is the sha256 of the plan currently in the Secret.')
  @IsOptional()
  @IsString()
  @Matches(/^[a-f0-9]{64}$/)
  checksum?: string;

  @Description('appliedChecksum is the sha256 of the plan the agent last applied successfully.')
  @IsOptional()
  @IsString()
  @Matches(/^[a-f0-9]{64}$/)
  appliedChecksum?: string;

  @Description('state is the plan state: pending, in-progress, succeeded or failed.')
  @IsOptional()
  @IsString()
  @IsIn(MACHINE_PLAN_STATES)
  state?: (typeof MACHINE_PLAN_STATES)[number];

  @Description('revision counts the plans the agent has started.')
  @IsOptional()
  @IsInt32()
  @Min(0)
  revision?: number;

  @Description('failureCount counts the failed attempts of the current plan.')
  @IsOptional()
  @IsInt32()
  @Min(0)
  failureCount?: number;

  @Description('probesHealthy is true when every probe of the applied plan is healthy (unset without probes).')
  @IsOptional()
  @IsBoolean()
  probesHealthy?: boolean;
}
export type K3sConfigPlanStatus = K3sConfigPlanStatusSchema;

export const IN_PLACE_UPDATE_STATES = ['Updating', 'Succeeded', 'Failed'] as const;

@Description(
  'K3sConfigInPlaceUpdateStatus reports an in-place update of the machine (contract field read by the core): the target the Machine asked for, and how the machine plan that applies it went.',
)
export class K3sConfigInPlaceUpdateStatusSchema {
  @Description('target is the in-place.capstan.dev/update-in-progress value of the Machine this update is for.')
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  target!: string;

  @Description('planChecksum is the sha256 of the machine plan written for this update.')
  @IsOptional()
  @IsString()
  @Matches(/^[a-f0-9]{64}$/)
  planChecksum?: string;

  @Description(
    "planAppliedAt is when the bootstrap provider first saw this update's plan applied, on its own clock (RFC 3339): the probes' deadline counts from it, never from a time the machine's agent wrote.",
  )
  @IsOptional()
  @IsRFC3339()
  planAppliedAt?: string;

  @Description('state is Updating, Succeeded (plan applied and probes healthy) or Failed.')
  @IsString()
  @IsIn(IN_PLACE_UPDATE_STATES)
  state!: (typeof IN_PLACE_UPDATE_STATES)[number];

  @Description('message says what failed: the failing step and the tail of its output, secrets masked.')
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  message?: string;
}
export type K3sConfigInPlaceUpdateStatus = K3sConfigInPlaceUpdateStatusSchema;

@Description('K3sConfigStatus defines the observed state of K3sConfig.')
export class K3sConfigStatusSchema {
  @ConditionsField('Ready, DataSecretAvailable, PlanApplied, Paused')
  conditions?: Condition[];

  @Description("plan is what the machine's node agent reported on its plan Secret.")
  @IsOptional()
  @Nested(() => K3sConfigPlanStatusSchema)
  plan?: K3sConfigPlanStatusSchema;

  @Description('inPlaceUpdate reports the in-place update the Machine asked for, once one was asked for.')
  @IsOptional()
  @Nested(() => K3sConfigInPlaceUpdateStatusSchema)
  inPlaceUpdate?: K3sConfigInPlaceUpdateStatusSchema;

  @Description(
    'initialization provides observations of the K3sConfig initialization (Cluster API contract fields).',
  )
  @IsOptional()
  @Nested(() => K3sConfigInitializationStatusSchema)
  initialization?: K3sConfigInitializationStatusSchema;

  @Description('dataSecretName is the name of the Secret holding the bootstrap data (keys value and format).')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(253)
  dataSecretName?: string;

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type K3sConfigStatus = K3sConfigStatusSchema;

@Description(
  'K3sConfig is the bootstrap configuration of one machine: it renders the cloud-config that installs and starts K3s.',
)
@CustomResource({
  resource: RESOURCES.K3sConfig,
  shortNames: ['k3sc'],
  labels: providerCrdLabels(K3S_BOOTSTRAP_PROVIDER_NAME),
  printerColumns: [
    CLUSTER_LABEL_COLUMN,
    {
      name: 'Data Secret',
      type: 'string',
      jsonPath: '.status.dataSecretName',
      description: 'Secret holding the bootstrap data',
    },
    {
      name: 'Created',
      type: 'boolean',
      jsonPath: '.status.initialization.dataSecretCreated',
      description: 'Bootstrap data secret is created',
    },
    conditionColumn('Ready', 'Ready', 'Bootstrap data is ready'),
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    AGE_COLUMN,
  ],
})
export class K3sConfigSchema extends ResourceSchema {
  @Description('spec is the desired state of K3sConfig.')
  @IsOptional()
  @Nested(() => K3sConfigSpecSchema)
  spec?: K3sConfigSpecSchema;

  @Description('status is the observed state of K3sConfig.')
  @IsOptional()
  @Nested(() => K3sConfigStatusSchema)
  status?: K3sConfigStatusSchema;
}
export type K3sConfig = K3sConfigSchema;
