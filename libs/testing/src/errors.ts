/** Raised when the test environment cannot be started; the message says what is missing and how to provide it. */
export class TestEnvironmentError extends Error {
  constructor(
    message: string,
    readonly context: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'TestEnvironmentError';
  }
}
