import type { Condition } from '../types/common.js';
import { setCondition, type ConditionInput } from './conditions.js';

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

  remove(type: string): void {
    this.list = this.list.filter((c) => c.type !== type);
  }

  get all(): Condition[] {
    return this.list;
  }
}
