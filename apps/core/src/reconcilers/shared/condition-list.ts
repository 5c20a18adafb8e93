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

  /**
   * `Deleting`: the current deletion step, or NotDeleting. (`Paused` is the reconciler kit's: it sets it on every
   * reconcile before the status is computed.)
   */
  setDeleting(deleting: { reason: string; message: string } | undefined): void {
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
  }

  remove(type: string): void {
    this.list = this.list.filter((c) => c.type !== type);
  }

  get all(): Condition[] {
    return this.list;
  }
}
