import {
  ConditionReason,
  ConditionStatus,
  ConditionType,
  setCondition,
  type Condition,
  type ConditionInput,
} from '@capstan/api';

/**
 * The conditions a status computation builds up: each one set with the object's generation and the same clock,
 * keeping the position and lastTransitionTime of those whose status does not change.
 */
export class ConditionList {
  private list: Condition[];

  constructor(
    initial: readonly Condition[] | undefined,
    private readonly generation: number | undefined,
    private readonly now: Date,
  ) {
    this.list = [...(initial ?? [])];
  }

  set(input: ConditionInput): void {
    this.list = setCondition(this.list, { ...input, observedGeneration: this.generation }, this.now);
  }

  /** `Deleting` (the current deletion step, or NotDeleting) and `Paused` False: a reconcile that runs is not paused. */
  setDeletingAndNotPaused(deleting: { reason: string; message: string } | undefined): void {
    this.set(
      deleting
        ? {
            type: ConditionType.Deleting,
            status: ConditionStatus.True,
            reason: deleting.reason,
            message: deleting.message,
          }
        : {
            type: ConditionType.Deleting,
            status: ConditionStatus.False,
            reason: ConditionReason.NotDeleting,
          },
    );
    this.set({
      type: ConditionType.Paused,
      status: ConditionStatus.False,
      reason: ConditionReason.NotPaused,
    });
  }

  get all(): Condition[] {
    return this.list;
  }
}
