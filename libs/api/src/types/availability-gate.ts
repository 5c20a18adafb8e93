import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from '../schema/class-validator.js';
import { Description, ListType, Nested } from '../schema/decorators.js';

// The availability gates of a Cluster and of the Clusters a ClusterClass describes. A module of its own so that
// the Cluster (whose topology uses the ClusterClass's types) and the ClusterClass do not import each other.

@Description(
  'ClusterAvailabilityGate names a Cluster condition to include when evaluating the Cluster Available condition.',
)
export class ClusterAvailabilityGateSchema {
  @Description(
    "conditionType refers to a condition with matching type in the Cluster's condition list; a missing condition counts as Unknown.",
  )
  @IsString()
  @MinLength(1)
  @MaxLength(316)
  conditionType!: string;

  @Description('polarity of the condition: Positive (True is good, the default) or Negative (False is good).')
  @IsOptional()
  @IsIn(['Positive', 'Negative'])
  polarity?: 'Positive' | 'Negative';
}
export type ClusterAvailabilityGate = ClusterAvailabilityGateSchema;

/** `availabilityGates` of a Cluster or of the Clusters a ClusterClass describes, a list map keyed by conditionType. */
export function AvailabilityGatesField(description: string): (target: object, property: string) => void {
  return (target, property) => {
    for (const decorate of [
      IsOptional(),
      IsArray(),
      ArrayMinSize(1),
      ArrayMaxSize(32),
      Nested(() => ClusterAvailabilityGateSchema),
      ListType('map', ['conditionType']),
      Description(description),
    ])
      decorate(target, property);
  };
}
