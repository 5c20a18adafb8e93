import { pino, type Logger } from 'pino';

/** Polls `check` until it returns a value other than undefined/false; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Tests log nothing unless LOG_LEVEL asks for it. */
export function testLogger(): Logger {
  return pino({ level: process.env['LOG_LEVEL'] ?? 'silent' });
}
