import { pino, type Logger } from 'pino';
import { eventually as pollUntil } from '@capstan/testing';

/** libs/testing's eventually, in the (what, check, timeout) order these tests read best in. */
export function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  return pollUntil(check, { timeoutMs, intervalMs: 25, message: what });
}

/** Tests log nothing unless LOG_LEVEL asks for it. */
export function testLogger(): Logger {
  return pino({ level: process.env['LOG_LEVEL'] ?? 'silent' });
}
