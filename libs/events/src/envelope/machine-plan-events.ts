import { ArrayMaxSize, IsArray, IsString, Matches, MaxLength } from '@capstan/api';
import { EventData } from './event-data.js';
import { Count, ObjectName, Text } from './fields.js';

// Machine plan events (hand-offs): the bootstrap provider reports what a machine's node agent did with its plan.
// The object is the Machine; the plan itself (files, commands, output) never travels on the bus, only its checksum.

const SHA256_HEX = /^[a-f0-9]{64}$/;

abstract class MachinePlanData extends EventData {
  /** `<machine>-machine-plan`: the Secret's name only. */
  @ObjectName()
  planSecretName!: string;

  /** sha256 of the plan the agent reported on. */
  @Matches(SHA256_HEX)
  checksum!: string;

  /** `plan-revision` of the Secret: how many plans the agent has started. */
  @Count()
  revision!: number;
}

/** The agent applied the plan (`plan-state: succeeded`, `applied-checksum` matches). */
export class MachinePlanAppliedData extends MachinePlanData {}

/** The agent could not apply the plan; carries the step that failed (never its output). */
export class MachinePlanFailedData extends MachinePlanData {
  /** e.g. `instruction install exited 1`, `invalid plan: files[0].path: must not contain ".."`. */
  @Text(1024)
  failure!: string;

  @Count()
  failureCount!: number;
}

/** Every probe of the applied plan is healthy. */
export class MachinePlanProbesHealthyData extends MachinePlanData {
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @MaxLength(63, { each: true })
  probes!: string[];
}

/** The Machine's in-place update is done: its plan for the target applied and every probe is healthy. */
export class MachineUpdatedData extends EventData {
  /** The `in-place.capstan.dev/update-in-progress` target the update was for. */
  @IsString()
  @MaxLength(64)
  target!: string;

  /** sha256 of the plan that applied the update. */
  @Matches(SHA256_HEX)
  planChecksum!: string;
}
