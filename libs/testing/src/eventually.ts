/**
 * Polls `probe` until it returns true (or a non-false value), for level-triggered assertions in
 * integration tests: no sleeps, no timing asserts. Fails with the last error the probe threw.
 */
export async function eventually<T>(
  probe: () => T | false | undefined | Promise<T | false | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== false && value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`${options.message ?? 'condition'} not met within ${timeoutMs} ms${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
