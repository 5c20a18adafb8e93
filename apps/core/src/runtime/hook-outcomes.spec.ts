import {
  aggregateResponses,
  answerProblem,
  failureIgnored,
  ignoredFailureAnswer,
  lowestNonZero,
} from './hook-outcomes.js';
import { ExtensionCallError, ExtensionConfigError, RuntimeHookError } from './runtime-errors.js';

describe('hook outcomes', () => {
  it('aggregates successes as the lowest non-zero retryAfterSeconds and the messages joined', () => {
    expect(aggregateResponses([])).toEqual({ retryAfterSeconds: 0, message: '' });
    expect(
      aggregateResponses([
        { retryAfterSeconds: 0, message: 'a' },
        { retryAfterSeconds: 30, message: '' },
        { retryAfterSeconds: 5, message: 'c' },
        { retryAfterSeconds: 0 },
      ]),
    ).toEqual({ retryAfterSeconds: 5, message: 'a, c' });
    expect(aggregateResponses([{ message: 'non-blocking' }])).toEqual({
      retryAfterSeconds: 0,
      message: 'non-blocking',
    });
  });

  it('takes 0 as no wait', () => {
    expect(lowestNonZero(0, 7)).toBe(7);
    expect(lowestNonZero(7, 0)).toBe(7);
    expect(lowestNonZero(9, 7)).toBe(7);
    expect(lowestNonZero(0, 0)).toBe(0);
  });

  it('lets failurePolicy Ignore forgive only failures of the call itself', () => {
    const unreachable = new ExtensionCallError('Unreachable', 'unreachable (ECONNREFUSED)');
    const timedOut = new ExtensionCallError('TimedOut', 'timed out after 1s');
    const tls = new ExtensionCallError('TLS', 'TLS handshake failed');
    const badAnswer = new ExtensionCallError('InvalidResponse', 'not JSON');
    for (const error of [unreachable, timedOut, tls, badAnswer]) {
      expect(failureIgnored('Ignore', error)).toBe(true);
      expect(failureIgnored('Fail', error)).toBe(false);
      expect(failureIgnored(undefined, error)).toBe(false);
    }
    // The caller's own abort, a misconfiguration and an explicit Failure are never forgiven.
    expect(failureIgnored('Ignore', new ExtensionCallError('Aborted', 'aborted by the caller'))).toBe(false);
    expect(failureIgnored('Ignore', new ExtensionConfigError('bad caBundle'))).toBe(false);
    expect(failureIgnored('Ignore', new RuntimeHookError('BeforeClusterCreate', 'h.e', 'Failure'))).toBe(
      false,
    );
  });

  it('stands a forgiven failure for a plain success', () => {
    expect(ignoredFailureAnswer(true)).toEqual({ status: 'Success', message: '', retryAfterSeconds: 0 });
    expect(ignoredFailureAnswer(false)).toEqual({ status: 'Success', message: '' });
  });

  it('reads an answer: Success, Failure (with its message), another status, or a bad wait', () => {
    expect(answerProblem({ status: 'Success', retryAfterSeconds: 5 }, true)).toBeUndefined();
    expect(answerProblem({ status: 'Success' }, true)).toBeUndefined();
    expect(answerProblem({ status: 'Success', retryAfterSeconds: 'soon' }, false)).toBeUndefined();
    expect(answerProblem({ status: 'Failure', message: 'no' }, true)).toEqual({
      kind: 'Failure',
      message: 'no',
    });
    expect(answerProblem({ status: 'failure' }, false)).toEqual({ kind: 'UnknownStatus' });
    expect(answerProblem({}, false)).toEqual({ kind: 'UnknownStatus' });
    for (const retry of [-1, 1.5, 'soon', 2 ** 31])
      expect(answerProblem({ status: 'Success', retryAfterSeconds: retry }, true)).toEqual({
        kind: 'InvalidRetry',
      });
  });
});
