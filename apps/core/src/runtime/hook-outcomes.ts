import { ExtensionCallError } from './runtime-errors.js';
import type { CommonResponse, FailurePolicy } from './runtime-hooks.js';

// What a handler's answer means (upstream internal/runtime/client CallExtension and aggregateSuccessfulResponses):
// which failures a failure policy forgives, whether an answer is a success, and how the answers of every handler of
// a hook add up to one.

/** What the handlers of a hook said together: how long to wait before going on (0: go on) and their messages. */
export interface HookResult {
  retryAfterSeconds: number;
  message: string;
}

/** The most `retryAfterSeconds` a handler may ask for (upstream's int32). */
const MAX_RETRY_AFTER_SECONDS = 2 ** 31 - 1;

/**
 * Whether a failed call counts as success: only under `failurePolicy: Ignore`, and only when the call itself failed
 * (unreachable, TLS, timeout, a bad answer). A handler's explicit Failure, a misconfigured ExtensionConfig and the
 * caller's own abort always fail.
 */
export function failureIgnored(policy: FailurePolicy | undefined, error: unknown): boolean {
  return policy === 'Ignore' && error instanceof ExtensionCallError && error.ignorable;
}

/** The lower of two waits, 0 meaning none (upstream util.LowestNonZeroInt32). */
export function lowestNonZero(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return Math.min(a, b);
}

/** What every handler's success adds up to: the shortest non-zero wait, and the non-empty messages joined. */
export function aggregateResponses(
  responses: readonly { retryAfterSeconds?: number; message?: string }[],
): HookResult {
  let retryAfterSeconds = 0;
  const messages: string[] = [];
  for (const response of responses) {
    retryAfterSeconds = lowestNonZero(retryAfterSeconds, response.retryAfterSeconds ?? 0);
    if (response.message) messages.push(response.message);
  }
  return { retryAfterSeconds, message: messages.join(', ') };
}

/** How an answer failed, when it did: a Failure, a status that is neither, or a wait that is not a count of seconds. */
export type AnswerProblem =
  { kind: 'Failure'; message: string | undefined } | { kind: 'UnknownStatus' } | { kind: 'InvalidRetry' };

/** What is wrong with a decoded answer, or undefined for a success (`blocking`: it must carry retryAfterSeconds). */
export function answerProblem(answer: Record<string, unknown>, blocking: boolean): AnswerProblem | undefined {
  const status = answer['status'];
  if (status === 'Failure') {
    const message = answer['message'];
    return { kind: 'Failure', message: typeof message === 'string' ? message : undefined };
  }
  if (status !== 'Success') return { kind: 'UnknownStatus' };
  if (blocking) {
    const retry = answer['retryAfterSeconds'] ?? 0;
    if (typeof retry !== 'number' || !Number.isInteger(retry) || retry < 0 || retry > MAX_RETRY_AFTER_SECONDS)
      return { kind: 'InvalidRetry' };
  }
  return undefined;
}

/** The answer a forgiven failure stands for (upstream: a default success, no message, no wait). */
export function ignoredFailureAnswer(blocking: boolean): CommonResponse & { retryAfterSeconds?: number } {
  return blocking
    ? { status: 'Success', message: '', retryAfterSeconds: 0 }
    : { status: 'Success', message: '' };
}
