/**
 * A reconcile failure that retrying cannot fix (invalid spec, unsupported combination): the key is not
 * requeued; the error is logged and counted. The object should carry a condition that says why.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function isTerminalError(err: unknown): err is TerminalError {
  return err instanceof TerminalError;
}
