import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, MinLength } from '../schema/class-validator.js';
import { Description, ListType, Nested } from '../schema/decorators.js';
import { IsInt32 } from '../schema/validators.js';
import { MAX_ITEMS, StatusVersionSchema } from './common.js';
import { ObservedGenerationField } from './fields.js';

/** The machine counters of v1beta2: each counts machines whose condition of that name is true. */
export class MachineCountersSchema {
  @Description('replicas is the total number of machines, including ones still being provisioned or deleted.')
  @IsOptional()
  @IsInt32()
  replicas?: number;

  @Description('readyReplicas is the number of machines whose Ready condition is true.')
  @IsOptional()
  @IsInt32()
  readyReplicas?: number;

  @Description('availableReplicas is the number of machines whose Available condition is true.')
  @IsOptional()
  @IsInt32()
  availableReplicas?: number;

  @Description('upToDateReplicas is the number of machines whose UpToDate condition is true.')
  @IsOptional()
  @IsInt32()
  upToDateReplicas?: number;

  @Description('versions lists the Kubernetes versions of the machines and how many machines run each.')
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_ITEMS.versions)
  @Nested(() => StatusVersionSchema)
  @ListType('atomic')
  versions?: StatusVersionSchema[];
}
export type MachineCounters = MachineCountersSchema;

/** Status fields of a kind with a scale subresource (MachineSet, MachineDeployment, control plane). */
export class ScalableStatusSchema extends MachineCountersSchema {
  @Description(
    'selector is the label selector of the machines in string form (query-param syntax), for the scale subresource.',
  )
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  selector?: string;

  @ObservedGenerationField()
  observedGeneration?: number;
}
export type ScalableStatus = ScalableStatusSchema;
