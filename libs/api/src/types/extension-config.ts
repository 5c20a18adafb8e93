import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  MinLength,
} from '../schema/class-validator.js';
import { RESOURCES } from '../constants/resources.js';
import {
  Cel,
  CustomResource,
  Default,
  Description,
  ListType,
  MinProperties,
  Nested,
} from '../schema/decorators.js';
import { IsInt32, IsStringMap } from '../schema/validators.js';
import { LabelSelectorSchema, ResourceSchema, type Condition } from './common.js';
import { ConditionsField } from './fields.js';
import { AGE_COLUMN, CORE_CRD_LABELS, conditionColumn } from './printer-columns.js';

// ExtensionConfig (cluster-scoped): where a Runtime SDK extension server is and what it serves.

@Description('ServiceReference locates an extension server running as a Service.')
export class ServiceReferenceSchema {
  @Description('namespace of the Service.')
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  namespace!: string;

  @Description('name of the Service.')
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  name!: string;

  @Description('path prefixed to the URL of every request sent to the Service.')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  path?: string;

  @Description('port of the Service. Defaults to 443.')
  @IsOptional()
  @IsInt32()
  @Default(443)
  port?: number;
}
export type ServiceReference = ServiceReferenceSchema;

@Description('ClientConfig says how to reach the extension server: a URL or a Service.')
@MinProperties(1)
// Upstream's webhook refuses it too: the server is reached one way.
@Cel('has(self.url) != has(self.service)', 'clientConfig needs exactly one of url or service')
export class ClientConfigSchema {
  @Description('url of the extension server, scheme://host:port/path (https unless testing).')
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  url?: string;

  @Description('service is the Service the extension server runs behind.')
  @IsOptional()
  @Nested(() => ServiceReferenceSchema)
  service?: ServiceReferenceSchema;

  @Description("caBundle is the PEM-encoded CA bundle (base64) that verifies the server's certificate.")
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(51200)
  caBundle?: string;
}
export type ClientConfig = ClientConfigSchema;

@Description('ExtensionConfigSpec defines the desired state of ExtensionConfig.')
export class ExtensionConfigSpecSchema {
  @Description('clientConfig says how to reach the extension server.')
  @Nested(() => ClientConfigSchema)
  clientConfig!: ClientConfigSchema;

  @Description(
    'namespaceSelector matches the namespaces whose Clusters the extension serves; empty matches all.',
  )
  @IsOptional()
  @Nested(() => LabelSelectorSchema)
  @Default({})
  namespaceSelector?: LabelSelectorSchema;

  @Description('settings are key-value pairs passed to every call of the extension.')
  @IsOptional()
  @IsStringMap()
  settings?: Record<string, string>;
}
export type ExtensionConfigSpec = ExtensionConfigSpecSchema;

@Description('GroupVersionHook names a Runtime hook: its API version and name.')
export class GroupVersionHookSchema {
  @Description('apiVersion of the hook.')
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  apiVersion!: string;

  @Description("hook is the hook's name, e.g. BeforeClusterCreate.")
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  hook!: string;
}
export type GroupVersionHook = GroupVersionHookSchema;

export const EXTENSION_FAILURE_POLICIES = ['Ignore', 'Fail'] as const;
export type ExtensionFailurePolicy = (typeof EXTENSION_FAILURE_POLICIES)[number];

@Description('ExtensionHandler is one handler the extension server reported at discovery.')
export class ExtensionHandlerSchema {
  @Description('name of the handler.')
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  name!: string;

  @Description('requestHook is the hook the handler answers.')
  @Nested(() => GroupVersionHookSchema)
  requestHook!: GroupVersionHookSchema;

  @Description('timeoutSeconds is how long a call to the handler may take.')
  @IsOptional()
  @IsInt32()
  @Min(1)
  timeoutSeconds?: number;

  @Description('failurePolicy when a call fails: Ignore or Fail.')
  @IsOptional()
  @IsIn(EXTENSION_FAILURE_POLICIES)
  failurePolicy?: ExtensionFailurePolicy;
}
export type ExtensionHandler = ExtensionHandlerSchema;

@Description('ExtensionConfigStatus defines the observed state of ExtensionConfig.')
@MinProperties(1)
export class ExtensionConfigStatusSchema {
  @ConditionsField('Discovered, Paused')
  conditions?: Condition[];

  @Description('handlers are the handlers the extension server reported at discovery.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(512)
  @Nested(() => ExtensionHandlerSchema)
  @ListType('map', ['name'])
  handlers?: ExtensionHandlerSchema[];
}
export type ExtensionConfigStatus = ExtensionConfigStatusSchema;

@Description('ExtensionConfig is the Schema for the extensionconfigs API: a Runtime SDK extension server.')
@CustomResource({
  resource: RESOURCES.ExtensionConfig,
  shortNames: ['ext'],
  labels: CORE_CRD_LABELS,
  printerColumns: [
    conditionColumn('Paused', 'Paused', 'Reconciliation paused', 10),
    conditionColumn('Discovered', 'Discovered', 'ExtensionConfig discovered'),
    AGE_COLUMN,
  ],
})
export class ExtensionConfigSchema extends ResourceSchema {
  @Description('spec is the desired state of ExtensionConfig.')
  @Nested(() => ExtensionConfigSpecSchema)
  spec!: ExtensionConfigSpecSchema;

  @Description('status is the observed state of ExtensionConfig.')
  @IsOptional()
  @Nested(() => ExtensionConfigStatusSchema)
  status?: ExtensionConfigStatusSchema;
}
export type ExtensionConfig = ExtensionConfigSchema;
